import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import type { V1PodDisruptionBudget, V1PodDisruptionBudgetSpec } from "@kubernetes/client-node";
import { waitFor } from "../../../test/support/wait-for.js";
import {
  aPod,
  aReplicaSet,
  freshNamespace,
  isReady,
  markNotReady,
  podsOf,
  retryOnConflict,
  startHarness,
  updateReplicaSet,
  type Harness,
} from "./harness.js";

// A settable clock: disruptedPods expiry is judged against it.
let nowMs = Date.parse("2026-11-29T12:00:00Z");
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ now: () => nowMs });
});
afterAll(async () => {
  await h?.stop();
});

const aBudget = (spec: Partial<V1PodDisruptionBudgetSpec>): V1PodDisruptionBudget => ({
  apiVersion: "policy/v1",
  kind: "PodDisruptionBudget",
  metadata: { name: "web" },
  spec: { selector: { matchLabels: { app: "web" } }, ...spec },
});
const budgetStatus = async (ns: string) =>
  (await h.policy.readNamespacedPodDisruptionBudget({ name: "web", namespace: ns })).status;

async function readyReplicaSet(ns: string, replicas: number): Promise<void> {
  await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas }) });
  await waitFor(
    async () => {
      const pods = await podsOf(h, ns);
      return pods.length === replicas && pods.every(isReady);
    },
    { what: `${replicas} ready pods` },
  );
}

async function settled(ns: string, want: Record<string, number>) {
  return waitFor(
    async () => {
      const s = await budgetStatus(ns);
      return s && Object.entries(want).every(([k, v]) => (s as Record<string, unknown>)[k] === v) ? s : undefined;
    },
    { what: `budget status ${JSON.stringify(want)}` },
  );
}

