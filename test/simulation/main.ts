// npm run simulate -- --seeds N [--seed S] [--steps K] [--shards on|off] [--verbose]
//                     [--cluster real [--history-ms MS] [--plant no-drain-cap]]
// Runs N seeds (S, S+1, ...) of the whole-system simulation and checks every invariant; a
// failing seed prints its replay command, the invariant, the step and the evidence. --cluster real
// runs them on the real control plane through the fault proxy, on the wall clock (real-cluster.ts).
import { parseArgs } from "node:util";
import { runRealSeeds } from "./real-cluster.js";
import { replayCommand, runSeed } from "./runner.js";

const DEFAULT_STEPS = 30;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got "${value}"`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seeds: { type: "string" },
      seed: { type: "string" },
      steps: { type: "string" },
      verbose: { type: "boolean", default: false },
      cluster: { type: "string", default: "test-server" },
      "history-ms": { type: "string" },
      plant: { type: "string" },
      shards: { type: "string" },
    },
  });
  const first = positiveInt("seed", values.seed, 1);
  const seeds = positiveInt("seeds", values.seeds, 1);
  if (values.plant !== undefined && values.plant !== "no-drain-cap")
    throw new Error(`--plant knows only "no-drain-cap", got "${values.plant}"`);
  if (values.cluster === "real") {
    const historyMs = positiveInt("history-ms", values["history-ms"], 30_000);
    const failed = await runRealSeeds({
      first,
      seeds,
      historyMs,
      ...(values.plant ? { plant: "no-drain-cap" as const } : {}),
      log: (l) => console.log(l),
    });
    return failed > 0 ? 1 : 0;
  }
  if (values.cluster !== "test-server")
    throw new Error(`--cluster must be "real" or "test-server", got "${values.cluster}"`);
  if (values.plant !== undefined) throw new Error("--plant needs --cluster real");
  const steps = positiveInt("steps", values.steps, DEFAULT_STEPS);
  const shards = values.shards;
  if (shards !== undefined && shards !== "on" && shards !== "off")
    throw new Error(`--shards must be "on" or "off", got "${shards}"`);
  let failed = 0;
  const began = performance.now();
  for (let seed = first; seed < first + seeds; seed++) {
    const r = await runSeed({
      seed,
      steps,
      ...(shards ? { shards } : {}),
      ...(values.verbose ? { trace: (l: string) => console.log(l) } : {}),
    });
    const tag = `seed ${seed} (${r.shardSlots > 0 ? `shards, ${r.shardSlots} slots, ${r.otherNamespaces} other namespaces, ${r.markerChanges} marker changes (${r.releases} releases), ${r.shardWrites} writes judged` : r.leaderElect ? "2 replicas" : "1 replica"}, ${r.replicas} incarnations, ${r.failpointCrashes} failpoint crashes, ${r.evictions} evictions, ${(r.realMs / 1000).toFixed(1)} s, ${r.settle.ticks} ticks, ${r.settle.unsettled} unsettled, ${(r.settle.quietMs / 1000).toFixed(1)} s waiting for quiet of which ${(r.settle.probeWaitMs / 1000).toFixed(1)} s on probes in flight)`;
    if (r.violations.length === 0) {
      console.log(`ok   ${tag}`);
      continue;
    }
    failed++;
    console.log(`FAIL ${tag}  replay: ${replayCommand(seed, steps, shards)}`);
    for (const v of r.violations) {
      const action =
        v.step >= 1 && v.step <= r.actions.length ? r.actions[v.step - 1] : v.step === 0 ? "initial state" : "settled";
      console.log(`  ${v.invariant} at step ${v.step} (${action}): ${v.evidence}`);
    }
  }
  const total = (performance.now() - began) / 1000;
  console.log(
    `${seeds} seeds, ${failed} failing, ${total.toFixed(1)} s (${(total / Math.max(1, seeds)).toFixed(1)} s per seed)`,
  );
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
