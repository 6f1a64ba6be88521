// The scale benchmark with several operator replicas (--replicas N > 1): each a process of its
// own with --shards=on, writing as a user of its own (operator-<k>), so the request log says who
// wrote what. What each replica costs and owns in the quiet window, then the replica owning the
// most namespaces is SIGKILLed and the time is taken until the others own and have reconciled
// every one of its namespaces.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { waitFor } from "../../support/wait-for.js";
import { startOperatorProcess, type OperatorProcess } from "./operator-process.js";
import { sumOf, type Sample } from "./prometheus-text.js";
import { round, scrape, type OperatorWindow } from "./quiet-window.js";
import type { ScaleCluster } from "./scale-cluster.js";
import { namespaceNames, namespaceOfPolicy, serviceName, type ScaleShape } from "./scale-objects.js";

const MB = 1024 * 1024;

/** The operator's shard timings (its defaults, or all scaled from a given lease duration). */
export interface ShardTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  skewMarginMs: number;
}

/** The operator's defaults: 15 s, 10 s, 2 s, 2 s. */
const DEFAULT_TIMINGS: ShardTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  skewMarginMs: 2_000,
};

/** The defaults, or every timing in the defaults' proportions to a given lease (they must nest: retry < renew < lease). */
export function shardTimings(leaseDurationMs: number | undefined): ShardTimings {
  if (leaseDurationMs === undefined) return DEFAULT_TIMINGS;
  const scale = (ms: number) => Math.round((ms * leaseDurationMs) / DEFAULT_TIMINGS.leaseDurationMs);
  return {
    leaseDurationMs,
    renewDeadlineMs: scale(DEFAULT_TIMINGS.renewDeadlineMs),
    retryPeriodMs: scale(DEFAULT_TIMINGS.retryPeriodMs),
    skewMarginMs: scale(DEFAULT_TIMINGS.skewMarginMs),
  };
}

function shardFlags(t: ShardTimings, given: boolean): string[] {
  if (!given) return ["--shards=on"];
  return [
    "--shards=on",
    `--shard-lease-duration=${t.leaseDurationMs}ms`,
    `--shard-renew-deadline=${t.renewDeadlineMs}ms`,
    `--shard-retry-period=${t.retryPeriodMs}ms`,
    `--shard-skew-margin=${t.skewMarginMs}ms`,
  ];
}

/** What starting the operators needs of a run. */
export interface OperatorsRun {
  opts: { replicas?: number; shardLeaseDurationMs?: number; operatorEntry?: string[] };
  cluster: ScaleCluster;
  logDir: string;
  /** Where kubeconfigs go. */
  dir: string;
}

/**
 * One operator exactly as before (user operator, no shard flags) for --replicas 1; otherwise N
 * replicas with --shards=on, started together (a cold start of the whole set), each as user
 * operator-<k>. Metrics and health ports are the kernel's choice, identities the operator's own.
 */
export async function startOperators(run: OperatorsRun, phase: string): Promise<OperatorProcess[]> {
  const n = run.opts.replicas ?? 1;
  if (n === 1)
    return [
      await startOperatorProcess(
        join(run.dir, "kubeconfig"),
        join(run.logDir, `operator-${phase}.log`),
        run.opts.operatorEntry,
      ),
    ];
  const flags = shardFlags(shardTimings(run.opts.shardLeaseDurationMs), run.opts.shardLeaseDurationMs !== undefined);
  const started = await Promise.allSettled(
    Array.from({ length: n }, (_, k) => {
      const kubeconfig = join(run.dir, `operator-${k}.kubeconfig`);
      run.cluster.writeOperatorKubeconfig(kubeconfig, `operator-${k}`);
      return startOperatorProcess(
        kubeconfig,
        join(run.logDir, `operator-${k}-${phase}.log`),
        run.opts.operatorEntry,
        flags,
      );
    }),
  );
  const up = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all(up.map((o) => o.stop()));
    throw (failed as PromiseRejectedResult).reason;
  }
  return up;
}

/** Policy name → the shard (owning replica) its status names. */
async function statusShards(cluster: ScaleCluster): Promise<Map<string, unknown>> {
  return new Map((await cluster.policyStatuses()).map((p) => [p.name, p.status?.shard]));
}

/**
 * Ownership has settled for `namespaces`: each one's marker names a live replica and each of its
 * policies' status.shard names that replica (a status write by the owner: it has reconciled there).
 */
async function owned(
  cluster: ScaleCluster,
  shape: ScaleShape,
  live: readonly OperatorProcess[],
  namespaces: ReadonlySet<string>,
  statusToo: boolean,
): Promise<Map<string, string> | undefined> {
  const holders = cluster.shardMarkers!();
  const ids = new Set(live.map((o) => o.identity));
  for (const ns of namespaces) if (!ids.has(holders.get(ns) ?? "")) return undefined;
  if (!statusToo) return holders;
  const shards = await statusShards(cluster);
  for (let i = 0; i < shape.policies; i++) {
    const ns = namespaceOfPolicy(shape, i);
    if (namespaces.has(ns) && shards.get(serviceName(i)) !== holders.get(ns)) return undefined;
  }
  return holders;
}

const gaugeOf = (s: Sample[], name: string) => sumOf(s, name);
const NAMESPACES_OWNED = "healthprobe_shard_namespaces_owned";
const TARGETS_OWNED = "healthprobe_shard_targets_owned";

