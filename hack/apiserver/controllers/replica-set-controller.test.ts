import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
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

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ podDisruptionBudget: false });
});
afterAll(async () => {
  await h?.stop();
});

const activePods = async (ns: string) => (await podsOf(h, ns)).filter((p) => !p.metadata?.deletionTimestamp);
const statusOf = async (ns: string, name = "web") =>
  (await h.apps.readNamespacedReplicaSet({ name, namespace: ns })).status;
const scale = (ns: string, replicas: number) => updateReplicaSet(h, ns, "web", (rs) => (rs.spec!.replicas = replicas));

describe("ReplicaSet controller", () => {
  it("creates the wanted number of pods, owned by the ReplicaSet, and reports them ready", async () => {
    const ns = await freshNamespace(h);
    const rs = await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas: 3 }) });
    const status = await waitFor(
      async () => {
        const s = await statusOf(ns);
        return s?.readyReplicas === 3 && s.availableReplicas === 3 ? s : undefined;
      },
      { what: "three ready replicas" },
    );
    expect(status).toMatchObject({
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
    const pods = await activePods(ns);
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.metadata?.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(p.metadata?.ownerReferences).toEqual([
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web",
          uid: rs.metadata!.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(p.metadata?.labels).toEqual({ app: "web" });
    }
  });

  it("recreates a deleted pod", async () => {
    const ns = await freshNamespace(h);
    await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas: 2 }) });
    const before = await waitFor(async () => ((await activePods(ns)).length === 2 ? activePods(ns) : undefined));
    const victim = before[0]!.metadata!.name!;
    await h.core.deleteNamespacedPod({ name: victim, namespace: ns });
    const after = await waitFor(
      async () => {
        const pods = await activePods(ns);
        return pods.length === 2 && !pods.some((p) => p.metadata?.name === victim) ? pods : undefined;
      },
      { what: "a replacement pod" },
    );
    expect(after.map((p) => p.metadata?.name)).not.toContain(victim);
  });

  it("scales down by deleting a not-ready pod first, and scales up again", async () => {
    const ns = await freshNamespace(h);
    await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas: 3 }) });
    const pods = await waitFor(
      async () => {
        const p = await activePods(ns);
        return p.length === 3 && p.every(isReady) ? p : undefined;
      },
      { what: "three ready pods" },
    );
    const sick = pods[1]!.metadata!.name!;
    await markNotReady(h, ns, sick);
    await waitFor(async () => (await statusOf(ns))?.readyReplicas === 2, {
      what: "the ReplicaSet to see the not-ready pod",
    });
    await scale(ns, 2);
    const left = await waitFor(
      async () => {
        const p = await activePods(ns);
        return p.length === 2 ? p : undefined;
      },
      { what: "two pods" },
    );
    expect(left.map((p) => p.metadata?.name)).not.toContain(sick);
    await scale(ns, 4);
    const s = await waitFor(
      async () => {
        const st = await statusOf(ns);
        return st?.replicas === 4 && st.readyReplicas === 4 ? st : undefined;
      },
      { what: "four ready replicas" },
    );
    expect(s.observedGeneration).toBe(3);
  });

  it("adopts a matching orphan instead of creating a pod for it", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "orphan" }) });
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "stranger", labels: { app: "db" } }) });
    const rs = await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas: 2 }) });
    await waitFor(async () => (await statusOf(ns))?.readyReplicas === 2, { what: "two ready replicas" });
    const pods = await activePods(ns);
    const owned = pods.filter((p) =>
      p.metadata?.ownerReferences?.some((r) => r.uid === rs.metadata?.uid && r.controller),
    );
    expect(owned.map((p) => p.metadata?.name)).toContain("orphan");
    expect(owned).toHaveLength(2);
    expect(pods.find((p) => p.metadata?.name === "stranger")?.metadata?.ownerReferences).toBeUndefined();
  });

  it("releases a pod that stops matching its selector and replaces it", async () => {
    const ns = await freshNamespace(h);
    const rs = await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas: 1 }) });
    const [pod] = await waitFor(async () => {
      const p = await activePods(ns);
      return p.length === 1 ? p : undefined;
    });
    const relabelled = await retryOnConflict(async () => {
      const p = await h.core.readNamespacedPod({ name: pod!.metadata!.name!, namespace: ns });
      p.metadata!.labels = { app: "debug" };
      return h.core.replaceNamespacedPod({ name: p.metadata!.name!, namespace: ns, body: p });
    });
    const released = await waitFor(
      async () => {
        const p = await h.core.readNamespacedPod({ name: relabelled.metadata!.name!, namespace: ns });
        return (p.metadata?.ownerReferences ?? []).length === 0 ? p : undefined;
      },
      { what: "the relabelled pod to be released" },
    );
    expect(released.metadata?.labels).toEqual({ app: "debug" });
    await waitFor(
      async () => {
        const owned = (await activePods(ns)).filter((p) =>
          p.metadata?.ownerReferences?.some((r) => r.uid === rs.metadata?.uid),
        );
        return owned.length === 1 && owned[0]!.metadata?.name !== released.metadata?.name;
      },
      { what: "a replacement for the released pod" },
    );
  });

  it("never creates more pods than wanted while its pod watch lags", async () => {
    const ns = await freshNamespace(h);
    const podCreates = () =>
      h.server.requestLog.filter(
        (e) => e.verb === "create" && e.resource === "pods" && e.namespace === ns && e.user === "controller-manager",
      ).length;
    // Hold back the pod events so the controller cannot see what it creates.
    h.lagPods(true);
    try {
      await h.apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet({ replicas: 3 }) });
      await waitFor(() => podCreates() === 3, { what: "the first three creates" });
      // Each spec change makes the controller sync again against its stale pod cache.
      for (const seconds of [1, 2, 3]) {
        const rs = await updateReplicaSet(h, ns, "web", (x) => (x.spec!.minReadySeconds = seconds));
        await waitFor(async () => (await statusOf(ns))?.observedGeneration === rs.metadata!.generation, {
          what: `generation ${rs.metadata!.generation} observed`,
        });
      }
      expect(podCreates()).toBe(3);
    } finally {
      h.lagPods(false);
    }
    await waitFor(async () => (await statusOf(ns))?.replicas === 3, {
      what: "the controller to catch up",
      timeoutMs: 15_000,
    });
    expect(podCreates()).toBe(3);
    expect(await activePods(ns)).toHaveLength(3);
  });
});
