// Benchmark dispatcher: `tsx test/bench/main.ts <name> [flags]`, or `all` for every registered one.
import { FlagError } from "./flags.js";
import { benchmarks } from "./registry.js";

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === "--help" || name === "-h") {
    console.log("usage: npm run bench -- <name> [flags] | all\n");
    for (const b of benchmarks) console.log(`  ${b.name.padEnd(18)} ${b.description}\n  ${"".padEnd(18)} ${b.usage}`);
    return name ? 0 : 2;
  }
  if (name === "all") {
    let worst = 0;
    for (const b of benchmarks) {
      console.error(`# ${b.name}`);
      worst = Math.max(worst, (await b.run([])) ?? 0);
    }
    return worst;
  }
  const bench = benchmarks.find((b) => b.name === name);
  if (!bench) {
    console.error(`unknown benchmark ${JSON.stringify(name)}; known: ${benchmarks.map((b) => b.name).join(", ")}, all`);
    return 2;
  }
  const usage = `usage: npm run bench -- ${bench.usage}`;
  if (args.includes("--help") || args.includes("-h")) {
    console.log(`${bench.description}\n${usage}`);
    return 0;
  }
  try {
    return (await bench.run(args)) ?? 0;
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    console.error(`${err.message}\n${usage}`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
