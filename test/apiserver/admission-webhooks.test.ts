// Mutating admission webhooks for pod CREATE: which webhooks are called, what they receive, how their
// patch applies, and what failurePolicy does when one cannot be reached or denies.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startApiServer, type TestApiServer } from "./index.js";
import { http, uniqueName, type Obj } from "./test-kit.js";

const INJECT = "healthprobe.io/readiness-gate-inject";
let server: TestApiServer;
let hook: Server;
let hookUrl = "";
const reviews: Obj[] = [];
/** What the webhook answers: a patch adding the gate, or a denial. */
let mode: "gate" | "deny" = "gate";

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  hook = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const review = JSON.parse(body) as Obj;
      reviews.push(review);
      const uid = review.request.uid;
      const patch = [{ op: "add", path: "/spec/readinessGates", value: [{ conditionType: "healthprobe.io/ready" }] }];
      const response =
        mode === "gate"
          ? { uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") }
          : { uid, allowed: false, status: { code: 403, reason: "Forbidden", message: "no pods today" } };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/mutate`;
});
afterAll(async () => {
  await server?.stop();
  await new Promise((r) => hook?.close(r));
});

async function namespace(labels: Record<string, string> = {}): Promise<string> {
  const name = uniqueName("ns");
  expect((await http(server, "POST", "/api/v1/namespaces", { body: { metadata: { name, labels } } })).status).toBe(201);
  return name;
}

async function configure(
  name: string,
  opts: { url?: string; failurePolicy?: string; timeoutSeconds?: number } = {},
): Promise<void> {
  const body = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name },
    webhooks: [
      {
        name: `${name}.healthprobe.io`,
        clientConfig: { url: opts.url ?? hookUrl },
        rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
        namespaceSelector: { matchLabels: { [INJECT]: name } },
        failurePolicy: opts.failurePolicy ?? "Ignore",
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}),
      },
    ],
  };
  expect(
    (await http(server, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", { body }))
      .status,
  ).toBe(201);
}

const createPod = (ns: string, name: string) =>
  http(server, "POST", `/api/v1/namespaces/${ns}/pods`, {
    body: { metadata: { name, labels: { app: "web" } }, spec: { containers: [{ name: "app", image: "app:1" }] } },
    user: "deployer",
  });

describe("mutating admission webhooks", () => {
  it("calls the webhook for a pod created in a selected namespace, with an AdmissionReview, and applies its patch", async () => {
    await configure("inject");
    const ns = await namespace({ [INJECT]: "inject" });
    const other = await namespace();
    const before = reviews.length;
    const created = await createPod(ns, "web-1");
    expect(created.status).toBe(201);
    expect(created.body.spec.readinessGates).toEqual([{ conditionType: "healthprobe.io/ready" }]);
    expect(reviews.length - before).toBe(1);
    expect(reviews.at(-1)).toMatchObject({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        operation: "CREATE",
        namespace: ns,
        name: "web-1",
        kind: { group: "", version: "v1", kind: "Pod" },
        resource: { group: "", version: "v1", resource: "pods" },
        userInfo: { username: "deployer" },
        object: {
          metadata: { name: "web-1", labels: { app: "web" } },
          spec: { containers: [expect.objectContaining({ name: "app" })] },
        },
        dryRun: false,
      },
    });

    const untouched = await createPod(other, "web-1");
    expect(untouched.status).toBe(201);
    expect(untouched.body.spec.readinessGates).toBeUndefined();
    expect(reviews.length - before).toBe(1);
  });

  it.each([
    { policy: "Ignore", status: 201 },
    { policy: "Fail", status: 500 },
  ])("with failurePolicy $policy and the webhook down, answers the create $status", async ({ policy, status }) => {
    const name = `down-${policy.toLowerCase()}`;
    await configure(name, { url: "http://127.0.0.1:1/mutate", failurePolicy: policy });
    const ns = await namespace({ [INJECT]: name });
    const res = await createPod(ns, "web-1");
    expect(res.status).toBe(status);
    if (status === 201) expect(res.body.spec.readinessGates).toBeUndefined();
    else
      expect(res.body.message).toMatch(
        new RegExp(
          `^Internal error occurred: failed calling webhook "${name}.healthprobe.io": failed to call webhook: Post "http://127.0.0.1:1/mutate\\?timeout=10s"`,
        ),
      );
  });

  it("refuses the create with the webhook's status when it denies", async () => {
    await configure("denier", { failurePolicy: "Fail" });
    const ns = await namespace({ [INJECT]: "denier" });
    mode = "deny";
    try {
      const res = await createPod(ns, "web-1");
      expect(res.status).toBe(403);
      expect(res.body.message).toBe('admission webhook "denier.healthprobe.io" denied the request: no pods today');
    } finally {
      mode = "gate";
    }
  });
});
