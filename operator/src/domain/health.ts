import type { EpochMs, EvaluationSettings, HealthStateName, ProbeOutcome } from "./types.js";

/**
 * The evaluation state of one pod under one policy.
 *
 * Bounded: `samples` holds at most the window's sampleSize results (empty in threshold
 * mode) and the counters saturate at COUNTER_LIMIT, so a long-lived pod costs the same
 * as a new one.
 */
export interface HealthRecord {
  state: HealthStateName;
  /** Last state change. */
  since: EpochMs;
  /** Set on the transition into Unhealthy; only ever present while Unhealthy. */
  unhealthySince?: EpochMs;
  consecutiveSuccesses: number;
  consecutiveFailures: number;
  /** Last sampleSize results, oldest first (window mode only). */
  samples: boolean[];
  /** Failure class of the latest result (live figure, changes with every probe). */
  lastResult?: string;
  /**
   * Failure class of the result that set the current state. Status shows this one,
   * so a probe that changes no state writes nothing.
   */
  stateResult?: string;
  lastProbeAt?: EpochMs;
}

export interface HealthTransition {
  from: HealthStateName;
  to: HealthStateName;
  reason: string;
}

export interface HealthSeed {
  state: HealthStateName;
  since: EpochMs;
  unhealthySince?: EpochMs;
  /** The failure class persisted in status, shown again until the next transition. */
  lastResult?: string;
  /** A flap quarantine persisted in status: it runs its course after a restart (the flap history does not survive). */
  quarantinedUntil?: EpochMs;
}

/** Counters only need to reach the largest threshold (100); beyond that they saturate. */
export const COUNTER_LIMIT = 1_000_000;

/**
 * A fresh record, or one restored from `status.pods` after a restart.
 *
 * Restoring keeps state, since and unhealthySince (so the replacement window is neither
 * reset nor shortened) and starts counters and samples empty. Because a state only
 * changes when a threshold (or a full window) is reached afresh, the first result after
 * a restart cannot flip the state on its own unless the threshold is 1 — exactly as the
 * contract would judge that one result. unhealthySince is dropped unless the seed is
 * Unhealthy: it means "continuously Unhealthy since", nothing else.
 */
export function initialHealth(seed?: HealthSeed, unknownSince: EpochMs = 0): HealthRecord {
  if (!seed) {
    return { state: "Unknown", since: unknownSince, consecutiveSuccesses: 0, consecutiveFailures: 0, samples: [] };
  }
  const record: HealthRecord = {
    state: seed.state,
    since: seed.since,
    consecutiveSuccesses: 0,
    consecutiveFailures: 0,
    samples: [],
  };
  if (seed.state === "Unhealthy") record.unhealthySince = seed.unhealthySince ?? seed.since;
  if (seed.lastResult !== undefined) record.stateResult = seed.lastResult;
  return record;
}

/** Whether a pod is still inside its startup grace at `at`, with the reason. */
export function computeStartupGrace(
  podStartedAt: EpochMs,
  at: EpochMs,
  startupGraceSeconds: number,
): { inGrace: boolean; reason: string } {
  const endsAt = podStartedAt + startupGraceSeconds * 1000;
  if (startupGraceSeconds > 0 && at < endsAt) {
    return { inGrace: true, reason: `pod younger than startupGraceSeconds=${startupGraceSeconds}` };
  }
  return { inGrace: false, reason: "startup grace over" };
}

/**
 * Applies one probe result to a pod's record.
 *
 * - Threshold mode: successThreshold consecutive successes -> Healthy, failureThreshold
 *   consecutive failures -> Unhealthy, from any state.
 * - Window mode: once sampleSize results exist, Healthy iff at least
 *   successfulSamplesRequired of the last sampleSize succeeded, else Unhealthy; before
 *   that the state does not change (Unknown for a new pod, the restored state otherwise).
 * - Inside startup grace a pod is never made Unhealthy: a verdict of Unhealthy leaves it
 *   in its current state (Unknown stays Unknown, Healthy stays Healthy). The failure
 *   counter keeps counting, so the first failure after the grace ends decides.
 *   Going Healthy -> Unknown instead would drain the pod outside the maxUnhealthyPercent
 *   cap, which only counts Unhealthy pods.
 * - Nothing here ever moves a pod to Unknown, so unhealthySince is only cleared by a
 *   return to Healthy.
 */
export function computeHealth(
  prev: HealthRecord | undefined,
  result: ProbeOutcome,
  settings: EvaluationSettings,
  podStartedAt: EpochMs,
): { record: HealthRecord; transition?: HealthTransition } {
  const base = prev ?? initialHealth(undefined, podStartedAt);
  const consecutiveSuccesses = result.success ? Math.min(base.consecutiveSuccesses + 1, COUNTER_LIMIT) : 0;
  const consecutiveFailures = result.success ? 0 : Math.min(base.consecutiveFailures + 1, COUNTER_LIMIT);
  const samples = settings.window ? [...base.samples, result.success].slice(-settings.window.sampleSize) : [];

  const verdict = judge({ consecutiveSuccesses, consecutiveFailures, samples }, result, settings);
  let to = verdict?.state ?? base.state;
  const reason = verdict?.reason ?? "";
  if (to === "Unhealthy" && computeStartupGrace(podStartedAt, result.at, settings.startupGraceSeconds).inGrace) {
    to = base.state;
  }

  const record: HealthRecord = {
    state: to,
    since: base.since,
    consecutiveSuccesses,
    consecutiveFailures,
    samples,
    lastResult: result.failureClass,
    lastProbeAt: result.at,
  };
  if (base.unhealthySince !== undefined) record.unhealthySince = base.unhealthySince;
  if (base.stateResult !== undefined) record.stateResult = base.stateResult;
  if (to === base.state) return { record };

  record.since = result.at;
  record.stateResult = result.failureClass;
  if (to === "Unhealthy") record.unhealthySince = result.at;
  else delete record.unhealthySince;
  return { record, transition: { from: base.state, to, reason } };
}

/** The state the counters or the window call for, or undefined when they call for none. */
function judge(
  counts: { consecutiveSuccesses: number; consecutiveFailures: number; samples: boolean[] },
  result: ProbeOutcome,
  settings: EvaluationSettings,
): { state: HealthStateName; reason: string } | undefined {
  const window = settings.window;
  if (window) {
    if (counts.samples.length < window.sampleSize) return undefined;
    const ok = counts.samples.filter(Boolean).length;
    const of = `${ok} of the last ${window.sampleSize} probes succeeded, ${window.successfulSamplesRequired} required`;
    return ok >= window.successfulSamplesRequired
      ? { state: "Healthy", reason: of }
      : { state: "Unhealthy", reason: `${of} (last: ${result.failureClass})` };
  }
  if (result.success && counts.consecutiveSuccesses >= settings.successThreshold) {
    return {
      state: "Healthy",
      reason: `${counts.consecutiveSuccesses} consecutive successes (successThreshold=${settings.successThreshold})`,
    };
  }
  if (!result.success && counts.consecutiveFailures >= settings.failureThreshold) {
    return {
      state: "Unhealthy",
      reason: `${counts.consecutiveFailures} consecutive failures (failureThreshold=${settings.failureThreshold}), last: ${result.failureClass}`,
    };
  }
  return undefined;
}
