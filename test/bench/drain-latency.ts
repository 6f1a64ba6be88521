// `drain-latency [--pods 20] [--rounds 50]`: the operator in-process on the API test server,
// each pod a real HTTP server. Each round one pod starts failing; the time from the moment the
// operator records the probe result that makes it Unhealthy to the moment a separate watch on
// endpointslices sees its endpoint not ready. The pod is then restored before the next round.
import { performance } from "node:perf_hooks";
import { Watch } from "@kubernetes/client-node";
import type { HealthStore } from "../../operator/src/runtime/health-store.js";
import {
  aPod,
  aPolicy,
  aService,
  kubeConfigFor,
  startTestServerCluster,
  type Obj,
} from "../integration/support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { startTestOperator } from "../integration/support/operator.js";
import { waitFor } from "../support/wait-for.js";
import type { Benchmark } from "./bench.js";
import { numberFlags } from "./flags.js";

export interface DrainLatencyResult {
  rounds: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Where the time goes, in wall-clock ms: operator (result recorded -> slice write arrives at the server), delivery (arrival -> watch event). */
export interface DrainLatencyBreakdown {
  operatorP50Ms: number;
  operatorP99Ms: number;
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  sliceWritesPerRound: number;
  /** 409 answers to the operator's writes during the rounds, by resource. */
  conflicts: Record<string, number>;
}

export async function runDrainLatency(opts: {
  pods: number;
  rounds: number;
}): Promise<DrainLatencyResult & { breakdown: DrainLatencyBreakdown }> {
  // A pod range per process, so the benchmark can run beside the test suites.
  const cluster = await startTestServerCluster({ podCidr: `127.${100 + (process.pid % 150)}.36.0/24` });
  const farm = new PodFarm();
  let stopWatch: (() => void) | undefined;
  let operator: Awaited<ReturnType<typeof startTestOperator>> | undefined;
  try {
    await cluster.create(aService("web", cluster.namespace));
    const names = Array.from({ length: opts.pods }, (_, i) => `web-${String(i).padStart(2, "0")}`);
    for (const n of names) await cluster.create(aPod(n, cluster.namespace));
    const pods = await waitFor(
      async () => {
        const list = await cluster.list("v1", "Pod");
        return list.length === opts.pods && list.every((p) => p.status?.podIP) ? list : undefined;
      },
      { what: "pods with IPs", timeoutMs: 30_000 },
    );
    const byName = new Map(
      pods.map((p) => [p.metadata!.name!, { uid: p.metadata!.uid as string, ip: p.status.podIP as string }]),
    );
    for (const p of byName.values()) await farm.serve(p.ip);
    await cluster.create(
      aPolicy("web", cluster.namespace, {
        periodSeconds: 1,
        timeoutSeconds: 1,
        failureThreshold: 1,
        successThreshold: 1,
        maxUnhealthyPercent: 50,
      }),
    );
    operator = await startTestOperator(cluster.server);

    // When the operator records the result that turns a pod Unhealthy (performance.now() clock).
    const unhealthyAt = new Map<string, { at: number; wall: number }>();
    hookUnhealthyTransitions(operator.health, (uid) =>
      unhealthyAt.set(uid, { at: performance.now(), wall: Date.now() }),
    );

    // Readiness per pod as a separate client sees it, with the time of the change.
    const ready = new Map<string, { ready: boolean; at: number; wall: number }>();
    const watch = new Watch(kubeConfigFor(cluster.server, "bench-watch"));
    const controller = await watch.watch(
      `/apis/discovery.k8s.io/v1/namespaces/${cluster.namespace}/endpointslices`,
      {},
      (_type: string, slice: Obj) => {
        const at = performance.now();
        const wall = Date.now();
        for (const e of slice.endpoints ?? []) {
          const name = e.targetRef?.name as string;
          const r = e.conditions?.ready === true;
          if (ready.get(name)?.ready !== r) ready.set(name, { ready: r, at, wall });
        }
      },
      () => undefined,
    );
    stopWatch = () => controller.abort();

    await waitFor(
      () =>
        names.every((n) => ready.get(n)?.ready === true) &&
        operator!.health.get("shop/web", byName.get(names[0]!)!.uid)?.state === "Healthy",
      {
        what: "every endpoint ready",
        timeoutMs: 30_000,
      },
    );
    // Every pod Healthy before the rounds start, so no fail-open or Unknown state muddles them.
    await waitFor(() => names.every((n) => operator!.health.get("shop/web", byName.get(n)!.uid)?.state === "Healthy"), {
      what: "every pod Healthy",
      timeoutMs: 30_000,
    });

    const latencies: number[] = [];
    const operatorMs: number[] = [];
    const deliveryMs: number[] = [];
    const sliceWrites = () =>
      cluster.server.requestLog.filter(
        (e) => e.user === "operator" && e.resource === "endpointslices" && e.method !== "GET",
      );
    const writesBefore = sliceWrites().length;
    const logBefore = cluster.server.requestLog.length;
    for (let round = 0; round < opts.rounds; round++) {
      const name = names[round % names.length]!;
      const pod = byName.get(name)!;
      unhealthyAt.delete(pod.uid);
      farm.failing(pod.ip);
      const drained = await waitFor(() => (ready.get(name)?.ready === false ? ready.get(name)! : undefined), {
        what: `${name} drained`,
        timeoutMs: 10_000,
      });
      const recorded = unhealthyAt.get(pod.uid);
      if (recorded === undefined)
        throw new Error(`round ${round}: ${name} drained without an Unhealthy transition being recorded`);
      latencies.push(drained.at - recorded.at);
      const write = sliceWrites().find((e) => Date.parse(e.time) >= recorded.wall - 1);
      if (write) {
        operatorMs.push(Date.parse(write.time) - recorded.wall);
        deliveryMs.push(drained.wall - Date.parse(write.time));
      }
      farm.healthy(pod.ip);
      await waitFor(
        () => ready.get(name)?.ready === true && operator!.health.get("shop/web", pod.uid)?.state === "Healthy",
        { what: `${name} restored`, timeoutMs: 10_000 },
      );
    }
    const conflicts: Record<string, number> = {};
    for (const e of cluster.server.requestLog.slice(logBefore)) {
      if (e.user !== "operator" || e.code !== 409) continue;
      const what = e.subresource ? `${e.resource}/${e.subresource}` : e.resource;
      conflicts[what] = (conflicts[what] ?? 0) + 1;
    }
    const q = (xs: number[], p: number) => summarise(xs)[p === 0.5 ? "p50Ms" : "p99Ms"];
    const breakdown: DrainLatencyBreakdown = {
      operatorP50Ms: q(operatorMs, 0.5),
      operatorP99Ms: q(operatorMs, 0.99),
      deliveryP50Ms: q(deliveryMs, 0.5),
      deliveryP99Ms: q(deliveryMs, 0.99),
      sliceWritesPerRound: Math.round(((sliceWrites().length - writesBefore) / Math.max(1, opts.rounds)) * 100) / 100,
      conflicts,
    };
    return { ...summarise(latencies), breakdown };
  } finally {
    stopWatch?.();
    await operator?.stop();
    await farm.close();
    await cluster.stop();
  }
}

/** Calls `onUnhealthy(uid)` right after the store records a result that turns a pod Unhealthy. */
function hookUnhealthyTransitions(health: HealthStore, onUnhealthy: (uid: string) => void): void {
  const record = health.record.bind(health);
  health.record = (policy, uid, outcome) => {
    const before = health.get(policy, uid)?.state;
    const changed = record(policy, uid, outcome);
    if (before !== "Unhealthy" && health.get(policy, uid)?.state === "Unhealthy") onUnhealthy(uid);
    return changed;
  };
}

function summarise(latencies: number[]): DrainLatencyResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  const round1 = (n: number) => Math.round(n * 10) / 10;
  return {
    rounds: sorted.length,
    p50Ms: round1(at(0.5)),
    p99Ms: round1(at(0.99)),
    maxMs: round1(sorted[sorted.length - 1] ?? NaN),
  };
}

export const drainLatencyBenchmark: Benchmark = {
  name: "drain-latency",
  description: "time from the probe result that makes a pod Unhealthy to its endpoint seen not ready",
  usage: "drain-latency [--pods 20] [--rounds 50]",
  async run(args) {
    const flags = numberFlags(args, { pods: 20, rounds: 50 });
    const { breakdown, ...result } = await runDrainLatency({ pods: flags.pods, rounds: flags.rounds });
    console.log(JSON.stringify(result));
    // Where the time went, for a slow run; stdout stays the one result line.
    console.error(JSON.stringify({ breakdown }));
  },
};
