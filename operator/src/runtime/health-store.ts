// Per (policy, pod uid) evaluation state, fed by probe results. It decides nothing on its own:
// computeHealth does, and a result that changes what status shows tells the caller to
// reconcile the policy. Live figures (latency, last probe) stay here for /debug/targets.
import { appendTransition, type FlapTransition } from "../domain/flap-quarantine.js";
import { computeHealth, initialHealth, type HealthRecord, type HealthSeed } from "../domain/health.js";
import type { ProbeOutcome } from "../domain/probe-request.js";
import type { EpochMs, EvaluationSettings } from "../domain/types.js";

interface PodEntry {
  record: HealthRecord;
  startedAt: EpochMs;
  /** When probing last started for the pod under this policy: only later results are fresh evidence. */
  probingSince: EpochMs;
  /** The next result enqueues the policy even if it changes nothing status shows. */
  wake: boolean;
  name: string;
  ip: string;
  latencyMs?: number;
  result?: string;
  /** Transitions into Healthy or Unhealthy, bounded (appendTransition): what flap quarantine judges. */
  transitions: FlapTransition[];
  /** A quarantine restored from status after a restart (the transitions before it are lost). */
  restoredQuarantineUntil?: EpochMs;
}

/** A pod's flap history, for judgeQuarantine. */
export interface FlapHistory {
  transitions: readonly FlapTransition[];
  restoredUntil?: EpochMs;
}

interface PolicyEntry {
  settings: EvaluationSettings;
  pods: Map<string, PodEntry>;
}

export interface HealthTarget {
  uid: string;
  name: string;
  ip: string;
  startedAt: EpochMs;
}

/** What the replacement and the recovery sweep need to tell fresh evidence from restored state. */
export interface HealthEvidence {
  /** When probing last started for the pod (first configured, or restartProbing). */
  probingSince: EpochMs;
  /** When the latest probe result arrived; undefined before the first one (seeds are not results). */
  lastResultAt?: EpochMs;
}

export interface DebugTarget {
  policy: string;
  pod: string;
  uid: string;
  ip: string;
  state: string;
  since: string;
  unhealthySince?: string;
  consecutiveSuccesses: number;
  consecutiveFailures: number;
  samples?: boolean[];
  lastProbeAt?: string;
  latencyMs?: number;
  result?: string;
}

export class HealthStore {
  private readonly policies = new Map<string, PolicyEntry>();

  /** Whether the store has ever seen this policy (so persisted status should seed it). */
  has(policy: string): boolean {
    return this.policies.has(policy);
  }

  /**
   * Sets a policy's settings and target set. Pods not in `targets` are forgotten; new ones
   * start from their persisted seed (after a restart) or Unknown, with probing started `now`.
   */
  configure(
    policy: string,
    settings: EvaluationSettings,
    targets: readonly HealthTarget[],
    seeds: ReadonlyMap<string, HealthSeed>,
    now: EpochMs,
  ): void {
    let entry = this.policies.get(policy);
    if (!entry) {
      entry = { settings, pods: new Map() };
      this.policies.set(policy, entry);
    }
    entry.settings = settings;
    const keep = new Set<string>();
    for (const t of targets) {
      keep.add(t.uid);
      const existing = entry.pods.get(t.uid);
      if (existing) {
        existing.name = t.name;
        existing.ip = t.ip;
        existing.startedAt = t.startedAt;
        continue;
      }
      const seed = seeds.get(t.uid);
      const pod: PodEntry = {
        record: initialHealth(seed, now),
        startedAt: t.startedAt,
        name: t.name,
        ip: t.ip,
        probingSince: now,
        wake: false,
        transitions: [],
      };
      if (seed?.quarantinedUntil !== undefined) pod.restoredQuarantineUntil = seed.quarantinedUntil;
      entry.pods.set(t.uid, pod);
    }
    for (const uid of entry.pods.keys()) if (!keep.has(uid)) entry.pods.delete(uid);
  }

  /**
   * Probing starts again for every pod of the policy (the policy became Ready again, or this
   * replica became leader): results from before `now` are no longer fresh evidence.
   */
  restartProbing(policy: string, now: EpochMs): void {
    for (const pod of this.policies.get(policy)?.pods.values() ?? []) pod.probingSince = now;
  }

