import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { AppsV1Api, CoreV1Api, type V1Pod } from "@kubernetes/client-node";
import { waitFor } from "../../test/support/wait-for.js";
import { requestsBy, startApiServer, type TestApiServer } from "./index.js";
import { planPodDeletion } from "./pod-deletion.js";
import type { KubeObject } from "./store.js";
import { aPod, kubeConfigFor, statusOf, uniqueName } from "./test-kit.js";

const NOW = Date.parse("2026-01-01T00:00:00Z");

function aStoredPod(
  opts: {
    phase?: string;
    nodeName?: string;
    grace?: number;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
  } = {},
): KubeObject {
  return {
    metadata: {
      name: "p",
      ...(opts.deletionTimestamp
        ? { deletionTimestamp: opts.deletionTimestamp, deletionGracePeriodSeconds: opts.deletionGracePeriodSeconds }
        : {}),
    },
    spec: { terminationGracePeriodSeconds: opts.grace ?? 30, ...(opts.nodeName ? { nodeName: opts.nodeName } : {}) },
    status: { phase: opts.phase ?? "Running" },
  };
}

describe("planPodDeletion", () => {
  it.each<
    [
      string,
      KubeObject,
      number | undefined,
      boolean,
      ReturnType<typeof planPodDeletion>["kind"],
      number | undefined,
      number | undefined,
    ]
  >([
    [
      "a running pod gets its terminationGracePeriodSeconds",
      aStoredPod(),
      undefined,
      true,
      "graceful",
      30,
      NOW + 30_000,
    ],
    ["a requested grace period wins over the pod's", aStoredPod(), 5, true, "graceful", 5, NOW + 5_000],
    ["a negative grace period means one second", aStoredPod(), -3, true, "graceful", 1, NOW + 1_000],
    [
      "a pending pod bound to a node is graceful too",
      aStoredPod({ phase: "Pending", nodeName: "n1" }),
      undefined,
      true,
      "graceful",
      30,
      NOW + 30_000,
    ],
    [
      "an unscheduled pod that is not running goes at once",
      aStoredPod({ phase: "Pending" }),
      undefined,
      true,
      "graceful",
      0,
      NOW,
    ],
    ["a succeeded pod goes at once", aStoredPod({ phase: "Succeeded", nodeName: "n1" }), 10, true, "graceful", 0, NOW],
    ["a failed pod goes at once", aStoredPod({ phase: "Failed" }), undefined, true, "graceful", 0, NOW],
    [
      "without a kubelet every pod goes at once",
      aStoredPod({ nodeName: "n1" }),
      undefined,
      false,
      "immediate",
      undefined,
      undefined,
    ],
    [
      "a shorter period moves the deadline of a terminating pod",
      aStoredPod({ deletionTimestamp: "2026-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 }),
      10,
      true,
      "graceful",
      10,
      NOW + 10_000,
    ],
    [
      "an equal period leaves a terminating pod alone",
      aStoredPod({ deletionTimestamp: "2026-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 }),
      30,
      true,
      "pending",
      undefined,
      undefined,
    ],
    [
      "no period leaves a terminating pod alone",
      aStoredPod({ deletionTimestamp: "2026-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 }),
      undefined,
      true,
      "pending",
      undefined,
      undefined,
    ],
    [
      "a pod terminating with no grace left takes the generic path",
      aStoredPod({ deletionTimestamp: "2026-01-01T00:00:00Z", deletionGracePeriodSeconds: 0 }),
      undefined,
      true,
      "immediate",
      undefined,
      undefined,
    ],
  ])("%s", (_name, pod, requested, kubelet, kind, period, atMs) => {
    const plan = planPodDeletion(pod, requested, NOW, kubelet);
    expect(plan.kind).toBe(kind);
    expect(plan.why).not.toBe("");
    if (plan.kind === "graceful") expect({ period: plan.periodSeconds, atMs: plan.atMs }).toEqual({ period, atMs });
  });
});

interface Bed {
  server: TestApiServer;
  core: CoreV1Api;
}

async function aBed(opts: Parameters<typeof startApiServer>[0]): Promise<Bed> {
  const server = await startApiServer(opts);
  return { server, core: kubeConfigFor(server).makeApiClient(CoreV1Api) };
}

async function aRunningPod(
  bed: Bed,
  over: { finalizers?: string[]; labels?: Record<string, string> } = {},
): Promise<string> {
  const pod = await bed.core.createNamespacedPod({ namespace: "default", body: aPod(over) as V1Pod });
  const name = pod.metadata!.name!;
  await waitFor(
    async () => (await bed.core.readNamespacedPod({ namespace: "default", name })).status?.phase === "Running",
    { what: `pod ${name} running` },
  );
  return name;
}

const read = (bed: Bed, name: string) => bed.core.readNamespacedPod({ namespace: "default", name });
const gone = async (bed: Bed, name: string) => (await statusOf(read(bed, name))).code === 404;

describe("pod deletion with a kubelet that takes its time to stop containers", () => {
  let bed: Bed;
  beforeAll(async () => {
    // The stand-in would stop containers only after ten minutes: the terminating state is observable.
    bed = await aBed({ simulateKubelet: true, controllers: false, terminationDelayMs: 600_000 });
  });
  afterAll(async () => {
    await bed?.server.stop();
  });

  it("keeps a running pod terminating for the pod's grace period", async () => {
    const name = await aRunningPod(bed);
    const before = Date.now();
    const answer = await bed.core.deleteNamespacedPod({ namespace: "default", name });
    expect(answer.metadata?.deletionGracePeriodSeconds).toBe(30);
    const pod = await read(bed, name);
    expect(pod.metadata?.deletionGracePeriodSeconds).toBe(30);
    const deadline = new Date(pod.metadata!.deletionTimestamp!).getTime();
    // Whole seconds, as metav1.Time is written.
    expect(deadline).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 30_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 30_000);
  });

  it("takes the request's gracePeriodSeconds, and a shorter one later moves the deadline", async () => {
    const name = await aRunningPod(bed);
    await bed.core.deleteNamespacedPod({ namespace: "default", name, gracePeriodSeconds: 20 });
    const first = await read(bed, name);
    expect(first.metadata?.deletionGracePeriodSeconds).toBe(20);
    await bed.core.deleteNamespacedPod({ namespace: "default", name, gracePeriodSeconds: 25 });
    expect((await read(bed, name)).metadata).toMatchObject({
      deletionGracePeriodSeconds: 20,
      resourceVersion: first.metadata!.resourceVersion,
    });
    await bed.core.deleteNamespacedPod({ namespace: "default", name, gracePeriodSeconds: 5 });
    const shortened = await read(bed, name);
    expect(shortened.metadata?.deletionGracePeriodSeconds).toBe(5);
    expect(new Date(shortened.metadata!.deletionTimestamp!).getTime()).toBe(
      new Date(first.metadata!.deletionTimestamp!).getTime() - 15_000,
    );
  });

  it("removes a terminating pod at once on a zero grace period (a forced delete)", async () => {
    const name = await aRunningPod(bed);
    await bed.core.deleteNamespacedPod({ namespace: "default", name });
    await bed.core.deleteNamespacedPod({ namespace: "default", name, gracePeriodSeconds: 0 });
    expect(await gone(bed, name)).toBe(true);
  });

  it("takes an eviction's deleteOptions.gracePeriodSeconds", async () => {
    const name = await aRunningPod(bed);
    await bed.core.createNamespacedPodEviction({
      namespace: "default",
      name,
      body: {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name, namespace: "default" },
        deleteOptions: { gracePeriodSeconds: 7 },
      },
    });
    expect((await read(bed, name)).metadata?.deletionGracePeriodSeconds).toBe(7);
  });

  it("keeps a pod whose finalizers are removed until its grace period is over", async () => {
    const name = await aRunningPod(bed, { finalizers: ["example.com/hold"] });
    await bed.core.deleteNamespacedPod({ namespace: "default", name });
    const pod = await read(bed, name);
    await bed.core.replaceNamespacedPod({
      namespace: "default",
      name,
      body: { ...pod, metadata: { ...pod.metadata, finalizers: [] } },
    });
    expect((await read(bed, name)).metadata?.deletionGracePeriodSeconds).toBe(30);
    await bed.core.deleteNamespacedPod({ namespace: "default", name, gracePeriodSeconds: 0 });
    expect(await gone(bed, name)).toBe(true);
  });

  it("removes a finished pod at once", async () => {
    const name = await aRunningPod(bed);
    const pod = await read(bed, name);
    await bed.core.replaceNamespacedPodStatus({
      namespace: "default",
      name,
      body: { ...pod, status: { ...pod.status, phase: "Succeeded" } },
    });
    await bed.core.deleteNamespacedPod({ namespace: "default", name });
    expect(await gone(bed, name)).toBe(true);
  });

  it("writes a pod terminating before removing it at once, as the real registry does", async () => {
    const name = await aRunningPod(bed);
    const pod = await read(bed, name);
    // A finished pod takes the zero-period path.
    await bed.core.replaceNamespacedPodStatus({
      namespace: "default",
      name,
      body: { ...pod, status: { ...pod.status, phase: "Failed" } },
    });
    const rv = bed.server.store.resourceVersion();
    await bed.core.deleteNamespacedPod({ namespace: "default", name });
    const ac = new AbortController();
    const res = await fetch(
      `${bed.server.url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`,
      { signal: ac.signal },
    );
    const reader = res.body!.getReader();
    const events: Array<{ type: string; terminating: boolean }> = [];
    let buffered = "";
    while (!events.some((e) => e.type === "DELETED")) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += new TextDecoder().decode(value);
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines.filter(Boolean)) {
        const e = JSON.parse(line);
        events.push({ type: e.type, terminating: Boolean(e.object.metadata.deletionTimestamp) });
      }
    }
    ac.abort();
    expect(events).toEqual([
      { type: "MODIFIED", terminating: true },
      { type: "DELETED", terminating: true },
    ]);
  });
});

describe("pod deletion with a kubelet that stops containers at once", () => {
  let bed: Bed;
  let apps: AppsV1Api;
  beforeAll(async () => {
    bed = await aBed({ simulateKubelet: true });
    apps = kubeConfigFor(bed.server).makeApiClient(AppsV1Api);
  });
  afterAll(async () => {
    await bed?.server.stop();
  });

  it("finishes a graceful deletion with the stand-in's zero-grace delete", async () => {
    const name = await aRunningPod(bed);
    const answer = await bed.core.deleteNamespacedPod({ namespace: "default", name });
    expect(answer.metadata?.deletionGracePeriodSeconds).toBe(30);
    await waitFor(() => gone(bed, name), { what: `pod ${name} gone` });
    const finishing = requestsBy(bed.server.requestLog, {
      user: "controller-manager",
      verb: "delete",
      resource: "pods",
    }).filter((e) => e.name === name);
    expect(finishing.map((e) => e.path)).toEqual([expect.stringContaining("gracePeriodSeconds=0")]);
  });

  it("lets a ReplicaSet replace a terminating pod without counting it", async () => {
    const app = uniqueName("app");
    await apps.createNamespacedReplicaSet({
      namespace: "default",
      body: {
        metadata: { name: app },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app } },
          template: { metadata: { labels: { app } }, spec: { containers: [{ name: "c", image: "nginx:1.27" }] } },
        },
      },
    });
    const list = () => bed.core.listNamespacedPod({ namespace: "default", labelSelector: `app=${app}` });
    const [victim] = await waitFor(
      async () => {
        const items = (await list()).items;
        return items.length === 2 && items.every((p) => p.status?.phase === "Running") ? items : undefined;
      },
      { what: "two running replicas" },
    );
    // Finalizers hold the terminating pod, so the count below cannot race its removal.
    await bed.core.patchNamespacedPod({
      namespace: "default",
      name: victim!.metadata!.name!,
      body: [{ op: "add", path: "/metadata/finalizers", value: ["example.com/hold"] }],
    });
    await bed.core.deleteNamespacedPod({ namespace: "default", name: victim!.metadata!.name! });
    const items = await waitFor(
      async () => {
        const all = (await list()).items;
        return all.filter((p) => !p.metadata?.deletionTimestamp).length === 2 ? all : undefined;
      },
      { what: "a replacement beside the terminating pod" },
    );
    expect(items.filter((p) => p.metadata?.deletionTimestamp).map((p) => p.metadata?.name)).toEqual([
      victim!.metadata!.name,
    ]);
    await bed.core.patchNamespacedPod({
      namespace: "default",
      name: victim!.metadata!.name!,
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    await waitFor(() => gone(bed, victim!.metadata!.name!), { what: "the terminating pod gone once released" });
  });
});

describe("the kubelet stand-in's terminationDelayMs", () => {
  it("holds the zero-grace delete back until the containers have had that long to stop", async () => {
    const bed = await aBed({ simulateKubelet: true, controllers: false, terminationDelayMs: 300 });
    try {
      const name = await aRunningPod(bed);
      await bed.core.deleteNamespacedPod({ namespace: "default", name });
      await waitFor(() => gone(bed, name), { what: `pod ${name} gone` });
      const deletes = requestsBy(bed.server.requestLog, { verb: "delete", resource: "pods" }).filter(
        (e) => e.name === name,
      );
      expect(deletes.map((e) => e.user)).toEqual(["admin", "controller-manager"]);
      // A lower bound only: the stand-in never finishes early, however loaded the machine.
      expect(Date.parse(deletes[1]!.time) - Date.parse(deletes[0]!.time)).toBeGreaterThanOrEqual(300);
    } finally {
      await bed.server.stop();
    }
  });
});

describe("pod deletion without a kubelet", () => {
  let bed: Bed;
  beforeAll(async () => {
    bed = await aBed({ controllers: false });
  });
  afterAll(async () => {
    await bed?.server.stop();
  });

  it("removes even a running pod at once", async () => {
    const created = await bed.core.createNamespacedPod({ namespace: "default", body: aPod() as V1Pod });
    const name = created.metadata!.name!;
    await bed.core.replaceNamespacedPodStatus({
      namespace: "default",
      name,
      body: { ...created, status: { phase: "Running" } },
    });
    await bed.core.deleteNamespacedPod({ namespace: "default", name, gracePeriodSeconds: 30 });
    expect(await gone(bed, name)).toBe(true);
  });
});

describe("graceful pod deletion turned off", () => {
  it("removes pods at once even with the kubelet stand-in", async () => {
    const bed = await aBed({
      simulateKubelet: true,
      controllers: false,
      gracefulPodDeletion: false,
      terminationDelayMs: 600_000,
    });
    try {
      const name = await aRunningPod(bed);
      await bed.core.deleteNamespacedPod({ namespace: "default", name });
      expect(await gone(bed, name)).toBe(true);
    } finally {
      await bed.server.stop();
    }
  });
});
