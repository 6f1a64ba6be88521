// The scale benchmark's JSON line, field by field: what each figure means and how it was taken.
import type { QuietWrites } from "./quiet-window.js";
import type { Rebalance, ReplicaFigures, ShardTimings } from "./replicas.js";
import type { ClusterKind } from "./scale-cluster.js";

export interface ScaleResult {
  benchmark: "scale";
  cluster: ClusterKind;
  /** Real cluster only: the operator's writes are counted from kube-apiserver's audit log (the test server's come from its request log). */
  writesFrom?: "audit log";
  pods: number;
  policies: number;
  /** Operator processes (replicas > 1: --shards=on, and the figures of the whole set: RSS summed, CPU per probe over every replica's). */
  replicas: number;
  namespaces: number;
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
  /** One replica: CPU seconds per second of the quiet window by thread name (main, V8's and libuv's workers). */
  cpuByThread?: Record<string, number>;
  /** One replica: its main thread's wake-ups per second in the quiet window (voluntary context switches). */
  wakeupsPerSecond?: number;
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
   * One replica only: a restart against right slices and status: SIGTERM to exit (killed after
   * 30 s), then until probes done >= pods, and the writes in the new process's first two periods.
   */
  restart?: {
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
  /** Several replicas only. */
  shards?: {
    timings: ShardTimings;
    /** Operator start until every namespace's marker names a live replica, its statuses name it and the gauges agree. */
    settledMs: number;
    /** Over the quiet window. */
    perReplica: ReplicaFigures[];
    /** The replica owning the most namespaces SIGKILLed after the window, before the unhealthy pods. */
    rebalance: Rebalance;
  };
}
