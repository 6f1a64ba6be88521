// The locked /metrics and /debug/targets against the API test server's TokenReview and
// SubjectAccessReview (its users and its stored RBAC): real HTTP all the way, a fake clock for
// the decision caches.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { requestsBy, startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { objectApi } from "../../../hack/apiserver/test-kit.js";
import { KubeAccessReviewer } from "../adapters/access-review.js";
import { KubeClient } from "../adapters/kube-client.js";
import { connectKube } from "../adapters/kube-connection.js";
import { FakeClock } from "./testing/fake-clock.js";
import { createEndpointGuard } from "./endpoint-guard.js";
import { startHealthServer, startMetricsServer, type RunningServer } from "./health-server.js";
import { createMetrics } from "./metrics.js";

const NS = "monitoring";
const SA = `system:serviceaccount:${NS}:prometheus`;
let server: TestApiServer;
let client: KubeClient;
const clock = new FakeClock(Date.parse("2026-12-01T10:00:00Z"));
const running: RunningServer[] = [];
let health: RunningServer;
let metrics: RunningServer;

const readerRole = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: "healthprobe-metrics-reader" },
  rules: [{ nonResourceURLs: ["/metrics", "/debug/targets"], verbs: ["get"] }],
};
const readerBinding = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name: "prometheus-reads-healthprobe" },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "healthprobe-metrics-reader" },
  subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: NS }],
};

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  const api = objectApi(server);
  await api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  await api.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "prometheus", namespace: NS } });
  await api.create(readerRole);
  await api.create(readerBinding);
  client = new KubeClient(await connectKube({ kubeconfigYaml: server.kubeconfig("operator") }));
  const guard = createEndpointGuard({ reviewer: new KubeAccessReviewer(client), clock });
  const local = { disabled: false as const, host: "127.0.0.1", port: 0 };
  health = (await startHealthServer({
    address: local,
    isReady: () => true,
    debugTargets: () => ({ targets: [{ policy: "shop/web", uid: "u1" }] }),
    guard,
  }))!;
  metrics = (await startMetricsServer({
    address: local,
    registry: createMetrics({ processMetrics: false }).registry,
    guard,
  }))!;
  running.push(health, metrics);
});

afterAll(async () => {
  await Promise.all(running.map((s) => s.close()));
  await client?.connection.close();
  await server?.stop();
});

async function get(port: number, path: string, token?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: await res.text() };
}

const reviews = (resource: "tokenreviews" | "subjectaccessreviews") =>
  requestsBy(server.requestLog, { user: "operator", verb: "create", resource }).length;

describe("the locked endpoints (API test server)", () => {
  const paths = () => [
    { port: metrics.port, path: "/metrics" },
    { port: health.port, path: "/debug/targets" },
  ];

  it("answers 401 without a token, or with one that authenticates nobody", async () => {
    for (const { port, path } of paths()) {
      expect(await get(port, path)).toEqual({ status: 401, body: "Unauthorized\n" });
      expect((await get(port, path, "system:serviceaccount:monitoring:deleted")).status).toBe(401);
    }
  });

  it("answers 403 naming the user when RBAC does not allow get on the path", async () => {
    for (const { port, path } of paths())
      expect(await get(port, path, "alice")).toEqual({ status: 403, body: "Authorization denied for user alice\n" });
  });

  it("answers 200 to a ServiceAccount the reader ClusterRole is bound to", async () => {
    const m = await get(metrics.port, "/metrics", SA);
    expect(m.status).toBe(200);
    expect(m.body).toContain("healthprobe_leader 0");
    const d = await get(health.port, "/debug/targets", SA);
    expect(d.status).toBe(200);
    expect(JSON.parse(d.body).targets).toEqual([{ policy: "shop/web", uid: "u1" }]);
  });

  it("keeps /healthz and /readyz open", async () => {
    expect((await get(health.port, "/healthz")).status).toBe(200);
    expect((await get(health.port, "/readyz")).status).toBe(200);
  });

  it("reviews a token once while its decision is cached, and sees a removed binding once the decision expires", async () => {
    clock.advance(120_000);
    await get(metrics.port, "/metrics", SA);
    const [tokens, access] = [reviews("tokenreviews"), reviews("subjectaccessreviews")];
    for (let i = 0; i < 5; i++) expect((await get(metrics.port, "/metrics", SA)).status).toBe(200);
    expect([reviews("tokenreviews"), reviews("subjectaccessreviews")]).toEqual([tokens, access]);

    await objectApi(server).delete(readerBinding);
    expect((await get(metrics.port, "/metrics", SA)).status).toBe(200);
    clock.advance(60_000);
    expect((await get(metrics.port, "/metrics", SA)).status).toBe(403);
    await objectApi(server).create(readerBinding);
  });

  it("shares one review among concurrent requests with the same token", async () => {
    clock.advance(120_000);
    const before = reviews("tokenreviews");
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(metrics.port, "/metrics", SA)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(reviews("tokenreviews") - before).toBe(1);
  });

  it("answers 500, never 200, when the API server cannot review", async () => {
    clock.advance(120_000);
    server.faults.failRate({ rate: 1, verb: "create", resource: "tokenreviews", code: 503 });
    expect(await get(metrics.port, "/metrics", SA)).toEqual({ status: 500, body: "Authentication failed\n" });
    server.faults.clear();
    server.faults.failRate({ rate: 1, verb: "create", resource: "subjectaccessreviews", code: 500 });
    expect(await get(health.port, "/debug/targets", SA)).toEqual({
      status: 500,
      body: `Authorization for user ${SA} failed\n`,
    });
    server.faults.clear();
    expect((await get(health.port, "/debug/targets", SA)).status).toBe(200);
  });
});
