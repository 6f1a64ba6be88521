// The mutating admission webhook's handler: a pod being created in a namespace whose
// ReadinessGate policy selects it gets the readiness gate. It reads the policy cache only, so
// every replica serves it, leader or not. It never refuses a pod: a request it cannot read, a
// cache not yet synced or any error answers "allowed" without a patch (and the webhook
// configuration's failurePolicy: Ignore covers the operator being down).
import { parsePolicy } from "./parsed-policy.js";
import type { KubeObject, ObjectCache, PolicyObject } from "./kube-objects.js";
import { planGateInjection, type GateInjection, type GatePolicy } from "../domain/readiness-gate-injection.js";
import type { LabelSelector } from "../domain/label-selector.js";
import {
  admissionResponse,
  parseAdmissionReview,
  type AdmissionRequest,
  type AdmissionReviewResponse,
} from "../runtime/admission-review.js";
import type { Logger } from "../runtime/logger.js";

export type WebhookOutcome = "patched" | "skipped" | "error";

export interface PodGateWebhookDeps {
  policies: ObjectCache<PolicyObject>;
  /** False until the policy cache has synced: no decision from a partial cache. */
  synced: () => boolean;
  logger: Logger;
  onOutcome?: (outcome: WebhookOutcome) => void;
}

export type WebhookAnswer = { status: 200; body: AdmissionReviewResponse } | { status: 400; body: string };

/** What the decision needs of a cached policy, read without trusting its spec. */
export function gatePolicyOf(obj: PolicyObject): GatePolicy {
  const spec = (obj.spec ?? {}) as { selector?: LabelSelector; dryRun?: unknown; drain?: { method?: unknown } };
  const parsed = parsePolicy(obj);
  const method = parsed.ok ? parsed.policy.spec.drain.method : spec.drain?.method;
  return {
    name: obj.metadata?.name ?? "",
    method: typeof method === "string" ? method : undefined,
    selector: parsed.ok ? parsed.policy.spec.selector : spec.selector,
    valid: parsed.ok,
    dryRun: parsed.ok ? parsed.policy.spec.dryRun === true : spec.dryRun === true,
    deleting: Boolean(obj.metadata?.deletionTimestamp),
  };
}

interface PodFields {
  metadata?: { labels?: Record<string, string>; namespace?: string; name?: string; generateName?: string };
  spec?: { readinessGates?: Array<{ conditionType?: string }> };
}

function decide(request: AdmissionRequest, deps: PodGateWebhookDeps): GateInjection & { pod: string } {
  const pod = (request.object ?? {}) as PodFields & KubeObject;
  const namespace = request.namespace || pod.metadata?.namespace || "";
  const name = `${namespace}/${pod.metadata?.name || `${pod.metadata?.generateName ?? ""}*`}`;
  if (!deps.synced()) return { inject: false, reason: "the policy cache has not synced yet", pod: name };
  const policies = deps.policies.list(namespace).map(gatePolicyOf);
  return {
    ...planGateInjection(policies, { labels: pod.metadata?.labels, readinessGates: pod.spec?.readinessGates }),
    pod: name,
  };
}

export function handlePodAdmission(body: unknown, deps: PodGateWebhookDeps): WebhookAnswer {
  const parsed = parseAdmissionReview(body);
  if (!parsed.ok) {
    deps.logger.warn({ reason: parsed.message }, "admission review not understood; allowing the request unchanged");
    deps.onOutcome?.("error");
    // Without a uid there is nothing kube-apiserver would accept; it then applies the failure policy (Ignore).
    return parsed.uid
      ? { status: 200, body: admissionResponse(parsed.uid) }
      : { status: 400, body: `${parsed.message}\n` };
  }
  const { request } = parsed;
  const { kind } = request.kind;
  if (request.kind.group !== "" || kind !== "Pod" || request.operation !== "CREATE") {
    deps.onOutcome?.("skipped");
    return { status: 200, body: admissionResponse(request.uid) };
  }
  try {
    const plan = decide(request, deps);
    deps.onOutcome?.(plan.inject ? "patched" : "skipped");
    deps.logger.debug(
      { pod: plan.pod, uid: request.uid, inject: plan.inject, reason: plan.reason, dryRun: request.dryRun },
      "pod admission",
    );
    return { status: 200, body: admissionResponse(request.uid, plan.inject ? plan.patch : undefined) };
  } catch (err) {
    deps.logger.error({ err, uid: request.uid }, "pod admission failed; allowing the pod without the readiness gate");
    deps.onOutcome?.("error");
    return { status: 200, body: admissionResponse(request.uid) };
  }
}
