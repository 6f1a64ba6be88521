// The scale benchmark's quiet window: nothing changes, and the operator's writes, RSS, CPU over
// probes done and reconciles are measured from outside, for one operator process or for each of
// several replicas (then summed: what the replicas cost together).
import { performance } from "node:perf_hooks";
import { cpuMsOf, memoryOf, profileDir, threadCpuMsOf, wakeupsOf, type OperatorProcess } from "./operator-process.js";
import { bucketsOf, parsePrometheusText, quantileBetween, sumOf, type Sample } from "./prometheus-text.js";
import { countWrites, type OperatorWrite, type ScaleCluster } from "./scale-cluster.js";
import { statusDiff } from "./status-diff.js";

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
export const sleep = (ms: number): Promise<unknown> => new Promise((r) => setTimeout(r, ms));

export const scrape = async (operator: OperatorProcess): Promise<Sample[]> =>
  parsePrometheusText(await (await fetch(operator.metricsUrl)).text());
export const probesOf = (s: Sample[]): number => sumOf(s, "healthprobe_probes_total");
/** Shard Lease renewals and handover markers: the replicas' membership, not writes about the objects. */
export const isLeaseWrite = (w: OperatorWrite): boolean => w.resource === "leases";

export interface QuietWrites {
  seconds: number;
  writes: number;
  byResource: Record<string, number>;
  /** What the first policy status writes of the window changed (policy: changed fields), so a write that changed nothing shows. */
  statusChanges: Record<string, string[]>;
  /** Probes that failed in the window, by failure class: writes that follow a pod's real failures (a starved machine's timeouts) are not the operator's doing. */
  probeFailures: Record<string, number>;
  /** With several replicas: their Lease writes (shard Lease renewals, markers), not counted in `writes`. */
  leaseWrites?: number;
}

/** One process over the window. */
export interface OperatorWindow {
  operator: OperatorProcess;
  cpuMs: number;
  /** CPU seconds per second of the window by thread name: the main thread against V8's and libuv's workers. */
  cpuByThread: Record<string, number>;
  /** The main thread's wake-ups per second (voluntary context switches): an event loop that handles one event per wake-up pays the loop's own cost each time. */
  wakeupsPerSecond: number;
  rssSteady: number;
  rssPeak: number;
  probes: number;
  /** Its metrics at the window's end. */
  after: Sample[];
}

export interface QuietFigures {
  quiet: QuietWrites;
  /** Summed over the processes. */
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
  perOperator: OperatorWindow[];
}

/** Adds up histograms scraped from several processes, bucket by bucket. */
function mergedBuckets(scrapes: readonly Sample[][], name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of scrapes) for (const [le, n] of bucketsOf(s, name)) out.set(le, (out.get(le) ?? 0) + n);
  return out;
}

/** A window without changes: writes, RSS, CPU over probes done and reconcile durations. */
export async function measureQuiet(
  cluster: ScaleCluster,
  operators: readonly OperatorProcess[],
  quietSeconds: number,
): Promise<QuietFigures> {
  const before = await Promise.all(operators.map(scrape));
  const cpuBefore = operators.map((o) => cpuMsOf(o.pid));
  const threadsBefore = operators.map((o) => threadCpuMsOf(o.pid));
  const wakeupsBefore = operators.map((o) => wakeupsOf(o.pid));
  if (profileDir()) for (const o of operators) process.kill(o.pid, "SIGUSR2");
  const t0 = performance.now();
  const writesMark = (await cluster.operatorWrites()).length;
  const statuses = await StatusWatch.start(cluster);
  const rss: number[][] = operators.map(() => []);
  while (performance.now() - t0 < quietSeconds * 1000) {
    await statuses.look();
    operators.forEach((o, k) => rss[k]!.push(memoryOf(o.pid).rss));
    await sleep(Math.min(1000, quietSeconds * 1000 - (performance.now() - t0)));
  }
  await statuses.look();
  const cpuAfter = operators.map((o) => cpuMsOf(o.pid));
  const threadsAfter = operators.map((o) => threadCpuMsOf(o.pid));
  const wakeupsAfter = operators.map((o) => wakeupsOf(o.pid));
  if (profileDir()) for (const o of operators) process.kill(o.pid, "SIGUSR2");
  const seconds = (performance.now() - t0) / 1000;
  const after = await Promise.all(operators.map(scrape));
  const perOperator = operators.map((operator, k) => ({
    operator,
    cpuMs: cpuAfter[k]! - cpuBefore[k]!,
    wakeupsPerSecond: round((wakeupsAfter[k]! - wakeupsBefore[k]!) / seconds),
    cpuByThread: Object.fromEntries(
      Object.entries(threadsAfter[k]!).map(([name, ms]) => [
        name,
        round((ms - (threadsBefore[k]![name] ?? 0)) / 1000 / seconds, 3),
      ]),
    ),
    rssSteady: rss[k]!.reduce((a, b) => a + b, 0) / Math.max(1, rss[k]!.length),
    rssPeak: memoryOf(operator.pid).hwm,
    probes: probesOf(after[k]!) - probesOf(before[k]!),
    after: after[k]!,
  }));
  const total = (f: (w: OperatorWindow) => number) => perOperator.reduce((n, w) => n + f(w), 0);
  const probesDone = total((w) => w.probes);
  const histogram = "healthprobe_reconcile_duration_seconds";
  const reconciles = mergedBuckets(after, histogram);
  const p99 = quantileBetween(new Map(), reconciles, 0.99);
  const quietReconciles = (reconciles.get(Infinity) ?? 0) - (mergedBuckets(before, histogram).get(Infinity) ?? 0);
  const writes = (await cluster.operatorWrites()).slice(writesMark);
  return {
    quiet: {
      seconds: round(seconds),
      ...countWrites(writes.filter((w) => !isLeaseWrite(w))),
      statusChanges: statuses.changes,
      probeFailures: failuresBetween(before, after),
      ...(operators.length > 1 ? { leaseWrites: writes.filter(isLeaseWrite).length } : {}),
    },
    rssSteady: total((w) => w.rssSteady),
    rssPeak: total((w) => w.rssPeak),
    cpuPerProbeUs: probesDone > 0 ? round((total((w) => w.cpuMs) * 1000) / probesDone) : NaN,
    probesPerSecond: round(probesDone / seconds),
    // Beyond the histogram's last bucket (10 s) the bound is unknown: -1 says so in JSON.
    reconcileP99Ms: p99 === null ? null : Number.isFinite(p99) ? p99 * 1000 : -1,
    reconciles: reconciles.get(Infinity) ?? 0,
    quietReconciles,
    perOperator,
  };
}

/** Failed probes between two scrapes of each process, by failure class. */
function failuresBetween(before: readonly Sample[][], after: readonly Sample[][]): Record<string, number> {
  const out: Record<string, number> = {};
  after.forEach((a, k) => {
    const classes = new Set(
      a
        .filter((s) => s.name === "healthprobe_probes_total" && s.labels.result === "failure")
        .map((s) => s.labels.class ?? ""),
    );
    for (const c of classes) {
      const where = { result: "failure", class: c };
      const n = sumOf(a, "healthprobe_probes_total", where) - sumOf(before[k]!, "healthprobe_probes_total", where);
      if (n > 0) out[c] = (out[c] ?? 0) + n;
    }
  });
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
