// The scale benchmark's run: a cluster with the objects, one pod server, the compiled operator
// in a process of its own, then cold start, a quiet steady state, a restart and 10 % of the
// pods turning unhealthy, each measured from outside the operator. The cluster is the API test
// server (testserver-cluster.ts) or the real control plane (real-cluster.ts). With several
// replicas (replicas.ts) the restart gives way to a SIGKILLed replica and its namespaces' handover.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../../support/paths.js";
import { waitFor } from "../../support/wait-for.js";
import { memoryOf, type OperatorProcess } from "./operator-process.js";
import { measureProbeFloor } from "./pod-server-process.js";
import { isLeaseWrite, measureQuiet, probesOf, round, scrape, sleep, type QuietFigures } from "./quiet-window.js";
import { startRealCluster } from "./real-cluster.js";
import { killAndRebalance, replicaFigures, shardsSettled, shardTimings, startOperators } from "./replicas.js";
import { countWrites, range, type ClusterKind, type ScaleCluster } from "./scale-cluster.js";
import {
  FAILURE_THRESHOLD,
  namespaceNames,
  probeTimeoutSeconds,
  podName,
  serviceName,
  serviceOfPod,
  type ScaleShape,
} from "./scale-objects.js";
import type { ScaleResult } from "./scale-result.js";
import { startTestServerCluster } from "./testserver-cluster.js";
import { trackSlices, type SliceTracker, type WantedEndpoints } from "./slice-tracker.js";

export type { ScaleResult } from "./scale-result.js";

export interface ScaleOptions {
  pods: number;
  policies: number;
  periodSeconds: number;
  /** Length of the quiet window in which writes are counted and CPU, probes and RSS measured. */
  quietSeconds: number;
  /** Default testserver. */
  cluster?: ClusterKind;
  /** Node arguments that start the operator, default ["dist/main.js"]: another build can be measured on the same machine state. */
  operatorEntry?: string[];
  /** Progress lines (stderr in the command). */
  progress?: (line: string) => void;
  /** Operator processes, default 1 (no shards); more run with --shards=on (the test server only). */
  replicas?: number;
  /** Namespaces the policies spread over round-robin, default 1 (`scale` itself). */
  namespaces?: number;
  /** With replicas: the shard Lease duration, the other shard timings scaled with it; default the operator's. */
  shardLeaseDurationMs?: number;
}

const MB = 1024 * 1024;
const loadNow = () => loadavg().map((l) => round(l, 2));

/** One run's cluster, objects and operator, shared by its phases. */
interface Run {
  opts: ScaleOptions;
  cluster: ScaleCluster;
  shape: ScaleShape;
  slices: SliceTracker;
  log: (line: string) => void;
  logDir: string;
  /** Where the kubeconfigs are. */
  dir: string;
  deadlineMs: number;
  /** The operator processes running now: stopped at the end whatever happened. */
  operators: OperatorProcess[];
}

