// The scale benchmark's run: a cluster with the objects, one pod server, the compiled operator
// in a process of its own, then cold start, a quiet steady state, a restart and 10 % of the
// pods turning unhealthy, each measured from outside the operator. The cluster is the API test
// server (testserver-cluster.ts) or the real control plane (real-cluster.ts).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../../support/paths.js";
import { waitFor } from "../../support/wait-for.js";
import { cpuMsOf, memoryOf, startOperatorProcess, type OperatorProcess } from "./operator-process.js";
import { measureProbeFloor } from "./pod-server-process.js";
import { bucketsOf, parsePrometheusText, quantileBetween, sumOf, type Sample } from "./prometheus-text.js";
import { startRealCluster } from "./real-cluster.js";
import { countWrites, range, type ClusterKind, type ScaleCluster } from "./scale-cluster.js";
import {
  FAILURE_THRESHOLD,
  probeTimeoutSeconds,
  podName,
  serviceName,
  serviceOfPod,
  type ScaleShape,
} from "./scale-objects.js";
import { startTestServerCluster } from "./testserver-cluster.js";
import { trackSlices, type SliceTracker, type WantedEndpoints } from "./slice-tracker.js";
import { statusDiff } from "./status-diff.js";

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
}

export interface ScaleResult {
  benchmark: "scale";
  cluster: ClusterKind;
  /** Real cluster only: the operator's writes are counted from kube-apiserver's audit log (the test server's come from its request log). */
  writesFrom?: "audit log";
  pods: number;
  policies: number;
  periodSeconds: number;
  probe: { timeoutSeconds: number; failureThreshold: number };
  /** Load averages (1, 5, 15 min) when the run started and ended: CPU figures are only comparable within a run on a shared machine. */
  load: { start: number[]; end: number[] };
  /** Pods created until the kubelet stand-in has given every one an address and Ready. */
  podsStartedMs: number;
  /** Operator process start until every Service's slices are right. */
  coldStartMs: number;
  rssMB: { steady: number; peak: number };
  cpuPerProbeUs: number;
  /**
   * CPU per probe of the probe engine alone (scheduler and prober, no caches, health store,
   * reconciles or metrics), at the same rate against the same pod server just before the
   * operator starts: on loopback the kernel's work for both ends of each connection counts
   * as the prober's, so this is the floor the operator's figure stands on, on this machine now.
   * Failures (timeouts on a starved machine) make it lower than it should be.
   */
  probeFloor: { cpuPerProbeUs: number | null; probesPerSecond: number; failures: number };
  probesPerSecond: number;
  scheduledProbesPerSecond: number;
  scheduleLagP99Ms: number;
  /** Upper bound of the bucket holding the p99 of reconcile durations (every controller) over the run until the quiet window ends; -1 beyond the last bucket (10 s). */
  reconcileP99Ms: number | null;
  /** Reconciles (every controller) over the run until the quiet window ends. */
  reconciles: number;
  /** Reconciles in the quiet window: requeues and wakes when nothing changes. */
  quietReconciles: number;
  quiet: QuietWrites;
  /** Cold start: process start until every pod was probed once (probes done >= pods). */
  coldFirstRoundMs: number;
  /** Cold start: process start until every policy's status shows all its pods Healthy (after the slices are right). */
  statusSettledMs: number;
  /**
   * A restart against right slices and status: SIGTERM to exit (killed after 30 s), then until
   * probes done >= pods, and the writes in the new process's first two periods.
   */
  restart: {
    shutdownMs: number;
    shutdownKilled: boolean;
    firstRoundMs: number;
    writes: number;
    byResource: Record<string, number>;
    windowSeconds: number;
  };
  /** convergeMs null: not every slice was right before the deadline. */
  unhealthy: { pods: number; convergeMs: number | null; rssPeakMB: number };
  slicesCorrect: boolean;
}

const MB = 1024 * 1024;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const loadNow = () => loadavg().map((l) => round(l, 2));

/** One run's cluster, objects and operator, shared by its phases. */
interface Run {
  opts: ScaleOptions;
  cluster: ScaleCluster;
  shape: ScaleShape;
  slices: SliceTracker;
  log: (line: string) => void;
  logDir: string;
  kubeconfig: string;
  deadlineMs: number;
  /** The operator process running now, if any: stopped at the end whatever happened. */
  operator?: OperatorProcess;
}

