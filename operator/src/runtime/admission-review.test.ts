import { describe, it, expect } from "@jest/globals";
import { admissionResponse, parseAdmissionReview } from "./admission-review.js";

function aReview(request: Record<string, unknown> = {}, over: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      operation: "CREATE",
      namespace: "shop",
      object: { metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [] } },
      userInfo: { username: "system:serviceaccount:kube-system:replicaset-controller" },
      dryRun: false,
      ...request,
    },
    ...over,
  };
}

describe("parseAdmissionReview", () => {
  it("reads the uid, kind, operation, namespace and object kube-apiserver sends", () => {
    const parsed = parseAdmissionReview(aReview());
    expect(parsed).toEqual({
      ok: true,
      request: {
        uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
        kind: { group: "", version: "v1", kind: "Pod" },
        operation: "CREATE",
        namespace: "shop",
        object: { metadata: { generateName: "web-", labels: { app: "web" } }, spec: { containers: [] } },
        dryRun: false,
      },
    });
  });

  const bad: Array<{ name: string; body: unknown; message: string; uid?: string }> = [
    { name: "a body that is not an object", body: "[]", message: "body: must be a JSON object" },
    {
      name: "another API version (v1beta1 is not offered)",
      body: aReview({}, { apiVersion: "admission.k8s.io/v1beta1" }),
      message:
        'apiVersion/kind: must be admission.k8s.io/v1 AdmissionReview, got "admission.k8s.io/v1beta1" "AdmissionReview"',
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    },
    {
      name: "a review without a request",
      body: { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" },
      message: "request: required",
    },
    { name: "a request without a uid", body: aReview({ uid: "" }), message: "request.uid: must not be empty" },
    {
      name: "a request without a kind",
      body: aReview({ kind: undefined }),
      message: "request.kind: Invalid input: expected object, received undefined",
      uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    },
  ];

  it.each(bad)("refuses $name, naming the field", ({ body, message, uid }) => {
    expect(parseAdmissionReview(body)).toEqual({ ok: false, message, ...(uid ? { uid } : {}) });
  });
});

describe("admissionResponse", () => {
  it("echoes the uid and allows, with no patch fields when there is no patch", () => {
    expect(admissionResponse("u-1")).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u-1", allowed: true },
    });
  });

  it("sends an empty patch as no patch (kube-apiserver refuses patchType without patch)", () => {
    expect(admissionResponse("u-1", []).response).toEqual({ uid: "u-1", allowed: true });
  });

  it("sends a patch as patchType JSONPatch and the base64 of the JSON patch", () => {
    const patch = [{ op: "add", path: "/spec/readinessGates", value: [{ conditionType: "healthprobe.io/ready" }] }];
    const { response } = admissionResponse("u-2", patch);
    expect(response.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(response.patch!, "base64").toString("utf8"))).toEqual(patch);
    expect(response.patch).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(response.allowed).toBe(true);
  });

  it("never refuses: allowed is true in every answer", () => {
    expect(JSON.stringify(admissionResponse("u-3", [{ op: "add", path: "/x", value: 1 }], ["w"]))).toContain(
      '"allowed":true',
    );
  });
});