describe("PodDisruptionBudget controller", () => {
  const table: Array<[string, number, Partial<V1PodDisruptionBudgetSpec>, Record<string, number>]> = [
    [
      "minAvailable as a number",
      3,
      { minAvailable: 2 as any },
      { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 },
    ],
    [
      "minAvailable as a percentage of the controller's scale, rounded up",
      3,
      { minAvailable: "50%" as any },
      { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 },
    ],
    [
      "maxUnavailable as a number",
      4,
      { maxUnavailable: 1 as any },
      { expectedPods: 4, desiredHealthy: 3, currentHealthy: 4, disruptionsAllowed: 1 },
    ],
    [
      "maxUnavailable as a percentage",
      4,
      { maxUnavailable: "50%" as any },
      { expectedPods: 4, desiredHealthy: 2, currentHealthy: 4, disruptionsAllowed: 2 },
    ],
    [
      "a budget larger than the pods, never negative",
      2,
      { minAvailable: 5 as any },
      { expectedPods: 2, desiredHealthy: 5, currentHealthy: 2, disruptionsAllowed: 0 },
    ],
  ];
  it.each(table)("computes the status for %s", async (_name, replicas, spec, want) => {
    const ns = await freshNamespace(h);
    await readyReplicaSet(ns, replicas);
    await h.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: aBudget(spec) });
    const status = await settled(ns, want);
    expect(status.observedGeneration).toBe(1);
    const condition = status.conditions?.find((c) => c.type === "DisruptionAllowed");
    expect(condition).toMatchObject({
      status: want.disruptionsAllowed! > 0 ? "True" : "False",
      reason: want.disruptionsAllowed! > 0 ? "SufficientPods" : "InsufficientPods",
    });
  });

  it("follows pod readiness", async () => {
    const ns = await freshNamespace(h);
    await readyReplicaSet(ns, 3);
    await h.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: aBudget({ minAvailable: 2 as any }) });
    await settled(ns, { currentHealthy: 3, disruptionsAllowed: 1 });
    const [first] = await podsOf(h, ns);
    await markNotReady(h, ns, first!.metadata!.name!);
    const status = await settled(ns, { currentHealthy: 2, disruptionsAllowed: 0 });
    expect(status.conditions?.find((c) => c.type === "DisruptionAllowed")?.reason).toBe("InsufficientPods");
  });

  it("counts a pod that is being deleted as unhealthy", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "kept", finalizers: ["example.com/hold"] }) });
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "plain" }) });
    await waitFor(async () => (await podsOf(h, ns)).every(isReady), { what: "two ready pods" });
    await h.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: aBudget({ minAvailable: 1 as any }) });
    await settled(ns, { expectedPods: 2, currentHealthy: 2, disruptionsAllowed: 1 });
    await h.core.deleteNamespacedPod({ name: "kept", namespace: ns });
    await settled(ns, { currentHealthy: 1, disruptionsAllowed: 0 });
    await retryOnConflict(async () => {
      const kept = await h.core.readNamespacedPod({ name: "kept", namespace: ns });
      kept.metadata!.finalizers = [];
      return h.core.replaceNamespacedPod({ name: "kept", namespace: ns, body: kept });
    });
  });

  it("updates the budget after an eviction and drops the processed disruptedPods entry", async () => {
    const ns = await freshNamespace(h);
    await readyReplicaSet(ns, 3);
    await h.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: aBudget({ minAvailable: 2 as any }) });
    await settled(ns, { disruptionsAllowed: 1 });
    const [victim] = await podsOf(h, ns);
    await h.core.createNamespacedPodEviction({
      name: victim!.metadata!.name!,
      namespace: ns,
      body: { metadata: { name: victim!.metadata!.name!, namespace: ns } },
    });
    // The ReplicaSet replaces the pod; the budget recovers and forgets the evicted pod.
    const status = await waitFor(
      async () => {
        const s = await budgetStatus(ns);
        return s?.currentHealthy === 3 && s.disruptionsAllowed === 1 && Object.keys(s.disruptedPods ?? {}).length === 0
          ? s
          : undefined;
      },
      { what: "the budget to recover" },
    );
    expect(status.disruptedPods ?? {}).toEqual({});
  });

  it("keeps a fresh disruptedPods entry, not counting that pod, and prunes it once expired", async () => {
    const ns = await freshNamespace(h);
    await readyReplicaSet(ns, 3);
    await h.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: aBudget({ minAvailable: 1 as any }) });
    await settled(ns, { currentHealthy: 3, disruptionsAllowed: 2 });
    const [pod] = await podsOf(h, ns);
    const name = pod!.metadata!.name!;
    // One entry for a live pod, recorded "now", one for a pod that no longer exists.
    await retryOnConflict(async () => {
      const pdb = await h.policy.readNamespacedPodDisruptionBudget({ name: "web", namespace: ns });
      pdb.status!.disruptedPods = { [name]: new Date(nowMs), "gone-pod": new Date(nowMs) };
      return h.policy.replaceNamespacedPodDisruptionBudgetStatus({ name: "web", namespace: ns, body: pdb });
    });
    const fresh = await settled(ns, { currentHealthy: 2, disruptionsAllowed: 1 });
    expect(Object.keys(fresh.disruptedPods ?? {})).toEqual([name]);
    // Past the two-minute deletion timeout the entry is dropped and the pod counts again.
    nowMs += 2 * 60 * 1000 + 1000;
    await updateReplicaSet(h, ns, "web", (rs) => (rs.metadata!.annotations = { poke: "1" }));
    const expired = await settled(ns, { currentHealthy: 3, disruptionsAllowed: 2 });
    expect(expired.disruptedPods ?? {}).toEqual({});
  });

  it("writes status only when it changes", async () => {
    const ns = await freshNamespace(h);
    await readyReplicaSet(ns, 2);
    await h.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: aBudget({ minAvailable: 1 as any }) });
    await settled(ns, { currentHealthy: 2, disruptionsAllowed: 1 });
    const writes = () =>
      h.server.requestLog.filter(
        (e) =>
          e.namespace === ns &&
          e.resource === "poddisruptionbudgets" &&
          e.subresource === "status" &&
          e.verb === "update",
      ).length;
    const before = writes();
    // Touch the pods (an annotation): the syncs this causes find nothing to write.
    for (const p of await podsOf(h, ns)) {
      await retryOnConflict(async () => {
        const fresh = await h.core.readNamespacedPod({ name: p.metadata!.name!, namespace: ns });
        fresh.metadata!.annotations = { touched: "yes" };
        return h.core.replaceNamespacedPod({ name: p.metadata!.name!, namespace: ns, body: fresh });
      });
    }
    const rsWritesSettled = () =>
      h.server.requestLog.filter((e) => e.namespace === ns && e.verb === "update" && e.resource === "pods").length;
    await waitFor(() => rsWritesSettled() >= 2);
    // Then one real change: exactly one more write.
    const [first] = await podsOf(h, ns);
    await markNotReady(h, ns, first!.metadata!.name!);
    await settled(ns, { currentHealthy: 1, disruptionsAllowed: 0 });
    expect(writes() - before).toBe(1);
  });
});
