// Mutating admission webhooks for pod CREATE (k8s.io/apiserver pkg/admission/plugin/webhook): every
// MutatingWebhookConfiguration webhook whose rules, namespaceSelector and objectSelector match is
// called in order (configurations by name, webhooks as listed) at its `clientConfig.url` with an
// AdmissionReview v1; its JSONPatch is applied to the pod. A webhook that cannot be called, times
// out or answers badly fails the create with failurePolicy Fail (the default) and is skipped with
// Ignore; a webhook that denies fails the create with its status. `clientConfig.service` is not
// served (there is no Service network here): such a webhook counts as one that cannot be called.
import { randomUUID } from "node:crypto";
import { Agent, fetch } from "undici";
import type { Cluster } from "./cluster.js";
import { ApiError } from "./errors.js";
import { applyJsonPatch } from "./patch.js";
import { matchesLabelSelectorObject } from "./selectors.js";
import type { KubeObject } from "./store.js";

type Obj = Record<string, any>;

const DEFAULT_TIMEOUT_SECONDS = 10;

function ruleMatches(rule: Obj): boolean {
  const has = (list: unknown, value: string) => Array.isArray(list) && (list.includes("*") || list.includes(value));
  return (
    has(rule.operations, "CREATE") &&
    has(rule.apiGroups, "") &&
    has(rule.apiVersions, "v1") &&
    has(rule.resources, "pods") &&
    (rule.scope ?? "*") !== "Cluster"
  );
}

function webhookApplies(webhook: Obj, namespaceLabels: Record<string, string>, pod: Obj): boolean {
  if (!(webhook.rules ?? []).some(ruleMatches)) return false;
  // A missing selector selects everything; an empty one too (LabelSelectorAsSelector).
  const selects = (selector: Obj | undefined, labels: Record<string, string>) =>
    !selector || matchesLabelSelectorObject(selector, labels) || isEmpty(selector);
  return (
    selects(webhook.namespaceSelector, namespaceLabels) && selects(webhook.objectSelector, pod.metadata?.labels ?? {})
  );
}

const isEmpty = (s: Obj): boolean =>
  Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

export interface AdmissionRequestInfo {
  namespace: string;
  user: string;
  dryRun: boolean;
}

/** Runs the mutating webhooks that apply to a pod create; returns the pod as they leave it. */
export async function admitPodCreate(cluster: Cluster, pod: Obj, info: AdmissionRequestInfo): Promise<Obj> {
  const configs = cluster.registry.find("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations");
  const nsType = cluster.registry.find("", "v1", "namespaces");
  if (!configs || !nsType) return pod;
  const all = cluster.list(configs, undefined).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  if (all.length === 0) return pod;
  let namespaceLabels: Record<string, string> = {};
  try {
    namespaceLabels = cluster.get(nsType, undefined, info.namespace).metadata.labels ?? {};
  } catch {
    // The create itself reports the missing namespace.
  }
  let current: Obj = { ...pod, metadata: { ...(pod.metadata ?? {}), namespace: info.namespace } };
  for (const config of all) {
    for (const webhook of (config as Obj).webhooks ?? []) {
      if (!webhookApplies(webhook, namespaceLabels, current)) continue;
      current = await callWebhook(webhook, current, info);
    }
  }
  return current;
}

async function callWebhook(webhook: Obj, pod: Obj, info: AdmissionRequestInfo): Promise<Obj> {
  const name = String(webhook.name ?? "");
  const failurePolicy = webhook.failurePolicy ?? "Fail";
  let response: Obj;
  try {
    response = await post(webhook, review(pod, info));
  } catch (err) {
    if (failurePolicy === "Ignore") return pod;
    throw new ApiError(
      500,
      "InternalError",
      `Internal error occurred: failed calling webhook "${name}": ${(err as Error).message}`,
    );
  }
  if (response.allowed !== true) {
    const status = response.status ?? {};
    const code = Number(status.code) || 400;
    throw new ApiError(
      code,
      status.reason ?? "BadRequest",
      `admission webhook "${name}" denied the request${status.message ? `: ${status.message}` : " without explanation"}`,
    );
  }
  if (!response.patch) return pod;
  try {
    if (response.patchType !== "JSONPatch") throw new Error(`unsupported patch type "${String(response.patchType)}"`);
    const ops = JSON.parse(Buffer.from(String(response.patch), "base64").toString("utf8"));
    return applyJsonPatch(pod as KubeObject, ops) as Obj;
  } catch (err) {
    if (failurePolicy === "Ignore") return pod;
    throw new ApiError(
      500,
      "InternalError",
      `Internal error occurred: failed calling webhook "${name}": ${(err as Error).message}`,
    );
  }
}

function review(pod: Obj, info: AdmissionRequestInfo): Obj {
  const gvk = { group: "", version: "v1", kind: "Pod" };
  const gvr = { group: "", version: "v1", resource: "pods" };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: pod.metadata?.name ?? "",
      namespace: info.namespace,
      operation: "CREATE",
      userInfo: { username: info.user },
      object: pod,
      oldObject: null,
      dryRun: info.dryRun,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    },
  };
}

async function post(webhook: Obj, body: Obj): Promise<Obj> {
  const base = webhook.clientConfig?.url;
  if (typeof base !== "string")
    throw new Error("clientConfig.service is not served by this API server: give clientConfig.url");
  const timeoutSeconds = webhook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  // As the real server, the call carries its deadline in the query.
  const url = `${base}${base.includes("?") ? "&" : "?"}timeout=${timeoutSeconds}s`;
  const ca = webhook.clientConfig?.caBundle
    ? Buffer.from(String(webhook.clientConfig.caBundle), "base64").toString("utf8")
    : undefined;
  const agent = new Agent({ connect: ca ? { ca } : {} });
  const timeoutMs = timeoutSeconds * 1000;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    }).catch((err: Error) => {
      throw new Error(
        `failed to call webhook: Post "${url}": ${err.name === "TimeoutError" ? "context deadline exceeded" : String((err.cause as Error | undefined)?.message ?? err.message)}`,
      );
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new Error(`received invalid webhook response: HTTP ${res.status}`);
    const parsed = JSON.parse(text) as Obj;
    const response = parsed.response;
    if (!response || response.uid !== body.request.uid)
      throw new Error(`expected response.uid="${body.request.uid}", got "${String(response?.uid ?? "")}"`);
    return response;
  } finally {
    await agent.close();
  }
}
