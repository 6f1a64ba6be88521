// Small builders for the decision core's plain data. Defaults describe an ordinary,
// healthy situation; a test states only what matters to it.
import type { DrainTarget } from "../drain.js";
import type { HealthRecord } from "../health.js";
import type { PolicyStatus, StatusPod, StatusPodInput } from "../status.js";
import type { EvaluationSettings, ProbeOutcome } from "../types.js";

/** 2026-01-01T00:00:00Z: a fixed origin for fake clocks. */
export const T0 = Date.UTC(2026, 0, 1);
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export function aTarget(overrides: Partial<DrainTarget> = {}): DrainTarget {
  const name = overrides.name ?? "web-0";
  return { uid: `uid-${name}`, name, state: "Healthy", kubeletReady: true, serving: true, ...overrides };
}

/**
 * Targets web-0, web-1, ... in the given states; Unhealthy ones unhealthy since T0 + i minutes.
 * Unknown ones are new pods, never in rotation (warm-up); the others are serving.
 */
export function someTargets(...states: DrainTarget["state"][]): DrainTarget[] {
  return states.map((state, i) =>
    aTarget({
      name: `web-${i}`,
      state,
      serving: state !== "Unknown",
      ...(state === "Unhealthy" ? { unhealthySince: T0 + i * MINUTE } : {}),
    }),
  );
}

export function anEvaluation(overrides: Partial<EvaluationSettings> = {}): EvaluationSettings {
  return { failureThreshold: 3, successThreshold: 1, startupGraceSeconds: 0, ...overrides };
}

export function aSuccess(at: number, failureClass = "HTTP 200"): ProbeOutcome {
  return { success: true, failureClass, at };
}

export function aFailure(at: number, failureClass = "HTTP 503"): ProbeOutcome {
  return { success: false, failureClass, at };
}

export function aRecord(overrides: Partial<HealthRecord> = {}): HealthRecord {
  return { state: "Unknown", since: T0, consecutiveSuccesses: 0, consecutiveFailures: 0, samples: [], ...overrides };
}

export function aStatusPodInput(overrides: Partial<StatusPodInput> = {}): StatusPodInput {
  const name = overrides.name ?? "web-0";
  return {
    name,
    uid: `uid-${name}`,
    ip: "10.0.0.1",
    health: { state: "Healthy", since: T0, stateResult: "HTTP 200" },
    decision: { drained: false, reason: "admitted: healthy" },
    ...overrides,
  };
}

export function aStatusPod(overrides: Partial<StatusPod> = {}): StatusPod {
  const name = overrides.name ?? "web-0";
  return {
    name,
    uid: `uid-${name}`,
    ip: "10.0.0.1",
    state: "Healthy",
    since: "2026-01-01T00:00:00Z",
    drained: false,
    reason: "admitted: healthy",
    ...overrides,
  };
}

export function aStatus(overrides: Partial<PolicyStatus> = {}): PolicyStatus {
  return {
    observedGeneration: 1,
    conditions: [],
    targets: 0,
    healthy: 0,
    unhealthy: 0,
    unknown: 0,
    drained: 0,
    replacedInLastDay: 0,
    pods: [],
    replacements: [],
    ...overrides,
  };
}
