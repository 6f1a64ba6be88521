// Plain data shared by the decision core. Times are epoch milliseconds (`number`)
// everywhere inside the core; only status output carries RFC 3339 strings.

export type HealthStateName = "Unknown" | "Healthy" | "Unhealthy";

/** Epoch milliseconds. */
export type EpochMs = number;

/** The evaluation part of a policy spec, structurally (the API types map onto it). */
export interface EvaluationSettings {
  failureThreshold: number;
  successThreshold: number;
  /** When set, the thresholds are not used. */
  window?: { sampleSize: number; successfulSamplesRequired: number };
  startupGraceSeconds: number;
}

/** A policy's `spec.evaluation` (defaults applied) as the health evaluation reads it. */
export function evaluationSettingsOf(e: {
  failureThreshold: number;
  successThreshold: number;
  startupGraceSeconds: number;
  window?: { sampleSize: number; successfulSamplesRequired: number } | undefined;
}): EvaluationSettings {
  const s: EvaluationSettings = {
    failureThreshold: e.failureThreshold,
    successThreshold: e.successThreshold,
    startupGraceSeconds: e.startupGraceSeconds,
  };
  if (e.window)
    s.window = { sampleSize: e.window.sampleSize, successfulSamplesRequired: e.window.successfulSamplesRequired };
  return s;
}

/** One probe outcome as the evaluation sees it: no latency, it would change every probe. */
export interface ProbeOutcome {
  success: boolean;
  /** "HTTP 200", "HTTP 503", "connect ECONNREFUSED", "timeout after 60s", ... */
  failureClass: string;
  at: EpochMs;
}

/** How a policy drains: active, or only reporting what it would do. */
export type DrainMode = "active" | "dryRun" | "disabled";

/** metav1.Condition, as plain data. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}
