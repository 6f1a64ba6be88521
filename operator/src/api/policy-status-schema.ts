// HealthProbePolicy v1alpha1 status: what the operator writes. Part of the one schema
// (policy-schema.ts), from which the CRD is generated.
import { z } from "zod";
import { desc, oneOf } from "./schema-helpers.js";

const time = (d: string) => z.iso.datetime({ offset: true }).meta(desc(d));

export const conditionSchema = z
  .strictObject({
    type: z
      .string()
      .min(1)
      .max(316)
      .regex(
        /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
        "must be a condition type",
      )
      .meta(
        desc(
          "Condition type: Ready, Degraded, FailOpen (or FailClosed with spec.drain.whenAllUnhealthy FailClosed), DrainCapped, ReplacementBlocked, RolloutSuspect, GateMissing or DisagreesWithKubelet.",
        ),
      ),
    status: oneOf(["True", "False", "Unknown"], "True, False or Unknown."),
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta(desc("The metadata.generation the condition was set for.")),
    lastTransitionTime: time("When the condition last changed status."),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/, "must be a CamelCase reason")
      .meta(desc("Programmatic identifier of the last transition, in CamelCase.")),
    message: z.string().max(32768).meta(desc("Human-readable details of the last transition.")),
  })
  .meta(desc("A condition of the policy (metav1.Condition)."));

export const podStatusEntrySchema = z
  .strictObject({
    name: z.string().min(1).max(253).meta(desc("Pod name.")),
    uid: z.string().min(1).max(64).meta(desc("Pod UID.")),
    ip: z.string().max(45).optional().meta(desc("Pod IP that is probed.")),
    state: oneOf(["Unknown", "Healthy", "Unhealthy"], "Health state for this policy: Unknown, Healthy or Unhealthy."),
    since: time("Time of the last state change."),
    drained: z.boolean().meta(desc("Whether the pod is out of rotation because of this policy.")),
    lastResult: z
      .string()
      .max(256)
      .optional()
      .meta(desc(`Class of the last probe outcome, e.g. "HTTP 503", "connect ECONNREFUSED", "timeout after 60s".`)),
    unhealthySince: time("When the pod became Unhealthy; cleared on any return to Healthy.").optional(),
    replaceAfter: time("When the replacement window ends for this pod.").optional(),
    quarantinedUntil: time(
      "When the pod's flap quarantine ends (spec.evaluation.flapQuarantine); present only while it lasts.",
    ).optional(),
    reason: z.string().max(1024).optional().meta(desc("Why the pod is (or is not) drained or replaced.")),
    disagreesWithKubelet: z
      .strictObject({
        since: time("When the verdict and kubelet readiness began to disagree."),
        kind: oneOf(
          ["ProbeHealthyKubeletNotReady", "ProbeUnhealthyKubeletReady"],
          "ProbeHealthyKubeletNotReady or ProbeUnhealthyKubeletReady.",
        ),
      })
      .optional()
      .meta(
        desc(
          "Set while this policy's verdict and the pod's Ready condition have disagreed for longer than one probe period (the shadow report).",
        ),
      ),
  })
  .meta(desc("Health of one target pod."));

export const replacementRecordSchema = z
  .strictObject({
    pod: z.string().min(1).max(253).meta(desc("Name of the replaced pod.")),
    uid: z.string().min(1).max(64).meta(desc("UID of the replaced pod.")),
    time: time("When the replacement was attempted (and charged to the budgets)."),
    method: oneOf(["Evict", "Delete"], "Evict or Delete."),
  })
  .meta(desc("One replacement charged to the budgets."));

export const diagnosticsRecordSchema = z
  .strictObject({
    pod: z.string().min(1).max(253).meta(desc("Name of the replaced pod.")),
    configMap: z
      .string()
      .min(1)
      .max(253)
      .meta(desc("The ConfigMap in the policy's namespace holding its diagnostics.")),
    time: time("When they were captured, just before the replacement."),
  })
  .meta(desc("Diagnostics kept for one replaced pod."));

const count = (d: string) => z.number().int().min(0).optional().meta(desc(d));

export const healthProbePolicyStatusSchema = z
  .strictObject({
    observedGeneration: z.number().int().min(0).optional().meta(desc("The metadata.generation last acted upon.")),
    conditions: z
      .array(conditionSchema)
      .max(16)
      .optional()
      .meta({
        ...desc(
          "Ready, Degraded, FailOpen (or FailClosed), DrainCapped, ReplacementBlocked, RolloutSuspect, GateMissing and DisagreesWithKubelet.",
        ),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    targets: count("Selected pods that are Running with a pod IP and not terminating."),
    healthy: count("Targets in state Healthy."),
    unhealthy: count("Targets in state Unhealthy."),
    unknown: count("Targets in state Unknown."),
    drained: count("Targets out of rotation because of this policy."),
    replacedInLastDay: count("Replacements in the last 24 hours."),
    serviceEndpoints: z
      .strictObject({
        name: z.string().max(63).meta(desc("The Service (spec.serviceName).")),
        ready: count("Its endpoints ready in the EndpointSlices Kubernetes' EndpointSlice controller writes."),
        total: count("Its endpoints in those EndpointSlices, ready or not."),
      })
      .optional()
      .meta(
        desc("Drain method ReadinessGate with spec.serviceName: that Service's endpoints as Kubernetes serves them."),
      ),
    pods: z
      .array(podStatusEntrySchema)
      .max(1000)
      .optional()
      .meta({
        ...desc("Per-pod health, at most 1000 entries, non-Healthy first."),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    replacements: z
      .array(replacementRecordSchema)
      .max(10000)
      .optional()
      .meta({
        ...desc(
          "The replacement ledger of the last 24 hours, as the operator mirrors it from the policy's ledger ConfigMap (<policy>-healthprobe-ledger), which the budgets are enforced from; with no such ConfigMap yet, its starting point.",
        ),
        "x-kubernetes-list-type": "atomic",
      }),
    diagnostics: z
      .array(diagnosticsRecordSchema)
      .max(20)
      .optional()
      .meta({
        ...desc(
          "Diagnostics ConfigMaps kept for replaced pods, newest first (at most 20, for spec.replacement.diagnosticsRetention).",
        ),
        "x-kubernetes-list-type": "atomic",
      }),
    shard: z
      .string()
      .max(253)
      .optional()
      .meta(
        desc(
          "With --shards=on: the identity of the operator replica that owns this policy's namespace and wrote this status.",
        ),
      ),
  })
  .meta(desc("Observed state, written by the operator."));
