// Identity of the HealthProbePolicy API and the well-known labels the operator writes.

export const GROUP = "healthprobe.io";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "HealthProbePolicy";
export const LIST_KIND = "HealthProbePolicyList";
export const PLURAL = "healthprobepolicies";
export const SINGULAR = "healthprobepolicy";
export const SHORT_NAME = "hpp";
export const CATEGORY = "healthprobe";
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** Prefix of every label and annotation the project owns. */
export const LABEL_PREFIX = `${GROUP}/`;
export const ANNOTATION_PREFIX = LABEL_PREFIX;

/** Marks EndpointSlices written by the operator, as the built-in controller marks its own. */
export const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
// A label value cannot contain "/": the built-in controller uses "endpointslice-controller.k8s.io".
export const MANAGED_BY_VALUE = "healthprobe-operator.healthprobe.io";
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** How a policy takes pods out of rotation (spec.drain.method). */
export const DRAIN_METHODS = ["EndpointSlice", "ReadinessGate"] as const;
export type DrainMethod = (typeof DRAIN_METHODS)[number];

/**
 * The pod condition the operator owns with method ReadinessGate: True admits the pod,
 * False keeps it out. Pods opt in with `readinessGates: [{conditionType: healthprobe.io/ready}]`.
 */
export const READINESS_GATE_CONDITION = `${GROUP}/ready`;
/** Reasons of the pod condition healthprobe.io/ready. */
export const READINESS_GATE_REASONS = ["Admitted", "Unhealthy", "WarmingUp", "Quarantined", "NoPolicy"] as const;
export type ReadinessGateReason = (typeof READINESS_GATE_REASONS)[number];

/** Condition types of status.conditions. */
export const CONDITION_TYPES = {
  ready: "Ready",
  degraded: "Degraded",
  failOpen: "FailOpen",
  /** In place of FailOpen for a policy with spec.drain.whenAllUnhealthy FailClosed. */
  failClosed: "FailClosed",
  drainCapped: "DrainCapped",
  replacementBlocked: "ReplacementBlocked",
  gateMissing: "GateMissing",
} as const;

/** Event reasons, on the policy and on the pod involved. */
export const EVENT_REASONS = [
  "Drained",
  "Restored",
  "DrainCapped",
  "FailOpen",
  "FailClosed",
  "Quarantined",
  "Replaced",
  "ReplacementBlocked",
  "InvalidSpec",
  "SecretNotPermitted",
  "SecretForbidden",
  "GateMissing",
] as const;
