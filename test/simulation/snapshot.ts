// What the invariants see: the API's own objects (pods, Services, the operator's EndpointSlices,
// policies with their status) and the requests the API server received, all in plain data.
// Nothing here comes from the operator's memory.

export type OwnerKind = "controller" | "bare" | "mirror";
export type HealthState = "Unknown" | "Healthy" | "Unhealthy";

export interface PodView {
  name: string;
  uid: string;
  /** creationTimestamp, epoch ms. */
  created: number;
  ip: string | undefined;
  labels: Record<string, string>;
  /** kubelet's Ready condition (with the readiness gate folded in). */
  ready: boolean;
  /** kubelet's ContainersReady: Ready but for the gate (absent: as Ready). */
  containersReady?: boolean;
  /** The pod's healthprobe.io/ready condition, if any. */
  gate?: { status: string; reason: string };
  terminating: boolean;
  owner: OwnerKind;
}

export interface ServiceView {
  name: string;
  hasSelector: boolean;
}

export interface SliceView {
  name: string;
  service: string;
  endpoints: Array<{ pod: string; ready: boolean }>;
}

export interface PolicyView {
  name: string;
  uid: string;
  generation: number;
  serviceName: string;
  selector: Record<string, string>;
  dryRun: boolean;
  /** drain.method (absent: EndpointSlice). */
  method?: string;
  /** creationTimestamp, epoch ms (absent: 0). */
  created?: number;
  maxUnhealthyPercent: number;
  whenAllUnhealthy: "FailOpen" | "FailClosed";
  replacement: { enabled: boolean; maxPerHour: number; maxPerDay: number; pauseAboveUnhealthyPercent?: number };
  status: {
    observedGeneration: number | undefined;
    /** type -> status, reason, observedGeneration, lastTransitionTime (epoch ms). */
    conditions: Record<
      string,
      { status: string; reason: string; observedGeneration: number | undefined; since: number }
    >;
    /** Pod name -> state as the policy reports it. */
    pods: Record<string, HealthState>;
    /** Pod name -> whether the policy reports keeping it out of rotation (drained, or not admitted). */
    routedOut?: Record<string, boolean>;
    /** status.targets and status.drained as written (one write: consistent with each other). */
    targets?: number;
    drained?: number;
    /** Pods the status reports quarantined for flapping and drained. */
    quarantinedOut?: string[];
  };
}

/** The API's objects at one moment. */
export interface World {
  at: number;
  pods: PodView[];
  services: ServiceView[];
  slices: SliceView[];
  policies: PolicyView[];
}

/** An eviction (or delete) of a pod by an operator replica, with the objects just before it. */
export interface EvictionRecord {
  at: number;
  user: string;
  /** The pod's namespace (the per-namespace share counts by it). */
  namespace?: string;
  pod: string;
  code: number;
  verb: "evict" | "delete";
  /** The API's objects as they were before the request was served. */
  before: World;
  /** When the API's pods (names, uids, labels, addresses, terminating) or policies (generations) last changed before it. */
  stableSince?: number;
}

/** A replica start of probing: its start, or its taking of the leader Lease. */
export interface ProbingStart {
  user: string;
  at: number;
}

export interface Snapshot {
  step: number;
  world: World;
  /** The previous step's world (for transitions), if any. */
  previous: World | undefined;
  /** Every operator eviction so far, in order. */
  evictions: EvictionRecord[];
  /** Per pod IP: simulated times the pod server received a request, and what it answered then. */
  probes: Array<{ ip: string; at: number; mode: string }>;
  /** Per pod IP: the times its answer mode changed. */
  modeChanges: Array<{ ip: string; at: number; mode: string }>;
  probingStarts: ProbingStart[];
  /** Pod names ever seen ready in a Service's slices, by Service. */
  everInRotation: Record<string, string[]>;
  /** Whether a replica was leading with synced caches when the world was read. */
  operatorUp: boolean;
  /** Whether the history has settled (final check: nothing left frozen, converged). */
  settled: boolean;
  /** Operator-wide replacement cap (per sliding 12 h). */
  maxReplacementsPer12h: number;
  /** One namespace's share of it (--max-replacements-per-12h-per-namespace); absent: not checked. */
  maxReplacementsPer12hPerNamespace?: number;
  /** With shards on: the namespace's marker and the operator's requests, from the API's record. */
  shards?: ShardRecord;
}

