import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { CoreV1Api } from "@kubernetes/client-node";
import { requestsBy, startApiServer, type TestApiServer } from "./index.js";
import { aConfigMap, kubeConfigFor, statusOf } from "./test-kit.js";

let server: TestApiServer;
let core: CoreV1Api;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  core = kubeConfigFor(server, "faulty").makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => server.faults.clear());

describe("fault injection", () => {
  it("fails the next matching requests with a real Status, then recovers", async () => {
    server.faults.failNext({ verb: "create", resource: "configmaps", count: 2, code: 503 });
    const first = await statusOf(core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any }));
    expect(first).toMatchObject({ code: 503, reason: "ServiceUnavailable" });
    await core.listNamespacedConfigMap({ namespace: "default" });
    expect(
      (await statusOf(core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any }))).code,
    ).toBe(503);
    const created = await core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    expect(created.metadata!.uid).toBeDefined();
  });

  it.each([
    [429, "TooManyRequests"],
    [409, "Conflict"],
    [500, "InternalError"],
  ])("injects %i with reason %s", async (code, reason) => {
    server.faults.failNext({ verb: "get", count: 1, code });
    const status = await statusOf(core.readNamespace({ name: "default" }));
    expect(status).toMatchObject({ code, reason });
  });

  it("fails every matching request at rate 1 and none at rate 0", async () => {
    server.faults.failRate({ verb: "list", resource: "pods", rate: 1, code: 500 });
    for (let i = 0; i < 3; i++)
      expect((await statusOf(core.listNamespacedPod({ namespace: "default" }))).code).toBe(500);
    await core.listNamespacedConfigMap({ namespace: "default" });
    server.faults.clear();
    server.faults.failRate({ verb: "list", resource: "pods", rate: 0 });
    await core.listNamespacedPod({ namespace: "default" });
  });

  it("stops a rate fault after its duration", async () => {
    server.faults.failRate({ rate: 1, durationMs: 0, resource: "pods" });
    await core.listNamespacedPod({ namespace: "default" });
  });

  it("logs failed requests with their code, so tests can count attempts per actor", async () => {
    const before = requestsBy(server.requestLog, { user: "faulty", writes: true }).length;
    server.faults.failNext({ verb: "create", count: 1, code: 500 });
    await statusOf(core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any }));
    await core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    const writes = requestsBy(server.requestLog, { user: "faulty", writes: true }).slice(before);
    expect(writes.map((w) => [w.verb, w.code])).toEqual([
      ["create", 500],
      ["create", 201],
    ]);
    expect(requestsBy(server.requestLog, { user: "faulty", writes: true, succeeded: true }).length).toBeGreaterThan(0);
  });

  it("delays matching requests by the added latency without failing them", async () => {
    server.faults.addLatency(20, { verb: "get", resource: "namespaces" });
    const ns = await core.readNamespace({ name: "default" });
    expect(ns.metadata!.name).toBe("default");
  });
});
