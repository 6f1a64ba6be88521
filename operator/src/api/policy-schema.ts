// HealthProbePolicy v1alpha1: the one schema. The CRD (crd.ts), the runtime check
// (parse-policy.ts) and the TypeScript types are all derived from it; the probe half is in probe-schema.ts.
import { z } from "zod";
import { API_VERSION, DRAIN_METHODS, KIND } from "./group.js";
import { DURATION_PATTERN, parseDuration } from "./duration.js";
import { CROSS_FIELD_RULES, RESERVED_HEADERS, cel, fail, invalidValue } from "./cross-field-rules.js";
import { DNS1035_LABEL } from "./dns-names.js";
import {
  conditionSchema,
  healthProbePolicyStatusSchema,
  podStatusEntrySchema,
  replacementRecordSchema,
} from "./policy-status-schema.js";
import { desc, intIn, oneOf } from "./schema-helpers.js";
import { flapQuarantineSchema, whenAllUnhealthySchema } from "./drain-mode-schema.js";
import { diagnosticsRetentionSchema, keepDiagnosticsSchema } from "./diagnostics-schema.js";
import { labelSelectorSchema, probeSchema } from "./probe-schema.js";

export { CROSS_FIELD_RULES, RESERVED_HEADERS, invalidValue, labelSelectorSchema };
export type { CrossFieldRule } from "./cross-field-rules.js";
export { conditionSchema, healthProbePolicyStatusSchema, podStatusEntrySchema, replacementRecordSchema };

const windowSchema = z
  .strictObject({
    sampleSize: intIn(1, 100).default(4).meta(desc("Number of most recent results judged, 1-100.")),
    successfulSamplesRequired: intIn(1, 100)
      .default(2)
      .meta(desc("Successes among the last sampleSize results for Healthy, 1-100 and at most sampleSize.")),
  })
  .meta({
    ...desc(
      "Judges the last sampleSize results instead of consecutive thresholds: Healthy iff at least successfulSamplesRequired succeeded, Unknown until sampleSize results exist. When set, failureThreshold and successThreshold are not used.",
    ),
    ...cel("windowSamples"),
  })
  .superRefine((w, ctx) => {
    if (w.successfulSamplesRequired > w.sampleSize)
      fail(ctx, ["successfulSamplesRequired"], w.successfulSamplesRequired, "windowSamples", w);
  });

const evaluationSchema = z
  .strictObject({
    failureThreshold: intIn(1, 100).default(10).meta(desc("Consecutive failures that make a pod Unhealthy, 1-100.")),
    successThreshold: intIn(1, 100).default(1).meta(desc("Consecutive successes that make a pod Healthy, 1-100.")),
    window: windowSchema.optional(),
    startupGraceSeconds: intIn(0, 86400)
      .default(0)
      .meta(
        desc(
          "A pod younger than this (seconds) is never marked Unhealthy; it still stays out of rotation until its first success.",
        ),
      ),
    flapQuarantine: flapQuarantineSchema.optional(),
  })
  .prefault({})
  .meta(desc("How probe results become a health state (Unknown, Healthy, Unhealthy) per pod."));

const drainSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .meta(
        desc(
          "Takes Unhealthy pods out of rotation (endpoint ready=false, or the pod condition healthprobe.io/ready False).",
        ),
      ),
    method: oneOf(
      DRAIN_METHODS,
      "EndpointSlice: the operator writes the EndpointSlices of spec.serviceName, a Service without spec.selector. ReadinessGate: the operator sets the pod condition healthprobe.io/ready, which the kubelet folds into Ready for pods with that readiness gate, so every Service and client sees it.",
    ).default("EndpointSlice"),
    maxUnhealthyPercent: intIn(1, 100)
      .default(50)
      .meta(
        desc(
          "At most this percentage of the targets (rounded down) is drained; the longest-unhealthy go first, the rest stay in rotation. 1-100.",
        ),
      ),
    whenAllUnhealthy: whenAllUnhealthySchema,
  })
  .prefault({})
  .meta(
    desc(
      "Taking Unhealthy pods out of rotation, by the method chosen. When no target is Healthy, nothing is drained (fail open) unless whenAllUnhealthy is FailClosed.",
    ),
  );

const afterSchema = z
  .string()
  .max(64)
  .regex(new RegExp(DURATION_PATTERN), `must be a duration such as "1h", "90m" or "1h30m"`)
  .default("1h")
  .meta({
    ...desc(`Continuous Unhealthy time before a pod is replaced: a duration from "30s" to "168h", e.g. "1h", "90m".`),
    ...cel("afterRange"),
  })
  .superRefine((a, ctx) => {
    // An unparsable value is already reported by the pattern.
    if (!new RegExp(DURATION_PATTERN).test(a)) return;
    const ms = parseDuration(a);
    if (ms < 30_000 || ms > 168 * 3_600_000) fail(ctx, [], a, "afterRange", a);
  });