export async function runScale(opts: ScaleOptions): Promise<ScaleResult> {
  const log = opts.progress ?? (() => undefined);
  const loadStart = loadNow();
  const kind = opts.cluster ?? "testserver";
  const start = kind === "real" ? startRealCluster : startTestServerCluster;
  const cluster = await start({ namespace: "scale", pods: opts.pods });
  const shape: ScaleShape = {
    namespace: "scale",
    pods: opts.pods,
    policies: opts.policies,
    periodSeconds: opts.periodSeconds,
    port: cluster.podServer.port,
  };
  const dir = mkdtempSync(join(tmpdir(), "scale-bench-"));
  // The operator's logs stay after the run, for a look at what it did.
  const logDir = join(repoRoot, ".scratch", "bench-scale", String(process.pid));
  mkdirSync(logDir, { recursive: true });
  const kubeconfig = join(dir, "kubeconfig");
  cluster.writeOperatorKubeconfig(kubeconfig);
  let run: Run | undefined;
  try {
    const podsStartedMs = await cluster.createObjects(shape, log);
    const slices = await trackSlices(cluster.watchKubeConfig(), shape.namespace);
    run = {
      opts,
      cluster,
      shape,
      slices,
      log,
      logDir,
      kubeconfig,
      deadlineMs: Math.max(120_000, opts.periodSeconds * 1000 * 6 + opts.pods * 10),
    };
    // It returns once the operator's writes have stopped for 5 s (writesDrained).
    const cold = await coldStart(run);
    const steady = await measureQuiet(cluster, run.operator!, opts);
    log(`quiet window: ${JSON.stringify(steady)}`);
    const debug = (await (await fetch(run.operator!.debugUrl)).json()) as { scheduler?: { lagP99Ms?: number } };
    const restart = await restartOperator(run);
    const unhealthy = await turnUnhealthy(run);
    return {
      benchmark: "scale",
      cluster: kind,
      ...(kind === "real" ? { writesFrom: "audit log" as const } : {}),
      pods: opts.pods,
      policies: opts.policies,
      periodSeconds: opts.periodSeconds,
      probe: { timeoutSeconds: probeTimeoutSeconds(opts.periodSeconds), failureThreshold: FAILURE_THRESHOLD },
      load: { start: loadStart, end: loadNow() },
      podsStartedMs,
      coldStartMs: cold.coldStartMs,
      rssMB: { steady: round(steady.rssSteady / MB), peak: round(steady.rssPeak / MB) },
      cpuPerProbeUs: steady.cpuPerProbeUs,
      probeFloor: {
        cpuPerProbeUs: cold.floor.cpuPerProbeUs,
        probesPerSecond: cold.floor.probesPerSecond,
        failures: cold.floor.failures,
      },
      probesPerSecond: steady.probesPerSecond,
      scheduledProbesPerSecond: round(opts.pods / opts.periodSeconds),
      scheduleLagP99Ms: debug.scheduler?.lagP99Ms ?? NaN,
      reconcileP99Ms: steady.reconcileP99Ms,
      reconciles: steady.reconciles,
      quietReconciles: steady.quietReconciles,
      quiet: steady.quiet,
      coldFirstRoundMs: cold.coldFirstRoundMs,
      statusSettledMs: cold.statusSettledMs,
      restart,
      unhealthy: {
        pods: unhealthy.failing.size,
        convergeMs: unhealthy.convergeMs,
        rssPeakMB: round(unhealthy.peak / MB),
      },
      slicesCorrect: slices.matches(wantedEndpoints(cluster, shape, unhealthy.failing)),
    };
  } catch (err) {
    if (run?.operator)
      console.error(`${run.operator.tail().slice(-10).join("\n")}\n(the operator's logs are in ${logDir})`);
    throw err;
  } finally {
    // The operator's writes stay beside its logs: time, verb, object and response code.
    const writes = await cluster.operatorWrites().catch(() => []);
    writeFileSync(join(logDir, "operator-writes.jsonl"), writes.map((w) => JSON.stringify(w)).join("\n") + "\n");
    run?.slices.stop();
    await run?.operator?.stop();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
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
  log(`starting the operator (${opts.pods} pods, ${opts.policies} policies, period ${opts.periodSeconds}s)`);
  const started = performance.now();
  const operator = (run.operator = await startOperatorProcess(
    run.kubeconfig,
    join(run.logDir, "operator-cold.log"),
    opts.operatorEntry,
  ));
  const coldRound = firstRound(operator, opts.pods, started, run.deadlineMs);
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
  await writesDrained(run);
  return { floor, coldStartMs, coldFirstRoundMs, statusSettledMs };
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
    const last = (await run.cluster.operatorWrites()).at(-1);
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
async function restartOperator(run: Run): Promise<ScaleResult["restart"]> {
  const { opts, cluster, log } = run;
  log("restarting the operator");
  const shutdown = await run.operator!.stop();
  run.operator = undefined;
  const writesMark = (await cluster.operatorWrites()).length;
  const started = performance.now();
  const operator = (run.operator = await startOperatorProcess(
    run.kubeconfig,
    join(run.logDir, "operator-restart.log"),
    opts.operatorEntry,
  ));
  const firstRoundMs = await firstRound(operator, opts.pods, started, run.deadlineMs);
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
  const peak = memoryOf(run.operator!.pid).hwm;
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

const scrape = async (operator: OperatorProcess): Promise<Sample[]> =>
  parsePrometheusText(await (await fetch(operator.metricsUrl)).text());
const probesOf = (s: Sample[]) => sumOf(s, "healthprobe_probes_total");

/** Ms from `since` until the operator has run at least as many probes as there are pods (looked at once a second: each look formats every metric of the operator, which at 500 policies costs it CPU). */
async function firstRound(operator: OperatorProcess, pods: number, since: number, timeoutMs: number): Promise<number> {
  await waitFor(async () => probesOf(await scrape(operator)) >= pods, {
    what: `${pods} probes`,
    timeoutMs,
    intervalMs: 1_000,
  });
  return Math.round(performance.now() - since);
}

interface QuietWrites {
  seconds: number;
  writes: number;
  byResource: Record<string, number>;
  /** What the first policy status writes of the window changed (policy: changed fields), so a write that changed nothing shows. */
  statusChanges: Record<string, string[]>;
  /** Probes that failed in the window, by failure class: writes that follow a pod's real failures (a starved machine's timeouts) are not the operator's doing. */
  probeFailures: Record<string, number>;
}

interface QuietFigures {
  quiet: QuietWrites;
  rssSteady: number;
  rssPeak: number;
  cpuPerProbeUs: number;
  probesPerSecond: number;
  /** Upper bound of the bucket holding the p99 of reconcile durations (every controller) over the run until the quiet window ends; -1 beyond the last bucket (10 s). */
  reconcileP99Ms: number | null;
  /** Reconciles (every controller) over the run until the quiet window ends. */
  reconciles: number;
  /** Reconciles in the quiet window: requeues and wakes when nothing changes. */
  quietReconciles: number;
}

/** A window without changes: writes, RSS, CPU over probes done and reconcile durations. */
async function measureQuiet(
  cluster: ScaleCluster,
  operator: OperatorProcess,
  opts: ScaleOptions,
): Promise<QuietFigures> {
  const before = await scrape(operator);
  const cpuBefore = cpuMsOf(operator.pid);
  const t0 = performance.now();
  const writesMark = (await cluster.operatorWrites()).length;
  const statuses = await StatusWatch.start(cluster);
  const rss: number[] = [];
  while (performance.now() - t0 < opts.quietSeconds * 1000) {
    await statuses.look();
    rss.push(memoryOf(operator.pid).rss);
    await sleep(Math.min(1000, opts.quietSeconds * 1000 - (performance.now() - t0)));
  }
  await statuses.look();
  const cpuAfter = cpuMsOf(operator.pid);
  const seconds = (performance.now() - t0) / 1000;
  const after = await scrape(operator);
  const probesDone = probesOf(after) - probesOf(before);
  const reconciles = bucketsOf(after, "healthprobe_reconcile_duration_seconds");
  const p99 = quantileBetween(new Map(), reconciles, 0.99);
  const quietReconciles =
    (reconciles.get(Infinity) ?? 0) - (bucketsOf(before, "healthprobe_reconcile_duration_seconds").get(Infinity) ?? 0);
  return {
    quiet: {
      seconds: round(seconds),
      ...countWrites((await cluster.operatorWrites()).slice(writesMark)),
      statusChanges: statuses.changes,
      probeFailures: failuresBetween(before, after),
    },
    rssSteady: rss.reduce((a, b) => a + b, 0) / Math.max(1, rss.length),
    rssPeak: memoryOf(operator.pid).hwm,
    cpuPerProbeUs: probesDone > 0 ? round(((cpuAfter - cpuBefore) * 1000) / probesDone) : NaN,
    probesPerSecond: round(probesDone / seconds),
    // Beyond the histogram's last bucket (10 s) the bound is unknown: -1 says so in JSON.
    reconcileP99Ms: p99 === null ? null : Number.isFinite(p99) ? p99 * 1000 : -1,
    reconciles: reconciles.get(Infinity) ?? 0,
    quietReconciles,
  };
}

/** Failed probes between two scrapes, by failure class. */
function failuresBetween(before: readonly Sample[], after: readonly Sample[]): Record<string, number> {
  const classes = new Set(
    after
      .filter((s) => s.name === "healthprobe_probes_total" && s.labels.result === "failure")
      .map((s) => s.labels.class ?? ""),
  );
  const out: Record<string, number> = {};
  for (const c of classes) {
    const where = { result: "failure", class: c };
    const n = sumOf(after, "healthprobe_probes_total", where) - sumOf(before, "healthprobe_probes_total", where);
    if (n > 0) out[c] = n;
  }
  return out;
}

/** Policy statuses looked at now and then: what changed between two looks, for the first few policies that changed. */
class StatusWatch {
  readonly changes: Record<string, string[]> = {};
  private readonly last = new Map<string, { rv: string; status: Record<string, unknown> | undefined }>();

  private constructor(private readonly cluster: ScaleCluster) {}

  static async start(cluster: ScaleCluster): Promise<StatusWatch> {
    const watch = new StatusWatch(cluster);
    for (const p of await cluster.policyStatuses()) watch.last.set(p.name, { rv: p.resourceVersion, status: p.status });
    return watch;
  }

  async look(): Promise<void> {
    for (const p of await this.cluster.policyStatuses()) {
      const seen = this.last.get(p.name);
      if (seen?.rv === p.resourceVersion) continue;
      this.last.set(p.name, { rv: p.resourceVersion, status: p.status });
      if (Object.keys(this.changes).length >= 10) continue;
      const changed = statusDiff(seen?.status, p.status);
      this.changes[`${p.name}@${p.resourceVersion}`] = changed.length > 0 ? changed : ["(nothing)"];
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