export async function runScale(opts: ScaleOptions): Promise<ScaleResult> {
  const log = opts.progress ?? (() => undefined);
  const loadStart = loadNow();
  const kind = opts.cluster ?? "testserver";
  const start = kind === "real" ? startRealCluster : startTestServerCluster;
  const shape: ScaleShape = {
    namespace: "scale",
    namespaces: opts.namespaces ?? 1,
    pods: opts.pods,
    policies: opts.policies,
    periodSeconds: opts.periodSeconds,
    port: 0,
  };
  const cluster = await start({ namespace: "scale", pods: opts.pods, namespaces: namespaceNames(shape) });
  shape.port = cluster.podServer.port;
  const dir = mkdtempSync(join(tmpdir(), "scale-bench-"));
  // The operator's logs stay after the run, for a look at what it did.
  const logDir = join(repoRoot, ".scratch", "bench-scale", String(process.pid));
  mkdirSync(logDir, { recursive: true });
  cluster.writeOperatorKubeconfig(join(dir, "kubeconfig"));
  let run: Run | undefined;
  try {
    const podsStartedMs = await cluster.createObjects(shape, log);
    // One namespace: its slices, as always; several: every namespace's.
    const slices = await trackSlices(cluster.watchKubeConfig(), shape.namespaces === 1 ? shape.namespace : undefined);
    const deadlineMs = Math.max(120_000, opts.periodSeconds * 1000 * 6 + opts.pods * 10);
    run = { opts, cluster, shape, slices, log, logDir, dir, deadlineMs, operators: [] };
    // It returns once the operator's writes have stopped for 5 s (writesDrained).
    const cold = await coldStart(run);
    const steady = await measureQuiet(cluster, run.operators, opts.quietSeconds);
    log(`quiet window: ${JSON.stringify(steady.quiet)}`);
    const lags = await Promise.all(
      run.operators.map(
        async (o) =>
          ((await (await fetch(o.debugUrl)).json()) as { scheduler?: { lagP99Ms?: number } }).scheduler?.lagP99Ms ??
          NaN,
      ),
    );
    const several = run.operators.length > 1;
    const restart = several ? undefined : await restartOperator(run);
    const rebalance = several ? await killAndRebalance(run) : undefined;
    const unhealthy = await turnUnhealthy(run);
    const shards =
      rebalance && cold.shardsSettledMs !== undefined
        ? {
            timings: shardTimings(opts.shardLeaseDurationMs),
            settledMs: cold.shardsSettledMs,
            perReplica: replicaFigures(steady.perOperator, steady.quiet.seconds),
            rebalance,
          }
        : undefined;
    return {
      // The worst replica's lag: a schedule is only kept if every replica keeps its share of it.
      ...resultOf(run, { loadStart, podsStartedMs, cold, steady, lagP99Ms: Math.max(...lags), restart, unhealthy }),
      slicesCorrect: slices.matches(wantedEndpoints(cluster, shape, unhealthy.failing)),
      ...(shards ? { shards } : {}),
    };
  } catch (err) {
    for (const o of run?.operators ?? []) console.error(`${o.tail().slice(-10).join("\n")}`);
    console.error(`(the operator's logs are in ${logDir})`);
    throw err;
  } finally {
    // The operator's writes stay beside its logs: time, verb, object and response code.
    const writes = await cluster.operatorWrites().catch(() => []);
    writeFileSync(join(logDir, "operator-writes.jsonl"), writes.map((w) => JSON.stringify(w)).join("\n") + "\n");
    run?.slices.stop();
    await Promise.all(run?.operators.map((o) => o.stop()) ?? []);
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures every run has, in the JSON line's order. */
function resultOf(
  run: Run,
  r: {
    loadStart: number[];
    podsStartedMs: number;
    cold: Awaited<ReturnType<typeof coldStart>>;
    steady: QuietFigures;
    lagP99Ms: number;
    restart: ScaleResult["restart"];
    unhealthy: Awaited<ReturnType<typeof turnUnhealthy>>;
  },
): Omit<ScaleResult, "slicesCorrect" | "shards"> {
  const { opts } = run;
  const { cold, steady, unhealthy } = r;
  return {
    benchmark: "scale",
    cluster: run.cluster.kind,
    ...(run.cluster.kind === "real" ? { writesFrom: "audit log" as const } : {}),
    pods: opts.pods,
    policies: opts.policies,
    replicas: opts.replicas ?? 1,
    namespaces: run.shape.namespaces ?? 1,
    periodSeconds: opts.periodSeconds,
    probe: { timeoutSeconds: probeTimeoutSeconds(opts.periodSeconds), failureThreshold: FAILURE_THRESHOLD },
    load: { start: r.loadStart, end: loadNow() },
    podsStartedMs: r.podsStartedMs,
    coldStartMs: cold.coldStartMs,
    rssMB: { steady: round(steady.rssSteady / MB), peak: round(steady.rssPeak / MB) },
    cpuPerProbeUs: steady.cpuPerProbeUs,
    // With several replicas each one's is in shards.perReplica.
    ...(steady.perOperator.length === 1
      ? { cpuByThread: steady.perOperator[0]!.cpuByThread, wakeupsPerSecond: steady.perOperator[0]!.wakeupsPerSecond }
      : {}),
    probeFloor: {
      cpuPerProbeUs: cold.floor.cpuPerProbeUs,
      probesPerSecond: cold.floor.probesPerSecond,
      failures: cold.floor.failures,
    },
    probesPerSecond: steady.probesPerSecond,
    scheduledProbesPerSecond: round(opts.pods / opts.periodSeconds),
    scheduleLagP99Ms: r.lagP99Ms,
    reconcileP99Ms: steady.reconcileP99Ms,
    reconciles: steady.reconciles,
    quietReconciles: steady.quietReconciles,
    quiet: steady.quiet,
    coldFirstRoundMs: cold.coldFirstRoundMs,
    statusSettledMs: cold.statusSettledMs,
    ...(r.restart ? { restart: r.restart } : {}),
    unhealthy: {
      pods: unhealthy.failing.size,
      convergeMs: unhealthy.convergeMs,
      rssPeakMB: round(unhealthy.peak / MB),
    },
  };
}

/** Until the slices are as wanted; the error says what still differs. */
function converged(run: Run, wanted: WantedEndpoints, what: string): Promise<unknown> {
  return waitFor(() => run.slices.matches(wanted), { what, timeoutMs: run.deadlineMs, intervalMs: 100 }).catch(
    async (err: Error) => {
      throw new Error(
        `${err.message}; still different: ${run.slices.differences(wanted).slice(0, 5).join("; ")}; pod server ${JSON.stringify(await run.cluster.podServer.served())}`,
      );
    },
  );
}

/** The probe engine's floor, then the operator from nothing until every slice is right. */
async function coldStart(run: Run) {
  const { opts, cluster, log } = run;
  const rate = Math.max(1, Math.round(opts.pods / opts.periodSeconds));
  log(`the probe engine alone at ${rate} probes/s`);
  const floor = await measureProbeFloor(
    cluster.podServer.port,
    cluster
      .runningPods()
      .map((p) => p.ip)
      .slice(0, rate),
    rate,
    8,
  );
  log(`floor: ${JSON.stringify(floor)}`);
  const n = opts.replicas ?? 1;
  log(
    `starting ${n === 1 ? "the operator" : `${n} replicas`} (${opts.pods} pods, ${opts.policies} policies in ${run.shape.namespaces ?? 1} namespaces, period ${opts.periodSeconds}s)`,
  );
  const started = performance.now();
  const operators = (run.operators = await startOperators(run, "cold"));
  const coldRound = firstRound(operators, opts.pods, started, run.deadlineMs);
  await converged(
    run,
    wantedEndpoints(cluster, run.shape, new Set()),
    "every Service's slices to be right after a cold start",
  );
  const coldStartMs = Math.round(performance.now() - started);
  const coldFirstRoundMs = await coldRound;
  log(`cold start: ${coldStartMs} ms`);
  // Slices are right early (serving pods are adopted while Unknown); the quiet window waits for
  // every policy's status to say all its pods are Healthy, so it measures a settled operator.
  await waitFor(async () => (await cluster.policyStatuses()).every((p) => allHealthy(p.status)), {
    what: "every policy's status to show all its pods Healthy",
    timeoutMs: run.deadlineMs,
    intervalMs: 1_000,
  });
  const statusSettledMs = Math.round(performance.now() - started);
  log(`statuses settled: ${statusSettledMs} ms`);
  let shardsSettledMs: number | undefined;
  if (n > 1) {
    await shardsSettled(cluster, run.shape, operators, run.deadlineMs);
    shardsSettledMs = Math.round(performance.now() - started);
    log(`shards settled: ${shardsSettledMs} ms`);
  }
  await writesDrained(run);
  return { floor, coldStartMs, coldFirstRoundMs, statusSettledMs, shardsSettledMs };
}

/**
 * Waits (two periods at most) until the operator's last write is 5 s old: Events of the start
 * still queued behind the recorder's write cap are the start's, not the quiet window's. Writes
 * that never stop do not wait longer; the window counts them.
 */
async function writesDrained(run: Run): Promise<void> {
  const quietFor = 5_000;
  const until = performance.now() + 2 * run.opts.periodSeconds * 1000;
  for (;;) {
    // Shard Lease renewals go on all the time: only the writes about the objects count.
    const last = (await run.cluster.operatorWrites()).filter((w) => !isLeaseWrite(w)).at(-1);
    const age = last ? Date.now() - Date.parse(last.time) : Infinity;
    if (age >= quietFor || performance.now() >= until) return;
    await sleep(Math.min(1_000, quietFor - age));
  }
}

function allHealthy(status: Record<string, unknown> | undefined): boolean {
  return (
    status !== undefined &&
    typeof status.targets === "number" &&
    status.targets > 0 &&
    status.healthy === status.targets
  );
}

/** A restart against slices and status that are already right. */
async function restartOperator(run: Run): Promise<NonNullable<ScaleResult["restart"]>> {
  const { opts, cluster, log } = run;
  log("restarting the operator");
  const shutdown = await run.operators[0]!.stop();
  run.operators = [];
  const writesMark = (await cluster.operatorWrites()).length;
  const started = performance.now();
  const operators = (run.operators = await startOperators(run, "restart"));
  const firstRoundMs = await firstRound(operators, opts.pods, started, run.deadlineMs);
  await converged(run, wantedEndpoints(cluster, run.shape, new Set()), "slices to stay right after a restart");
  const windowSeconds = opts.periodSeconds * 2 + 2;
  await sleep(Math.max(0, started + windowSeconds * 1000 - performance.now()));
  const writes = countWrites((await cluster.operatorWrites()).slice(writesMark));
  log(`restart: ${JSON.stringify(writes)}`);
  return { shutdownMs: shutdown.ms, shutdownKilled: shutdown.killed, firstRoundMs, ...writes, windowSeconds };
}

/** 10 % of each Service's pods start failing: until they are drained. */
async function turnUnhealthy(run: Run): Promise<{ failing: Set<string>; convergeMs: number | null; peak: number }> {
  const failing = failingPods(run.cluster, run.shape);
  await run.cluster.podServer.setFailing(failing);
  const started = performance.now();
  // Not fatal: a machine too busy for its probes (timeouts) keeps some slices moving; the line says so.
  const convergeMs = await converged(
    run,
    wantedEndpoints(run.cluster, run.shape, failing),
    "the failing pods to be drained",
  ).then(
    () => Math.round(performance.now() - started),
    (err: Error) => {
      run.log(err.message);
      return null;
    },
  );
  // Several replicas: summed over the live ones, as the quiet window's RSS is.
  const peak = run.operators.reduce((n, o) => n + memoryOf(o.pid).hwm, 0);
  run.log(`unhealthy: ${failing.size} pods drained in ${convergeMs} ms`);
  return { failing, convergeMs, peak };
}

function wantedEndpoints(cluster: ScaleCluster, shape: ScaleShape, failing: ReadonlySet<string>): WantedEndpoints {
  const wanted: WantedEndpoints = new Map(
    range(shape.policies).map((i) => [serviceName(i), new Map<string, boolean>()]),
  );
  for (const p of cluster.runningPods())
    wanted.get(serviceOfPod(shape, Number(p.name.slice("pod-".length))))!.set(p.ip, !failing.has(p.ip));
  return wanted;
}

/** A tenth of each Service's pods (at least one where it has two or more), well within its 50 % cap. */
function failingPods(cluster: ScaleCluster, shape: ScaleShape): Set<string> {
  const ipByName = new Map(cluster.runningPods().map((p) => [p.name, p.ip]));
  const out = new Set<string>();
  for (let s = 0; s < shape.policies; s++) {
    const members = range(shape.pods).filter((i) => i % shape.policies === s);
    const n = members.length < 2 ? 0 : Math.max(1, Math.floor(members.length / 10));
    for (const i of members.slice(0, n)) out.add(ipByName.get(podName(i))!);
  }
  return out;
}

/** Ms from `since` until the operators have run at least as many probes as there are pods (looked at once a second: each look formats every metric of the operator, which at 500 policies costs it CPU). */
async function firstRound(
  operators: readonly OperatorProcess[],
  pods: number,
  since: number,
  timeoutMs: number,
): Promise<number> {
  const probes = async () => (await Promise.all(operators.map(scrape))).reduce((n, s) => n + probesOf(s), 0);
  await waitFor(async () => (await probes()) >= pods, {
    what: `${pods} probes`,
    timeoutMs,
    intervalMs: 1_000,
  });
  return Math.round(performance.now() - since);
}
