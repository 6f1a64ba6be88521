import { describe, it, expect } from "@jest/globals";
import { gatePolicyOf, handlePodAdmission, type WebhookOutcome } from "./pod-gate-webhook.js";
import type { PolicyObject } from "./kube-objects.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { NS, aPolicyObject } from "./testing/objects.js";
import { quietLogger } from "./testing/quiet-logger.js";

const gatePolicy = (name = "web", spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
  aPolicyObject(name, { serviceName: undefined, drain: { method: "ReadinessGate" }, ...spec }, meta);

function aReview(object: unknown, request: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u-1",
      kind: { group: "", version: "v1", kind: "Pod" },
      operation: "CREATE",
      namespace: NS,
      object,
      ...request,
    },
  };
}

const aPod = (labels: Record<string, string> = { app: "web" }, spec: Record<string, unknown> = {}) => ({
  metadata: { generateName: "web-", labels },
  spec: { containers: [{ name: "web" }], ...spec },
});

function answer(
  policies: PolicyObject[],
  body: unknown,
  synced = true,
): { status: number; patch: unknown; outcomes: WebhookOutcome[]; body: unknown } {
  const outcomes: WebhookOutcome[] = [];
  const a = handlePodAdmission(body, {
    policies: new MemoryCache(policies),
    synced: () => synced,
    logger: quietLogger(),
    onOutcome: (o) => outcomes.push(o),
  });
  const response = typeof a.body === "object" ? a.body.response : undefined;
  const patch = response?.patch ? JSON.parse(Buffer.from(response.patch, "base64").toString("utf8")) : undefined;
  return { status: a.status, patch, outcomes, body: a.body };
}

describe("handlePodAdmission", () => {
  it("adds the gate to a pod a ReadinessGate policy in its namespace selects", () => {
    const a = answer([gatePolicy()], aReview(aPod()));
    expect(a.patch).toEqual([
      { op: "add", path: "/spec/readinessGates", value: [{ conditionType: "healthprobe.io/ready" }] },
    ]);
    expect(a.outcomes).toEqual(["patched"]);
    expect(a.body).toMatchObject({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u-1", allowed: true, patchType: "JSONPatch" },
    });
  });

  const unchanged: Array<{
    name: string;
    policies: PolicyObject[];
    body: unknown;
    synced?: boolean;
    outcome: WebhookOutcome;
  }> = [
    {
      name: "a pod only an EndpointSlice policy selects",
      policies: [aPolicyObject()],
      body: aReview(aPod()),
      outcome: "skipped",
    },
    {
      name: "a pod of another namespace than the policy's",
      policies: [gatePolicy()],
      body: aReview(aPod(), { namespace: "other" }),
      outcome: "skipped",
    },
    {
      name: "a pod the policy's selector does not match",
      policies: [gatePolicy()],
      body: aReview(aPod({ app: "api" })),
      outcome: "skipped",
    },
    {
      name: "a pod that already has the gate",
      policies: [gatePolicy()],
      body: aReview(aPod(undefined, { readinessGates: [{ conditionType: "healthprobe.io/ready" }] })),
      outcome: "skipped",
    },
    {
      name: "a pod under an invalid policy",
      policies: [gatePolicy("web", { probe: { port: 8080, path: "no-slash" } })],
      body: aReview(aPod()),
      outcome: "skipped",
    },
    {
      name: "an update, not a create",
      policies: [gatePolicy()],
      body: aReview(aPod(), { operation: "UPDATE" }),
      outcome: "skipped",
    },
    {
      name: "another kind than Pod",
      policies: [gatePolicy()],
      body: aReview(aPod(), { kind: { group: "apps", version: "v1", kind: "Deployment" } }),
      outcome: "skipped",
    },
    {
      name: "any pod while the policy cache has not synced",
      policies: [gatePolicy()],
      body: aReview(aPod()),
      synced: false,
      outcome: "skipped",
    },
    {
      name: "a review of another API version, whose uid it still echoes",
      policies: [gatePolicy()],
      body: { ...(aReview(aPod()) as object), apiVersion: "admission.k8s.io/v1beta1" },
      outcome: "error",
    },
  ];

  it.each(unchanged)("allows $name unchanged", ({ policies, body, synced, outcome }) => {
    const a = answer(policies, body, synced ?? true);
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u-1", allowed: true },
    });
    expect(a.outcomes).toEqual([outcome]);
  });

  it("answers 400 to a review with no uid to echo (kube-apiserver then applies failurePolicy Ignore)", () => {
    const a = answer([gatePolicy()], aReview(aPod(), { uid: "" }));
    expect(a).toMatchObject({ status: 400, outcomes: ["error"] });
  });

  it("allows the pod unchanged when reading the policies throws", () => {
    const broken = {
      get: () => undefined,
      list: () => {
        throw new Error("cache exploded");
      },
    };
    const a = handlePodAdmission(aReview(aPod()), { policies: broken, synced: () => true, logger: quietLogger() });
    expect(a).toEqual({
      status: 200,
      body: { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: "u-1", allowed: true } },
    });
  });
});

describe("gatePolicyOf", () => {
  it("reads method, selector and dryRun of a valid policy", () => {
    expect(gatePolicyOf(gatePolicy("web", { dryRun: true }))).toEqual({
      name: "web",
      method: "ReadinessGate",
      selector: { matchLabels: { app: "web" } },
      valid: true,
      dryRun: true,
      deleting: false,
    });
  });

  it("reads an invalid policy's fields as written, marked invalid", () => {
    expect(gatePolicyOf(gatePolicy("web", { probe: {} }))).toMatchObject({ method: "ReadinessGate", valid: false });
  });

  it("marks a policy with a deletionTimestamp as being deleted", () => {
    expect(gatePolicyOf(gatePolicy("web", {}, { deletionTimestamp: "2026-01-01T00:00:00Z" })).deleting).toBe(true);
  });
});
