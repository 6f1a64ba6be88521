// `kubelet [--pods 10000] [--mode both|replicaset|bare]`: how long the API test server's kubelet
// stand-in takes to start many pods, from the first create until every pod is Running with an
// address and Ready; one JSON line. A ReplicaSet of that many replicas (the test server's
// ReplicaSet controller creates the pods), and bare pods created over HTTP as the scale
// benchmark creates them, each on a test server of its own.
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { aReplicaSet, startTestServerCluster } from "../integration/support/cluster.js";
import { waitFor } from "../support/wait-for.js";
import type { Benchmark } from "./bench.js";
import { FlagError } from "./flags.js";
import { waitForRunningPods } from "./pods-running.js";
import { createAll, pod, type ScaleShape } from "./scale/scale-objects.js";

export type KubeletMode = "replicaset" | "bare";

export interface KubeletModeResult {
  /** First create until every pod is Running with an address and Ready. */
  runningMs: number;
  /** Successful pod status writes until then (the kubelet's one per pod, and any others). */
  statusWrites: number;
  /** CPU time of this process (server, controllers, clients) meanwhile: on a busy machine less than wall-clock time would allow. */
  cpuMs: number;
  /** replicaset: until the ReplicaSet's status says every replica is ready. */
  replicaSetReadyMs?: number;
}

export interface KubeletResult {
  benchmark: "kubelet";
  pods: number;
  /** Load averages (1, 5, 15 min) at the start and end: wall-clock figures depend on the machine's other work. */
  load: { start: number[]; end: number[] };
  replicaSet?: KubeletModeResult;
  bare?: KubeletModeResult;
}

const NAMESPACE = "kubelet-bench";
const loadNow = () => loadavg().map((l) => Math.round(l * 100) / 100);

/** Flags to options; throws a FlagError naming the flag. */
export function parseKubeletFlags(args: string[]): { pods: number; modes: KubeletMode[] } {
  let values: { pods?: string; mode?: string };
  try {
    ({ values } = parseArgs({
      args,
      options: { pods: { type: "string" }, mode: { type: "string" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new FlagError((err as Error).message);
  }
  const pods = values.pods === undefined ? 10_000 : Number(values.pods);
  if (!Number.isInteger(pods) || pods <= 0 || pods > 65_000)
    throw new FlagError(`--pods: ${JSON.stringify(values.pods)}: must be a whole number from 1 to 65000`);
  const mode = values.mode ?? "both";
  if (mode !== "both" && mode !== "replicaset" && mode !== "bare")
    throw new FlagError(`--mode: ${JSON.stringify(mode)}: must be both, replicaset or bare`);
  return { pods, modes: mode === "both" ? ["replicaset", "bare"] : [mode] };
}

export async function runKubelet(opts: {
  pods: number;
  modes: KubeletMode[];
  progress?: (line: string) => void;
}): Promise<KubeletResult> {
  const result: KubeletResult = { benchmark: "kubelet", pods: opts.pods, load: { start: loadNow(), end: [] } };
  for (const mode of opts.modes) {
    opts.progress?.(`${mode}: starting ${opts.pods} pods`);
    const r = await runMode(mode, opts.pods);
    opts.progress?.(`${mode}: ${JSON.stringify(r)}`);
    if (mode === "replicaset") result.replicaSet = r;
    else result.bare = r;
  }
  result.load.end = loadNow();
  return result;
}

async function runMode(mode: KubeletMode, pods: number): Promise<KubeletModeResult> {
  // A /16 of its own beside the scale benchmark's and the test suites' ranges; nothing listens on it.
  const podCidr = `127.${10 + (process.pid % 40)}.0.0/16`;
  const cluster = await startTestServerCluster({
    podCidr,
    namespace: NAMESPACE,
    controllers: mode === "replicaset",
    watchHistory: 5000,
  });
  const timeoutMs = 60_000 + pods * 20;
  try {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    let replicaSetReady: Promise<number> | undefined;
    if (mode === "replicaset") {
      await cluster.create(aReplicaSet("web", NAMESPACE, pods));
      replicaSetReady = waitFor(
        () =>
          cluster.server.store.get({ group: "apps", version: "v1", resource: "replicasets" }, NAMESPACE, "web")?.status
            ?.readyReplicas === pods,
        { what: "the ReplicaSet's readyReplicas", timeoutMs, intervalMs: 100 },
      ).then(() => Math.round(performance.now() - started));
    } else {
      const shape: ScaleShape = { namespace: NAMESPACE, pods, policies: 1, periodSeconds: 10, port: 8080 };
      await createAll(
        cluster.server.url,
        "admin",
        Array.from({ length: pods }, (_, i) => ({ path: `/api/v1/namespaces/${NAMESPACE}/pods`, body: pod(shape, i) })),
      );
    }
    const statusWrites = await waitForRunningPods(cluster.server, NAMESPACE, pods, timeoutMs);
    const runningMs = Math.round(performance.now() - started);
    const cpu = process.cpuUsage(cpuBefore);
    return {
      runningMs,
      statusWrites,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      ...(replicaSetReady ? { replicaSetReadyMs: await replicaSetReady } : {}),
    };
  } finally {
    await cluster.stop();
  }
}

export const kubeletBenchmark: Benchmark = {
  name: "kubelet",
  description:
    "the API test server's kubelet stand-in: creating many pods (by a ReplicaSet, and bare) until all run with an address and Ready",
  usage: "kubelet [--pods 10000] [--mode both|replicaset|bare]",
  async run(args) {
    const opts = parseKubeletFlags(args);
    const result = await runKubelet({
      ...opts,
      progress: (line) => console.error(`# ${new Date().toISOString().slice(11, 19)} ${line}`),
    });
    console.log(JSON.stringify(result));
  },
};
