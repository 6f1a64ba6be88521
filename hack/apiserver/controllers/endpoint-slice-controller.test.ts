// The built-in EndpointSlice controller for Services with a selector, over HTTP against the API test
// server with the kubelet stand-in: what it writes, how it follows pods and Services, what it leaves alone.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { DiscoveryV1Api, KubeConfig, type V1EndpointSlice, type V1Pod, type V1Service } from "@kubernetes/client-node";
import { waitFor } from "../../../test/support/wait-for.js";
import { aPod, freshNamespace, retryOnConflict, startHarness, type Harness } from "./harness.js";

const BUILT_IN = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io";
let h: Harness;
let discovery: DiscoveryV1Api;
beforeAll(async () => {
  h = await startHarness({ replicaSet: false, podDisruptionBudget: false });
  const kc = new KubeConfig();
  kc.loadFromString(h.server.kubeconfig());
  discovery = kc.makeApiClient(DiscoveryV1Api);
});
afterAll(async () => {
  await h?.stop();
});

function aService(
  name: string,
  opts: {
    selector?: Record<string, string>;
    targetPort?: number | string;
    publishNotReadyAddresses?: boolean;
    labels?: Record<string, string>;
  } = {},
): V1Service {
  return {
    metadata: { name, ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      ...(opts.selector ? { selector: opts.selector } : {}),
      ...(opts.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
      ports: [{ name: "http", port: 80, targetPort: opts.targetPort ?? "web" }],
    },
  };
}

function aServingPod(
  name: string,
  opts: { labels?: Record<string, string>; gate?: boolean; finalizers?: string[]; port?: number } = {},
): V1Pod {
  const pod = aPod({
    name,
    labels: opts.labels ?? { app: "web" },
    ...(opts.finalizers ? { finalizers: opts.finalizers } : {}),
  });
  pod.spec!.containers[0]!.ports = [{ name: "web", containerPort: opts.port ?? 8080 }];
  if (opts.gate) pod.spec!.readinessGates = [{ conditionType: "example.com/lb" }];
  return pod;
}

async function slicesOf(ns: string, service: string, selector = BUILT_IN): Promise<V1EndpointSlice[]> {
  return (
    await discovery.listNamespacedEndpointSlice({
      namespace: ns,
      labelSelector: `kubernetes.io/service-name=${service},${selector}`,
    })
  ).items;
}

/** Endpoint conditions by pod name across the Service's built-in slices. */
async function endpointsOf(ns: string, service: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const s of await slicesOf(ns, service)) {
    for (const e of s.endpoints ?? []) {
      const c = e.conditions ?? {};
      out[e.targetRef!.name!] = `ready=${c.ready} serving=${c.serving} terminating=${c.terminating}`;
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

async function until(ns: string, service: string, want: Record<string, string>, what: string): Promise<void> {
  const sorted = JSON.stringify(Object.fromEntries(Object.entries(want).sort(([a], [b]) => a.localeCompare(b))));
  await waitFor(async () => JSON.stringify(await endpointsOf(ns, service)) === sorted || undefined, { what });
}

const READY = "ready=true serving=true terminating=false";
const NOT_READY = "ready=false serving=false terminating=false";

describe("EndpointSlice controller", () => {
  it("writes one slice for a Service with a selector: labels, owner, IPv4, named target port resolved, conditions from Ready", async () => {
    const ns = await freshNamespace(h);
    const svc = await h.core.createNamespacedService({
      namespace: ns,
      body: aService("web", { selector: { app: "web" }, labels: { team: "shop" } }),
    });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("a") });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("gated", { gate: true }) });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("other", { labels: { app: "other" } }) });
    await until(ns, "web", { a: READY, gated: NOT_READY }, "both selected pods in the slice");

    const [slice, ...more] = await slicesOf(ns, "web");
    expect(more).toEqual([]);
    expect(slice!.metadata!.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata!.labels).toEqual({
      team: "shop",
      "kubernetes.io/service-name": "web",
      "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    });
    expect(slice!.metadata!.ownerReferences).toEqual([
      {
        apiVersion: "v1",
        kind: "Service",
        name: "web",
        uid: svc.metadata!.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(slice!.addressType).toBe("IPv4");
    expect(slice!.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    const a = await h.core.readNamespacedPod({ name: "a", namespace: ns });
    expect(slice!.endpoints!.find((e) => e.targetRef?.name === "a")).toEqual({
      addresses: [a.status!.podIP],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: "Pod", namespace: ns, name: "a", uid: a.metadata!.uid },
    });
  });

  it("follows pods: a relabelled pod leaves, a terminating one stays serving but not ready, a gone one leaves", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedService({ namespace: ns, body: aService("web", { selector: { app: "web" } }) });
    for (const name of ["a", "b"]) await h.core.createNamespacedPod({ namespace: ns, body: aServingPod(name) });
    await h.core.createNamespacedPod({
      namespace: ns,
      body: aServingPod("held", { finalizers: ["example.com/hold"] }),
    });
    await until(ns, "web", { a: READY, b: READY, held: READY }, "three ready endpoints");

    await retryOnConflict(async () => {
      const b = await h.core.readNamespacedPod({ name: "b", namespace: ns });
      b.metadata!.labels = { app: "elsewhere" };
      return h.core.replaceNamespacedPod({ name: "b", namespace: ns, body: b });
    });
    await until(ns, "web", { a: READY, held: READY }, "the relabelled pod to leave");

    // The stand-in finishes the deletion at once; the finalizer keeps the pod terminating, Ready as it was.
    await h.core.deleteNamespacedPod({ name: "held", namespace: ns });
    await until(
      ns,
      "web",
      { a: READY, held: "ready=false serving=true terminating=true" },
      "the terminating pod serving, not ready",
    );

    await h.core.deleteNamespacedPod({ name: "a", namespace: ns });
    await until(ns, "web", { held: "ready=false serving=true terminating=true" }, "the deleted pod to leave");
  });

  it("lists not-ready and terminating pods as ready with publishNotReadyAddresses", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedService({
      namespace: ns,
      body: aService("web", { selector: { app: "web" }, publishNotReadyAddresses: true }),
    });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("gated", { gate: true }) });
    await until(ns, "web", { gated: "ready=true serving=false terminating=false" }, "the not-ready pod listed ready");
  });

  it("follows the Service: a new selector moves the endpoints, a numeric target port is taken as it is", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedService({
      namespace: ns,
      body: aService("web", { selector: { app: "web" }, targetPort: 9000 }),
    });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("a") });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("z", { labels: { app: "zed" } }) });
    await until(ns, "web", { a: READY }, "the first selector's pod");
    expect((await slicesOf(ns, "web"))[0]!.ports).toEqual([{ name: "http", port: 9000, protocol: "TCP" }]);

    await retryOnConflict(async () => {
      const svc = await h.core.readNamespacedService({ name: "web", namespace: ns });
      svc.spec!.selector = { app: "zed" };
      return h.core.replaceNamespacedService({ name: "web", namespace: ns, body: svc });
    });
    await until(ns, "web", { z: READY }, "the new selector's pod");
  });

  it("puts a pod that cannot resolve the named target port in a slice of its own, without ports", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedService({ namespace: ns, body: aService("web", { selector: { app: "web" } }) });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("named") });
    await h.core.createNamespacedPod({ namespace: ns, body: aPod({ name: "unnamed" }) });
    await until(ns, "web", { named: READY, unnamed: READY }, "both pods listed");
    const byPorts = Object.fromEntries(
      (await slicesOf(ns, "web")).map((s) => [
        JSON.stringify(s.ports ?? []),
        (s.endpoints ?? []).map((e) => e.targetRef!.name),
      ]),
    );
    expect(byPorts).toEqual({
      [JSON.stringify([{ name: "http", port: 8080, protocol: "TCP" }])]: ["named"],
      "[]": ["unnamed"],
    });
  });

  it("keeps one placeholder slice while nothing is selected, and none for a Service without a selector", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedService({ namespace: ns, body: aService("web", { selector: { app: "nobody" } }) });
    await h.core.createNamespacedService({ namespace: ns, body: aService("manual") });
    const [placeholder] = await waitFor(
      async () => {
        const s = await slicesOf(ns, "web");
        return s.length === 1 ? s : undefined;
      },
      { what: "the placeholder slice" },
    );
    expect(placeholder!.endpoints ?? []).toEqual([]);
    expect(placeholder!.ports ?? []).toEqual([]);
    // A pod that arrives fills a slice; the placeholder is reused, not kept beside it.
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("late", { labels: { app: "nobody" } }) });
    await until(ns, "web", { late: READY }, "the late pod listed");
    expect((await slicesOf(ns, "web")).map((s) => s.metadata!.name)).toEqual([placeholder!.metadata!.name]);
    expect(await slicesOf(ns, "manual", "")).toEqual([]);
  });

  it("splits more than 100 endpoints over slices of at most 100, each pod once", async () => {
    const ns = await freshNamespace(h);
    await h.core.createNamespacedService({ namespace: ns, body: aService("web", { selector: { app: "many" } }) });
    const names = Array.from({ length: 205 }, (_, i) => `p${i}`);
    await Promise.all(
      names.map((name) =>
        h.core.createNamespacedPod({ namespace: ns, body: aServingPod(name, { labels: { app: "many" } }) }),
      ),
    );
    const slices = await waitFor(
      async () => {
        const s = await slicesOf(ns, "web");
        const listed = s.flatMap((x) =>
          (x.endpoints ?? []).filter((e) => e.conditions?.ready).map((e) => e.targetRef!.name!),
        );
        return listed.length === names.length ? s : undefined;
      },
      { what: "205 ready endpoints", timeoutMs: 60_000 },
    );
    // Pods arrive a few at a time: slices fill as they come (as the real controller's do), none over 100.
    for (const s of slices) expect((s.endpoints ?? []).length).toBeLessThanOrEqual(100);
    expect(slices.length).toBeGreaterThanOrEqual(3);
    expect(new Set(slices.flatMap((s) => s.endpoints!.map((e) => e.targetRef!.name))).size).toBe(205);
    await Promise.all(names.map((name) => h.core.deleteNamespacedPod({ name, namespace: ns })));
  }, 90_000);

  it("never touches slices another controller manages, and puts back its own slice when someone deletes it", async () => {
    const ns = await freshNamespace(h);
    const theirs: V1EndpointSlice = {
      metadata: {
        name: "web-theirs",
        labels: { "kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": "someone-else" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.1.2.3"], conditions: { ready: false } }],
      ports: [{ name: "http", port: 1234, protocol: "TCP" }],
    };
    const created = await discovery.createNamespacedEndpointSlice({ namespace: ns, body: theirs });
    await h.core.createNamespacedService({ namespace: ns, body: aService("web", { selector: { app: "web" } }) });
    await h.core.createNamespacedPod({ namespace: ns, body: aServingPod("a") });
    await until(ns, "web", { a: READY }, "the pod listed");
    const [ours] = await slicesOf(ns, "web");
    await discovery.deleteNamespacedEndpointSlice({ name: ours!.metadata!.name!, namespace: ns });
    await waitFor(
      async () =>
        (await slicesOf(ns, "web")).some(
          (s) => s.metadata!.name !== ours!.metadata!.name && (s.endpoints ?? []).length === 1,
        ),
      { what: "a new slice" },
    );
    const after = await discovery.readNamespacedEndpointSlice({ name: "web-theirs", namespace: ns });
    expect(after.metadata!.resourceVersion).toBe(created.metadata!.resourceVersion);
    const writes = h.server.requestLog.filter(
      (e) =>
        e.namespace === ns &&
        e.resource === "endpointslices" &&
        e.name === "web-theirs" &&
        e.user === "controller-manager",
    );
    expect(writes).toEqual([]);
  });
});
