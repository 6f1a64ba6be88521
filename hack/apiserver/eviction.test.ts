import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, PolicyV1Api } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { aPod, http, kubeConfigFor, statusOf, uniqueName } from "./test-kit.js";

let server: TestApiServer;
let core: CoreV1Api;
let policy: PolicyV1Api;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  const kc = kubeConfigFor(server, "evictor");
  core = kc.makeApiClient(CoreV1Api);
  policy = kc.makeApiClient(PolicyV1Api);
});
afterAll(async () => {
  await server.stop();
});

async function aBudget(app: string, disruptionsAllowed: number): Promise<string> {
  const name = uniqueName("pdb");
  const pdb = await policy.createNamespacedPodDisruptionBudget({
    namespace: "default",
    body: { metadata: { name }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } },
  });
  // No disruption controller here: the test sets the budget's status directly.
  await policy.replaceNamespacedPodDisruptionBudgetStatus({
    namespace: "default",
    name,
    body: {
      ...pdb,
      status: { disruptionsAllowed, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, observedGeneration: 1 },
    },
  });
  return name;
}

async function aRunningPod(app: string): Promise<string> {
  const pod = await core.createNamespacedPod({ namespace: "default", body: aPod({ labels: { app } }) as any });
  await core.replaceNamespacedPodStatus({
    namespace: "default",
    name: pod.metadata!.name!,
    body: { ...pod, status: { phase: "Running" } },
  });
  return pod.metadata!.name!;
}

const evict = (name: string) =>
  core.createNamespacedPodEviction({
    namespace: "default",
    name,
    body: { apiVersion: "policy/v1", kind: "Eviction", metadata: { name, namespace: "default" } },
  });
const podExists = (name: string) =>
  server.store.get({ group: "", version: "v1", resource: "pods" }, "default", name) !== undefined;

describe("pod eviction", () => {
  it("refuses with 429 TooManyRequests and a DisruptionBudget cause when the budget allows no disruption", async () => {
    const app = uniqueName("app");
    const pdb = await aBudget(app, 0);
    const pod = await aRunningPod(app);
    const status = await statusOf(evict(pod));
    expect(status.code).toBe(429);
    expect(status.reason).toBe("TooManyRequests");
    expect(status.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(status.details.causes).toEqual([
      { reason: "DisruptionBudget", message: `The disruption budget ${pdb} needs 1 healthy pods and has 2 currently` },
    ]);
    expect(podExists(pod)).toBe(true);
  });

  it("evicts when the budget allows it, charging the budget and recording the disrupted pod", async () => {
    const app = uniqueName("app");
    const pdb = await aBudget(app, 1);
    const pod = await aRunningPod(app);
    await evict(pod);
    expect(podExists(pod)).toBe(false);
    const budget = await policy.readNamespacedPodDisruptionBudget({ namespace: "default", name: pdb });
    expect(budget.status!.disruptionsAllowed).toBe(0);
    expect(Object.keys(budget.status!.disruptedPods ?? {})).toEqual([pod]);
    const second = await aRunningPod(app);
    expect((await statusOf(evict(second))).code).toBe(429);
  });

  it("evicts a pod no budget covers", async () => {
    const pod = await aRunningPod(uniqueName("free"));
    await evict(pod);
    expect(podExists(pod)).toBe(false);
  });

  it("evicts an already terminating pod without touching the budget", async () => {
    const app = uniqueName("app");
    const pdb = await aBudget(app, 0);
    const pod = await core.createNamespacedPod({
      namespace: "default",
      body: aPod({ labels: { app }, finalizers: ["example.com/hold"] }) as any,
    });
    await core.deleteNamespacedPod({ namespace: "default", name: pod.metadata!.name! });
    await evict(pod.metadata!.name!);
    const budget = await policy.readNamespacedPodDisruptionBudget({ namespace: "default", name: pdb });
    expect(budget.status!.disruptionsAllowed).toBe(0);
  });

  it("answers 404 for a missing pod", async () => {
    const status = await statusOf(evict("no-such-pod"));
    expect(status).toMatchObject({ code: 404, reason: "NotFound", message: 'pods "no-such-pod" not found' });
  });

  it("logs the eviction as a create on the eviction subresource by its user", async () => {
    const pod = await aRunningPod(uniqueName("free"));
    await evict(pod);
    const entry = server.requestLog.find((e) => e.name === pod && e.subresource === "eviction");
    expect(entry).toMatchObject({ user: "evictor", verb: "create", method: "POST", resource: "pods", code: 201 });
  });

  it("honours deleteOptions preconditions in the Eviction body", async () => {
    const pod = await aRunningPod(uniqueName("free"));
    const res = await http(server, "POST", `/api/v1/namespaces/default/pods/${pod}/eviction`, {
      body: {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name: pod },
        deleteOptions: { preconditions: { uid: "not-the-uid" } },
      },
    });
    expect(res.status).toBe(409);
    expect(podExists(pod)).toBe(true);
  });
});