/** The simulated namespace's handover marker and the operator's requests, as the API recorded them. */
export interface ShardRecord {
  /** Simulated start, and the time of this snapshot. */
  start: number;
  now: number;
  /** How long a namespace with a policy may go without a live owner. */
  boundMs: number;
  /** The shard Lease duration: a holder that renewed within it is live, and only its release hands the marker on. */
  leaseMs: number;
  /** Each change of the marker's holder: when, and how many requests the log held then. */
  markers: Array<{ pos: number; at: number; holder: string }>;
  /** The operator's successful writes for the namespace, at their request log index. */
  writes: Array<{ pos: number; at: number; user: string; what: string }>;
  /** Every operator request (any namespace), for when each replica last talked to the API. */
  requests: Array<{ at: number; user: string }>;
  /** Each replica's successful writes of its own shard Lease (its renewals). */
  renewals: Array<{ at: number; user: string }>;
  /** The namespace's policy count after each change. */
  policies: Array<{ at: number; count: number }>;
}

export const HOUR_MS = 3_600_000;

// ---- small pure helpers the invariants share ----

export function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  const keys = Object.keys(selector);
  return keys.length > 0 && keys.every((k) => labels[k] === selector[k]);
}

/** Selected pods Running with an IP and not terminating: the policy's targets. */
export function targetsOf(world: World, policy: PolicyView): PodView[] {
  return world.pods.filter((p) => p.ip && !p.terminating && selects(policy.selector, p.labels));
}

export function slicesOf(world: World, service: string): SliceView[] {
  return world.slices.filter((s) => s.service === service);
}

/** Endpoint readiness by pod name across the Service's slices. */
export function readinessIn(world: World, service: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const s of slicesOf(world, service))
    for (const e of s.endpoints) out.set(e.pod, out.get(e.pod) === true || e.ready);
  return out;
}

/**
 * How long a pod's failure may still show in the operator's view after its server answers well
 * again: successThreshold (at most 3) probes at most 2 s apart, the reconcile, a slice write.
 */
export const RECOVERY_LAG_MS = 15_000;

/** Whether the pod server at `ip` answered "healthy" throughout [from, to], by its mode changes. */
export function healthyThroughout(
  modeChanges: Snapshot["modeChanges"],
  ip: string | undefined,
  from: number,
  to: number,
): boolean {
  if (!ip) return false;
  let atStart: string | undefined;
  for (const m of modeChanges) {
    if (m.ip !== ip) continue;
    if (m.at <= from) atStart = m.mode;
    else if (m.at <= to && m.mode !== "healthy") return false;
  }
  return atStart === "healthy";
}

/**
 * A policy that fails closed may leave its Service dark, and drain past its cap, while no target
 * is Healthy. Judged from its status (FailClosed=True, or no ready target reported Healthy), or,
 * since status is written a second or more behind the slices, from the pod servers: no ready
 * target answered healthy throughout the last RECOVERY_LAG_MS (seed 2207: every server failing,
 * the slices already dark, the status still from before).
 */
export function mayFailClosed(
  policy: PolicyView,
  targets: readonly PodView[],
  s: Pick<Snapshot, "modeChanges" | "world">,
  isReady: (p: PodView) => boolean = (p) => p.ready,
): boolean {
  if (policy.whenAllUnhealthy !== "FailClosed") return false;
  const ready = targets.filter(isReady);
  if (conditionTrue(policy, "FailClosed") || !ready.some((p) => policy.status.pods[p.name] === "Healthy")) return true;
  return !ready.some((p) => healthyThroughout(s.modeChanges, p.ip, s.world.at - RECOVERY_LAG_MS, s.world.at));
}

export function conditionTrue(policy: PolicyView, type: string): boolean {
  return policy.status.conditions[type]?.status === "True";
}

/**
 * The policy that manages a Service: a Ready policy naming it, the Service present and
 * selector-less, and the policy's Ready condition about its current generation.
 */
export function managingPolicy(world: World, service: string): PolicyView | undefined {
  const svc = world.services.find((s) => s.name === service);
  if (!svc || svc.hasSelector) return undefined;
  return world.policies.find(
    (p) =>
      p.serviceName === service &&
      (p.method ?? "EndpointSlice") === "EndpointSlice" &&
      conditionTrue(p, "Ready") &&
      p.status.conditions.Ready?.observedGeneration === p.generation,
  );
}
