// `scale [--pods 10000] [--policies 100] [--period 10] [--quiet 60] [--quick] [--cluster testserver|real]`:
// the compiled operator against the API test server (default) or the real control plane
// (hack/control-plane, needs Go and root) with many pods and policies; one JSON line.
// --no-build runs the dist/ already there; --dist <dir> runs another build (e.g. a copy of an
// older one) without building.
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Benchmark } from "./bench.js";
import { buildOperator } from "./scale/operator-process.js";
import { runScale, type ScaleOptions } from "./scale/run-scale.js";
import type { ClusterKind } from "./scale/scale-cluster.js";

const FULL = { pods: 10_000, policies: 100, period: 10, quiet: 60 };
const QUICK = { pods: 1_000, policies: 10, period: 10, quiet: 20 };

/** Flags to options; --quick changes the defaults, explicit flags still win. Throws naming the flag. */
export function parseScaleFlags(args: string[]): Omit<ScaleOptions, "progress"> & { build: boolean } {
  const { values } = parseArgs({
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
    },
    strict: true,
    allowPositionals: false,
  });
  const cluster = values.cluster ?? "testserver";
  if (cluster !== "testserver" && cluster !== "real")
    throw new Error(`--cluster: ${JSON.stringify(values.cluster)}: must be "testserver" or "real"`);
  const defaults = values.quick ? QUICK : FULL;
  const num = (name: keyof typeof FULL): number => {
    const raw = values[name];
    const n = raw === undefined ? defaults[name] : Number(raw);
    if (!Number.isInteger(n) || n <= 0)
      throw new Error(`--${name}: ${JSON.stringify(raw)}: must be a whole number above 0`);
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
    throw new Error(`--policies: ${opts.policies}: more policies than --pods ${opts.pods}`);
  return opts;
}

export const scaleBenchmark: Benchmark = {
  name: "scale",
  description:
    "the compiled operator on many pods and policies: cold start, RSS, CPU per probe, writes when quiet, drain time",
  usage:
    "scale [--pods 10000] [--policies 100] [--period 10] [--quiet 60] [--quick] [--no-build] [--dist dist] [--cluster testserver|real]",
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