const replacementSchema = z
  .strictObject({
    enabled: z.boolean().default(true).meta(desc("Replaces pods that stay Unhealthy for `after`, within the budgets.")),
    after: afterSchema,
    maxPerHour: intIn(0, 1000).default(1).meta(desc("Replacements allowed in any sliding 60 minutes, 0-1000.")),
    maxPerDay: intIn(0, 10000)
      .default(3)
      .meta(desc("Replacements allowed in any sliding 24 hours, 0-10000 and at least maxPerHour.")),
    method: oneOf(
      ["Evict", "Delete"],
      "Evict (Eviction API, honours PodDisruptionBudgets) or Delete. The pod's controller recreates it; a pod without one is never replaced.",
    ).default("Evict"),
    pauseAboveUnhealthyPercent: intIn(1, 100)
      .default(50)
      .meta(
        desc(
          "Mass-failure breaker: while more than this percentage of the targets is Unhealthy (Unhealthy / targets, strictly greater), no pod is replaced; the replacement windows keep running. 1-100; 100 turns it off.",
        ),
      ),
    keepDiagnostics: keepDiagnosticsSchema,
    diagnosticsRetention: diagnosticsRetentionSchema,
  })
  .prefault({})
  .meta({
    ...desc("Replacing pods that stay Unhealthy, so their controller recreates them."),
    ...cel("dailyAtLeastHourly"),
  })
  .superRefine((r, ctx) => {
    if (r.maxPerDay < r.maxPerHour) fail(ctx, ["maxPerDay"], r.maxPerDay, "dailyAtLeastHourly", r);
  });

export const healthProbePolicySpecSchema = z
  .strictObject({
    serviceName: z
      .string()
      .min(1)
      .max(63)
      .regex(DNS1035_LABEL, "must be a Service name (a DNS-1035 label)")
      .optional()
      .meta(
        desc(
          "A Service in the policy's namespace. Method EndpointSlice (required): a Service without spec.selector, whose EndpointSlices the operator writes. Method ReadinessGate (optional): an ordinary Service whose ready endpoints status reports.",
        ),
      ),
    selector: labelSelectorSchema,
    dryRun: z
      .boolean()
      .default(false)
      .meta(
        desc(
          "Probe, decide and report (status, events, metrics) but change nothing: endpoints stay as kubelet says, nothing is replaced.",
        ),
      ),
    probe: probeSchema,
    evaluation: evaluationSchema,
    drain: drainSchema,
    replacement: replacementSchema,
  })
  .meta({
    ...desc("Desired behaviour: which pods to probe, how, and what to do with Unhealthy ones."),
    ...cel("serviceNameForEndpointSlice"),
  })
  .superRefine((s, ctx) => {
    // Worded as Kubernetes words a missing field: "Required value: <why>".
    const why = CROSS_FIELD_RULES.serviceNameForEndpointSlice.message;
    if (s.serviceName === undefined && s.drain.method !== "ReadinessGate")
      ctx.addIssue({
        code: "custom",
        path: ["serviceName"],
        message: `Required value: ${why}`,
        params: { formatted: true },
      });
  });

// ---------------------------------------------------------------------------------------
// The whole object, as the operator reads it.

export const objectMetaSchema = z.object({
  name: z.string().min(1),
  namespace: z.string().min(1),
  uid: z.string().default(""),
  generation: z.number().int().default(0),
  resourceVersion: z.string().default(""),
  creationTimestamp: z.string().default(""),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const healthProbePolicySchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND),
  metadata: objectMetaSchema,
  spec: healthProbePolicySpecSchema,
  status: healthProbePolicyStatusSchema.optional(),
});

/** A spec after parsing: every default applied. */
export type HealthProbePolicySpec = z.output<typeof healthProbePolicySpecSchema>;
/** A spec as a user writes it: defaults optional. */
export type HealthProbePolicySpecInput = z.input<typeof healthProbePolicySpecSchema>;
export type LabelSelector = z.output<typeof labelSelectorSchema>;
export type ProbeSpec = HealthProbePolicySpec["probe"];
export type HealthProbePolicyStatus = z.output<typeof healthProbePolicyStatusSchema>;
export type PodStatusEntry = z.output<typeof podStatusEntrySchema>;
export type ReplacementRecord = z.output<typeof replacementRecordSchema>;
export type Condition = z.output<typeof conditionSchema>;
export type HealthProbePolicyMetadata = z.output<typeof objectMetaSchema>;
export type HealthProbePolicy = z.output<typeof healthProbePolicySchema>;
