// The timeout a probe runs with: the policy's timeoutSeconds, at most the operator's
// --max-probe-timeout. A probe of a pod that accepts and never answers holds its slot for the
// whole timeout, so one tenant asking for an hour would hold slots for an hour; all probe types.

import type { ProbeJudgement } from "./probe-request.js";

export interface EffectiveTimeout {
  timeoutMs: number;
  /** Set when the cap applied: says so for the policy's status. */
  cappedReason?: string;
}

/** maxTimeoutMs of 0 or less: no cap. */
export function effectiveProbeTimeout(requestedMs: number, maxTimeoutMs: number): EffectiveTimeout {
  if (maxTimeoutMs <= 0 || requestedMs <= maxTimeoutMs) return { timeoutMs: requestedMs };
  return {
    timeoutMs: maxTimeoutMs,
    cappedReason: `spec.probe.timeoutSeconds ${requestedMs / 1000} capped to ${maxTimeoutMs / 1000}: the operator's --max-probe-timeout is ${maxTimeoutMs / 1000}s`,
  };
}

/** The judgement with its timeout capped (the same object when the cap does not apply). */
export function cappedJudgement(judgement: ProbeJudgement, maxTimeoutMs: number): ProbeJudgement {
  const { timeoutMs } = effectiveProbeTimeout(judgement.timeoutMs, maxTimeoutMs);
  return timeoutMs === judgement.timeoutMs ? judgement : { ...judgement, timeoutMs };
}
