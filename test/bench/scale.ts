// `scale [--pods 10000] [--policies 100] [--period 10] [--quiet 60] [--quick] [--cluster testserver|real]`:
// the compiled operator against the API test server (default) or the real control plane
// (hack/control-plane, needs Go and root) with many pods and policies; one JSON line.
// --no-build runs the dist/ already there; --dist <dir> runs another build (e.g. a copy of an
// older one) without building. --replicas N (> 1) runs N operator processes with --shards=on
// over the policies spread across --namespaces (default 100, at most one per policy), then
// SIGKILLs the one owning the most namespaces and times the handover of its namespaces.
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Benchmark } from "./bench.js";
import { FlagError } from "./flags.js";
import { buildOperator } from "./scale/operator-process.js";
import { runScale, type ScaleOptions } from "./scale/run-scale.js";
import type { ClusterKind } from "./scale/scale-cluster.js";

const FULL = { pods: 10_000, policies: 100, period: 10, quiet: 60 };
const QUICK = { pods: 1_000, policies: 10, period: 10, quiet: 20 };

/** Flags to options; --quick changes the defaults, explicit flags still win. Throws a FlagError naming the flag (the dispatcher prints it with the usage). */
export function parseScaleFlags(args: string[]): Omit<ScaleOptions, "progress"> & { build: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        pods: { type: "string" },
        policies: { type: "string" },
        period: { type: "string" },
        quiet: { type: "string" },
        cluster: { type: "string" },
        quick: { type: "boolean" },
        "no-build": { type: "boolean" },
        dist: { type: "string" },
        replicas: { type: "string" },
        namespaces: { type: "string" },
        "shard-lease-duration": { type: "string" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const cluster = values.cluster ?? "testserver";
  if (cluster !== "testserver" && cluster !== "real")
    throw new FlagError(`--cluster: ${JSON.stringify(values.cluster)}: must be "testserver" or "real"`);
  const defaults = values.quick ? QUICK : FULL;
  const num = (name: keyof typeof FULL | "replicas" | "namespaces", fallback?: number): number => {
    const raw = values[name];
    const n = raw === undefined ? (fallback ?? defaults[name as keyof typeof FULL]) : Number(raw);
    if (!Number.isInteger(n) || n <= 0)
      throw new FlagError(`--${name}: ${JSON.stringify(raw)}: must be a whole number above 0`);
    return n;
  };
  const opts = {
    cluster: cluster as ClusterKind,
    pods: num("pods"),
    policies: num("policies"),
    periodSeconds: num("period"),
    quietSeconds: num("quiet"),
    build: !values["no-build"] && values.dist === undefined,
    ...(values.dist ? { operatorEntry: [join(values.dist, "main.js")] } : {}),
  };
  if (opts.policies > opts.pods)
    throw new FlagError(`--policies: ${opts.policies}: more policies than --pods ${opts.pods}`);
  const replicas = num("replicas", 1);
  // The shape spreads its policies over 100 namespaces; a smaller run has fewer policies than that.
  const namespaces = num("namespaces", replicas > 1 ? Math.min(100, opts.policies) : 1);
  if (namespaces > opts.policies)
    throw new FlagError(`--namespaces: ${namespaces}: more namespaces than --policies ${opts.policies}`);
  if (cluster === "real" && replicas > 1)
    throw new FlagError(`--replicas: ${replicas}: only with --cluster testserver`);
  if (cluster === "real" && namespaces > 1)
    throw new FlagError(`--namespaces: ${namespaces}: only with --cluster testserver`);
  const lease = leaseFlag(values["shard-lease-duration"], replicas);
  return { ...opts, replicas, namespaces, ...(lease === undefined ? {} : { shardLeaseDurationMs: lease }) };
}

/** --shard-lease-duration 15s | 1500ms: the other shard timings are scaled with it (replicas.ts). */
function leaseFlag(raw: string | undefined, replicas: number): number | undefined {
  if (raw === undefined) return undefined;
  if (replicas === 1) throw new FlagError(`--shard-lease-duration: only with --replicas above 1`);
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(raw);
  const ms = m ? Math.round(Number(m[1]) * (m[2] === "s" ? 1000 : 1)) : NaN;
  if (!(ms >= 1000 && ms <= 600_000))
    throw new FlagError(
      `--shard-lease-duration: ${JSON.stringify(raw)}: must be a duration from 1s to 600s, e.g. 15s or 1500ms`,
    );
  return ms;
}

export const scaleBenchmark: Benchmark = {
  name: "scale",
  description:
    "the compiled operator on many pods and policies: cold start, RSS, CPU per probe, writes when quiet, drain time; --replicas N: sharded replicas and a killed one's handover",
  usage:
    "scale [--pods 10000] [--policies 100] [--period 10] [--quiet 60] [--quick] [--no-build] [--dist dist] [--cluster testserver|real] [--replicas 1] [--namespaces 1, with --replicas > 1: 100 or one per policy] [--shard-lease-duration 15s]",
  async run(args) {
    const { build, ...opts } = parseScaleFlags(args);
    if (build) buildOperator();
    const result = await runScale({
      ...opts,
      progress: (line) => console.error(`# ${new Date().toISOString().slice(11, 19)} ${line}`),
    });
    console.log(JSON.stringify(result));
    return result.slicesCorrect ? 0 : 1;
  },
};
