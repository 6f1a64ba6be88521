import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { kubeClientOf, loadKubeConfig, makeApis, type KubeApis } from "./kube-config.js";
import type { KubeClient } from "./kube-client.js";
import { EventRecorder, kubeEventSink } from "./event-recorder.js";

const EVENTS = { group: "events.k8s.io", version: "v1", resource: "events" };

let server: TestApiServer;
let apis: KubeApis;
let client: KubeClient;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  const kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig("operator") });
  apis = makeApis(kc);
  client = kubeClientOf(kc);
  await apis.core.createNamespace({ body: { metadata: { name: "shop" } } });
});

afterAll(async () => {
  await server.stop();
});

const policy = {
  apiVersion: "healthprobe.io/v1alpha1",
  kind: "HealthProbePolicy",
  namespace: "shop",
  name: "web",
  uid: "0d9c1b6e-policy",
};

describe("event recorder against the API test server", () => {
  it("writes one aggregated Event the server accepts, with the series count of every occurrence", async () => {
    let writes = 0;
    const recorder = new EventRecorder({
      sink: kubeEventSink(client),
      identity: "replica-a",
      writable: true,
      heartbeatMs: 100,
      metrics: { eventWrites: { inc: () => writes++ } },
    });
    for (let i = 0; i < 50; i++)
      recorder.record({
        regarding: policy,
        type: "Warning",
        reason: "DrainCapped",
        action: "Drain",
        note: "3 of 4 endpoints would be drained; cap is 1",
      });
    await waitFor(() => server.store.list(EVENTS, "shop").find((e) => e.series?.count === 50), {
      what: "the series count to reach 50",
    });
    await recorder.stop();

    const events = server.store.list(EVENTS, "shop").filter((e) => e.reason === "DrainCapped");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      reportingController: "healthprobe.io/operator",
      reportingInstance: "replica-a",
      action: "Drain",
      type: "Warning",
      regarding: { kind: "HealthProbePolicy", name: "web", namespace: "shop" },
      series: { count: 50 },
    });
    const requests = server.requestLog.filter((e) => e.resource === "events" && e.user === "operator");
    expect(requests.filter((e) => e.verb === "create")).toHaveLength(1);
    expect(requests.every((e) => e.code < 400)).toBe(true);
    expect(writes).toBe(requests.length);
    expect(requests.length).toBeLessThan(10);
  });

  it("reads back through the events API with a real client", async () => {
    const recorder = new EventRecorder({ sink: kubeEventSink(client), identity: "replica-a", writable: true });
    recorder.record({
      regarding: { apiVersion: "v1", kind: "Pod", namespace: "shop", name: "web-1", uid: "pod-uid" },
      related: policy,
      type: "Normal",
      reason: "Restored",
      action: "Restore",
      note: "probe succeeded 2 times",
    });
    await recorder.stop();
    const list = await apis.events.listNamespacedEvent({ namespace: "shop" });
    const restored = list.items.filter((e) => e.reason === "Restored");
    expect(restored).toHaveLength(1);
    expect(restored[0]!.related?.name).toBe("web");
    expect(restored[0]!.series).toBeUndefined();
  });
});