/** Every live replica's gauges add up to every namespace and every pod, and agree with the markers. */
async function gaugesAgree(
  live: readonly OperatorProcess[],
  holders: Map<string, string>,
  shape: ScaleShape,
): Promise<boolean> {
  const scrapes = await Promise.all(live.map(scrape));
  const mine = (o: OperatorProcess) => [...holders.values()].filter((h) => h === o.identity).length;
  if (live.some((o, k) => gaugeOf(scrapes[k]!, NAMESPACES_OWNED) !== mine(o))) return false;
  return scrapes.reduce((n, s) => n + gaugeOf(s, TARGETS_OWNED), 0) === shape.pods;
}

/** For the cold start: until every namespace is owned by a live replica, reconciled by it, and the gauges agree. */
export async function shardsSettled(
  cluster: ScaleCluster,
  shape: ScaleShape,
  live: readonly OperatorProcess[],
  timeoutMs: number,
): Promise<void> {
  const all = new Set(namespaceNames(shape));
  await waitFor(
    async () => {
      const holders = await owned(cluster, shape, live, all, true);
      return holders !== undefined && (await gaugesAgree(live, holders, shape));
    },
    {
      what: "every namespace owned by a live replica, its statuses naming it, the gauges agreeing",
      timeoutMs,
      intervalMs: 1_000,
    },
  );
}

export interface ReplicaFigures {
  identity: string;
  user: string;
  /** CPU seconds per second over the quiet window. */
  cpuSecondsPerSecond: number;
  /** The same by thread name. */
  cpuByThread: Record<string, number>;
  /** The main thread's wake-ups per second. */
  wakeupsPerSecond: number;
  rssMB: { steady: number; peak: number };
  probesPerSecond: number;
  /** The replica's gauges at the window's end. */
  namespacesOwned: number;
  targetsOwned: number;
}

export function replicaFigures(windows: readonly OperatorWindow[], seconds: number): ReplicaFigures[] {
  return windows.map((w, k) => ({
    identity: w.operator.identity,
    user: `operator-${k}`,
    cpuSecondsPerSecond: round(w.cpuMs / 1000 / seconds, 3),
    cpuByThread: w.cpuByThread,
    wakeupsPerSecond: w.wakeupsPerSecond,
    rssMB: { steady: round(w.rssSteady / MB), peak: round(w.rssPeak / MB) },
    probesPerSecond: round(w.probes / seconds),
    namespacesOwned: gaugeOf(w.after, NAMESPACES_OWNED),
    targetsOwned: gaugeOf(w.after, TARGETS_OWNED),
  }));
}

export interface Rebalance {
  killed: string;
  namespaces: number;
  targets: number;
  /** SIGKILL until another live replica holds every one of the killed replica's namespaces' markers. */
  ownedMs: number;
  /** SIGKILL until, besides, each of those namespaces' policy statuses names its new owner and every live replica's gauges agree. */
  rebalanceMs: number;
  /** The bound on owning: lease duration + skew margin + one retry period (the killed replica may have renewed just before it died). */
  boundMs: number;
  bound: string;
}

/** SIGKILLs the replica holding the most namespaces' markers; until the others own and have reconciled them. */
export async function killAndRebalance(
  run: OperatorsRun & { shape: ScaleShape; operators: OperatorProcess[]; deadlineMs: number; log: (l: string) => void },
): Promise<Rebalance> {
  const { cluster, shape } = run;
  const holders = cluster.shardMarkers!();
  const share = (o: OperatorProcess) => [...holders.values()].filter((h) => h === o.identity).length;
  const victim = [...run.operators].sort((x, y) => share(y) - share(x))[0]!;
  const theirs = new Set([...holders].filter(([, h]) => h === victim.identity).map(([ns]) => ns));
  const targets = gaugeOf(await scrape(victim), TARGETS_OWNED);
  run.log(`SIGKILL ${victim.identity}, owner of ${theirs.size} namespaces, ${targets} targets`);
  const t0 = performance.now();
  await victim.kill();
  run.operators = run.operators.filter((o) => o !== victim);
  const live = run.operators;
  const opts = { timeoutMs: run.deadlineMs, intervalMs: 50 };
  await waitFor(() => owned(cluster, shape, live, theirs, false), {
    what: "the killed replica's namespaces owned",
    ...opts,
  });
  const ownedMs = Math.round(performance.now() - t0);
  await waitFor(
    async () => {
      const now = await owned(cluster, shape, live, theirs, true);
      return now !== undefined && (await gaugesAgree(live, now, shape));
    },
    { what: "the killed replica's namespaces reconciled by their new owners", ...opts, intervalMs: 200 },
  );
  const rebalanceMs = Math.round(performance.now() - t0);
  const t = shardTimings(run.opts.shardLeaseDurationMs);
  run.log(`rebalanced: owned after ${ownedMs} ms, reconciled after ${rebalanceMs} ms`);
  return {
    killed: victim.identity,
    namespaces: theirs.size,
    targets,
    ownedMs,
    rebalanceMs,
    boundMs: t.leaseDurationMs + t.skewMarginMs + t.retryPeriodMs,
    bound: `lease ${t.leaseDurationMs} + skew ${t.skewMarginMs} + retry period ${t.retryPeriodMs} ms`,
  };
}
