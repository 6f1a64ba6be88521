import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { waitFor } from "../../../test/support/wait-for.js";
import { aPod, freshNamespace, isReady, podsOf, startHarness, type Harness } from "./harness.js";

const CIDR = "127.0.10.0/29"; // six usable addresses: .1 to .6
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ replicaSet: false, podDisruptionBudget: false, podCidr: CIDR });
});
afterAll(async () => {
  await h?.stop();
});

describe("kubelet stand-in", () => {
  it("starts a new pod: address, Running, Ready, container statuses", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "web-1" }) });
    const pod = await waitFor(
      async () => {
        const p = await h.core.readNamespacedPod({ name: "web-1", namespace: ns });
        return isReady(p) ? p : undefined;
      },
      { what: "the pod to be ready" },
    );
    const ip = pod.status!.podIP!;
    expect(ip).toMatch(/^127\.0\.10\.[1-6]$/);
    expect(pod.status).toMatchObject({
      phase: "Running",
      hostIP: "127.0.0.1",
      hostIPs: [{ ip: "127.0.0.1" }],
      podIPs: [{ ip }],
    });
    expect(pod.status!.startTime).toBeDefined();
    for (const type of ["PodScheduled", "Initialized", "ContainersReady", "Ready"]) {
      const c = pod.status!.conditions!.find((x) => x.type === type);
      expect(c?.status).toBe("True");
      expect(c?.lastTransitionTime).toBeDefined();
    }
    expect(pod.status!.containerStatuses).toEqual([
      expect.objectContaining({
        name: "app",
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: expect.anything() } },
      }),
    ]);
    expect(pod.spec!.nodeName).toBeUndefined();
    await h.core.deleteNamespacedPod({ name: "web-1", namespace: ns });
  });

  it("gives pods distinct addresses and reuses one only after its pod is gone", async () => {
    const ns = await freshNamespace(h);
    const names = Array.from({ length: 6 }, (_, i) => `p${i}`);
    for (const name of names) await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name }) });
    const pods = await waitFor(
      async () => {
        const p = await podsOf(h, ns);
        return p.length === 6 && p.every(isReady) ? p : undefined;
      },
      { what: "six ready pods" },
    );
    const ips = pods.map((p) => p.status!.podIP!);
    expect(new Set(ips).size).toBe(6);
    for (const ip of ips) expect(["127.0.10.0", "127.0.10.7"]).not.toContain(ip);

    // The range is full: a seventh pod waits.
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "late" }) });
    const late = await h.core.readNamespacedPod({ name: "late", namespace: ns });
    expect(late.status?.podIP).toBeUndefined();

    const freed = pods.find((p) => p.metadata?.name === "p2")!.status!.podIP!;
    await h.core.deleteNamespacedPod({ name: "p2", namespace: ns });
    const started = await waitFor(
      async () => {
        const p = await h.core.readNamespacedPod({ name: "late", namespace: ns });
        return p.status?.podIP ? p : undefined;
      },
      { what: "the waiting pod to get the freed address" },
    );
    expect(started.status!.podIP).toBe(freed);
    for (const p of await podsOf(h, ns)) await h.core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: ns });
  });

  it("leaves alone a pod that already has an address", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "manual" }) });
    const p = await waitFor(async () => {
      const x = await h.core.readNamespacedPod({ name: "manual", namespace: ns });
      return x.status?.podIP ? x : undefined;
    });
    p.status!.phase = "Succeeded";
    await h.core.replaceNamespacedPodStatus({ name: "manual", namespace: ns, body: p });
    const statusWrites = () =>
      h.server.requestLog.filter(
        (e) => e.namespace === ns && e.subresource === "status" && e.user === "controller-manager",
      ).length;
    const before = statusWrites();
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "other" }) });
    await waitFor(async () => (await h.core.readNamespacedPod({ name: "other", namespace: ns })).status?.podIP);
    expect(statusWrites() - before).toBe(1);
    expect((await h.core.readNamespacedPod({ name: "manual", namespace: ns })).status?.phase).toBe("Succeeded");
    for (const x of await podsOf(h, ns)) await h.core.deleteNamespacedPod({ name: x.metadata!.name!, namespace: ns });
  });

  it("asks once to finish the deletion of a pod left terminating, and frees its address when it goes", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "held", finalizers: ["example.com/hold"] }) });
    const ip = await waitFor(
      async () => (await h.core.readNamespacedPod({ name: "held", namespace: ns })).status?.podIP,
    );
    await h.core.deleteNamespacedPod({ name: "held", namespace: ns });
    const finishing = () =>
      h.server.requestLog.filter(
        (e) => e.namespace === ns && e.verb === "delete" && e.name === "held" && e.user === "controller-manager",
      );
    await waitFor(() => finishing().length === 1, { what: "a zero grace-period delete" });
    expect(finishing()[0]!.path).toContain("gracePeriodSeconds=0");
    const held = await h.core.readNamespacedPod({ name: "held", namespace: ns });
    held.metadata!.finalizers = [];
    await h.core.replaceNamespacedPod({ name: "held", namespace: ns, body: held });
    await waitFor(async () => !(await podsOf(h, ns)).some((p) => p.metadata?.name === "held"), {
      what: "the pod to go",
    });
    // Fill the range: the freed address must be among those handed out.
    const names = Array.from({ length: 6 }, (_, i) => `n${i}`);
    for (const name of names) await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name }) });
    const ips = await waitFor(
      async () => {
        const p = await podsOf(h, ns);
        return p.length === 6 && p.every((x) => x.status?.podIP) ? p.map((x) => x.status!.podIP!) : undefined;
      },
      { what: "six started pods" },
    );
    expect(ips).toContain(ip);
    expect(finishing()).toHaveLength(1);
    for (const x of await podsOf(h, ns)) await h.core.deleteNamespacedPod({ name: x.metadata!.name!, namespace: ns });
  });
});
