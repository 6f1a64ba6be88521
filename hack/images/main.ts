// Builds the project's images as reproducible OCI archives, and imports them into a containerd.
//   npx tsx hack/images/main.ts build <name...>                        writes .scratch/images/<name>.tar
//   npx tsx hack/images/main.ts import --address <containerd.sock> <name...>   builds, then imports into k8s.io
//   npx tsx hack/images/main.ts list                                    the names
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { IMAGES, SCRATCH } from "./images.js";
import { buildImage } from "./oci.js";

interface Built {
  name: string;
  path: string;
  image: string;
  digest: string;
}

function build(name: string): Built {
  const def = IMAGES[name];
  if (!def) throw new Error(`image ${JSON.stringify(name)}: unknown; known: ${Object.keys(IMAGES).join(", ")}`);
  const spec = def.spec();
  const { archive, digest } = buildImage(spec);
  mkdirSync(SCRATCH, { recursive: true });
  const path = join(SCRATCH, `${name}.tar`);
  // Written beside and renamed, so a reader never sees half an archive.
  writeFileSync(`${path}.tmp`, archive);
  renameSync(`${path}.tmp`, path);
  return { name, path, image: spec.name, digest };
}

function importInto(address: string, built: Built): void {
  execFileSync("ctr", ["-a", address, "-n", "k8s.io", "images", "import", built.path], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

function usage(): never {
  process.stderr.write(
    "usage: main.ts build <name...> | main.ts import --address <containerd.sock> <name...> | main.ts list\n" +
      Object.entries(IMAGES)
        .map(([n, d]) => `  ${n.padEnd(13)} ${d.describe}\n`)
        .join(""),
  );
  process.exit(2);
}

function main(argv: string[]): void {
  const [command, ...rest] = argv;
  if (command === "list") {
    for (const [name, def] of Object.entries(IMAGES)) process.stdout.write(`${name}\t${def.describe}\n`);
    return;
  }
  let address: string | undefined;
  const names: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--address") address = rest[++i];
    else if (arg.startsWith("--address=")) address = arg.slice("--address=".length);
    else if (arg.startsWith("-")) throw new Error(`flag ${arg}: unknown`);
    else names.push(arg);
  }
  if ((command !== "build" && command !== "import") || names.length === 0) usage();
  if (command === "import" && !address) throw new Error("flag --address: required for import (containerd's socket)");
  for (const name of names) {
    const built = build(name);
    if (command === "import") importInto(address!, built);
    process.stdout.write(`${built.path}\t${built.image}\t${built.digest}${command === "import" ? "\timported" : ""}\n`);
  }
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`images: ${(err as Error).message}\n`);
  process.exit(1);
}