  /** The next result of each pod enqueues the policy, whatever it says (the recovery sweep waits on it). */
  wakeOnNextResult(policy: string, uids: readonly string[]): void {
    const pods = this.policies.get(policy)?.pods;
    for (const uid of uids) {
      const pod = pods?.get(uid);
      if (pod) pod.wake = true;
    }
  }

  evidence(policy: string, uid: string): HealthEvidence | undefined {
    const pod = this.policies.get(policy)?.pods.get(uid);
    if (!pod) return undefined;
    const out: HealthEvidence = { probingSince: pod.probingSince };
    if (pod.record.lastProbeAt !== undefined) out.lastResultAt = pod.record.lastProbeAt;
    return out;
  }

  /** The pod's transitions (and restored quarantine), for judging flap quarantine. */
  flapHistory(policy: string, uid: string): FlapHistory | undefined {
    const pod = this.policies.get(policy)?.pods.get(uid);
    if (!pod) return undefined;
    const out: FlapHistory = { transitions: pod.transitions };
    if (pod.restoredQuarantineUntil !== undefined) out.restoredUntil = pod.restoredQuarantineUntil;
    return out;
  }

  drop(policy: string): void {
    this.policies.delete(policy);
  }

  get(policy: string, uid: string): HealthRecord | undefined {
    return this.policies.get(policy)?.pods.get(uid)?.record;
  }

  /**
   * Applies a probe outcome. Returns true when the policy needs a reconcile: something status
   * shows changed (state, or the result that set it), or the result is an Unhealthy pod's first
   * fresh evidence since probing started (replacement waits on it), or a wake was asked for.
   */
  record(policy: string, uid: string, outcome: ProbeOutcome): boolean {
    const entry = this.policies.get(policy);
    const pod = entry?.pods.get(uid);
    if (!entry || !pod) return false;
    const before = pod.record;
    const { record, transition } = computeHealth(
      before,
      { success: outcome.success, failureClass: outcome.failureClass, at: outcome.finishedAt },
      entry.settings,
      pod.startedAt,
    );
    pod.record = record;
    if (transition && transition.to !== "Unknown")
      pod.transitions = appendTransition(pod.transitions, { at: outcome.finishedAt, to: transition.to });
    pod.latencyMs = outcome.latencyMs;
    pod.result = outcome.result;
    // Fresh evidence is waited on only for an Unhealthy pod (replacement, a drain after a
    // recovery); for the others it changes nothing, and after a restart every pod's first result
    // would otherwise wake its policy.
    const firstFresh =
      record.state === "Unhealthy" && (before.lastProbeAt === undefined || before.lastProbeAt <= pod.probingSince);
    const wake = pod.wake;
    pod.wake = false;
    return wake || firstFresh || record.state !== before.state || record.stateResult !== before.stateResult;
  }

  debugTargets(): DebugTarget[] {
    const out: DebugTarget[] = [];
    for (const [policy, entry] of this.policies)
      for (const uid of entry.pods.keys()) out.push(this.target(policy, uid)!);
    return out;
  }

  /** What the store has on one pod for one policy (the live figures included), as /debug/targets shows it. */
  target(policy: string, uid: string): DebugTarget | undefined {
    const entry = this.policies.get(policy);
    const pod = entry?.pods.get(uid);
    if (!entry || !pod) return undefined;
    const r = pod.record;
    const t: DebugTarget = {
      policy,
      pod: pod.name,
      uid,
      ip: pod.ip,
      state: r.state,
      since: new Date(r.since).toISOString(),
      consecutiveSuccesses: r.consecutiveSuccesses,
      consecutiveFailures: r.consecutiveFailures,
    };
    if (r.unhealthySince !== undefined) t.unhealthySince = new Date(r.unhealthySince).toISOString();
    if (entry.settings.window) t.samples = [...r.samples];
    if (r.lastProbeAt !== undefined) t.lastProbeAt = new Date(r.lastProbeAt).toISOString();
    if (pod.latencyMs !== undefined) t.latencyMs = pod.latencyMs;
    if (pod.result !== undefined) t.result = pod.result;
    return t;
  }
}
