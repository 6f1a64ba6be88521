import { describe, expect, it } from "@jest/globals";
import { READINESS_GATE_CONDITION } from "../api/group.js";
import type { Caches } from "./caches.js";
import type { KubeObject, PodObject, PolicyObject, ReplicaSetObject, ServiceObject } from "./kube-objects.js";
import { MemoryCache } from "./testing/memory-cache.js";
import { aPolicyObject } from "./testing/objects.js";
import { enqueueNamespace, WAKE_RULES, wakesOf, type WakeContext, type WakeQueue } from "./wake-rules.js";

const web = aPolicyObject("web");
const gated = aPolicyObject("gated", { serviceName: "api", drain: { method: "ReadinessGate" } });
const svc = (ports: number[]): ServiceObject =>
  ({
    metadata: { namespace: "shop", name: "web", uid: "s1" },
    spec: { ports: ports.map((port) => ({ port })) },
  }) as unknown as ServiceObject;
const pod = (labels: Record<string, string>, gate = false): PodObject =>
  ({
    metadata: {
      namespace: "shop",
      name: "p1",
      uid: "p1",
      labels,
      ownerReferences: [{ uid: "rs1", kind: "ReplicaSet", name: "rs" }],
    },
    spec: gate ? { readinessGates: [{ conditionType: READINESS_GATE_CONDITION }] } : {},
  }) as unknown as PodObject;
const rs = (revision: string, replicas = 1): ReplicaSetObject =>
  ({
    metadata: {
      namespace: "shop",
      name: "rs",
      uid: "rs1",
      annotations: { "deployment.kubernetes.io/revision": revision },
    },
    status: { replicas },
  }) as unknown as ReplicaSetObject;
const node = (zone: string, heartbeat = "1"): KubeObject =>
  ({
    metadata: { name: "n1", labels: { "topology.kubernetes.io/zone": zone }, annotations: { heartbeat } },
  }) as KubeObject;

const withStatusPods = (p: PolicyObject, pods: Array<Record<string, string>>): PolicyObject =>
  ({ ...p, status: { pods } }) as PolicyObject;

/** Two policies of namespace shop; a pod labelled app=web is selected by "web" only. */
function context(): WakeContext {
  const caches = {
    policies: new MemoryCache<PolicyObject>([web, gated]),
    pods: new MemoryCache<PodObject>([pod({ app: "web" })]),
    services: new MemoryCache<ServiceObject>(),
    nodes: new MemoryCache<KubeObject>(),
    slices: new MemoryCache<KubeObject>(),
    builtInSlices: new MemoryCache<KubeObject>(),
    replicaSets: new MemoryCache<ReplicaSetObject>(),
    diagnostics: new MemoryCache<KubeObject>(),
    ledgers: new MemoryCache<KubeObject>(),
  } as unknown as Caches;
  return {
    caches,
    policiesForPod: (p) => (p.metadata?.labels?.app === "web" ? ["shop/web"] : []),
    managedServices: () => [{ namespace: "shop", service: "web" }],
  };
}

const sorted = (wakes: Array<[WakeQueue, string]>) => [...new Set(wakes.map(([q, k]) => `${q} ${k}`))].sort();

describe("what wakes what", () => {
  it.each<{ name: string; source: keyof Caches; old: unknown; now: unknown; wakes: string[] }>([
    {
      name: "a Service's port change wakes the policies that name it and the Service",
      source: "services",
      old: svc([80]),
      now: svc([8080]),
      wakes: ["policy shop/web", "service shop/web"],
    },
    {
      name: "a pod's change wakes the policies whose selector matches it",
      source: "pods",
      old: pod({ app: "web" }),
      now: pod({ app: "web", v: "2" }),
      wakes: ["policy shop/web"],
    },
    {
      name: "a pod matching no policy and without the gate wakes nothing",
      source: "pods",
      old: undefined,
      now: pod({ app: "other" }),
      wakes: [],
    },
    {
      name: "a gated pod's change also wakes its namespace for gate release",
      source: "pods",
      old: undefined,
      now: pod({ app: "web" }, true),
      wakes: ["namespace shop", "policy shop/web"],
    },
    {
      name: "a status-only change of a policy wakes only the policies naming its Service",
      source: "policies",
      old: web,
      now: { ...web, status: { healthy: 3 } },
      wakes: ["policy shop/web"],
    },
    {
      name: "a policy pointed at another Service wakes the policies of both Services and the managed Services",
      source: "policies",
      old: web,
      now: aPolicyObject("web", { serviceName: "api" }),
      wakes: ["policy shop/gated", "policy shop/web", "service shop/web"],
    },
    {
      name: "a ReadinessGate policy deleted hands its pods over: wakes the others, its namespace and the managed Services",
      source: "policies",
      old: gated,
      now: undefined,
      wakes: ["namespace shop", "policy shop/gated", "replacement shop/gated", "service shop/web"],
    },
    {
      name: "a ReplicaSet's new revision wakes the policies of its pods",
      source: "replicaSets",
      old: rs("1"),
      now: rs("2"),
      wakes: ["policy shop/web"],
    },
    {
      name: "a ReplicaSet's status update wakes nothing",
      source: "replicaSets",
      old: rs("1", 1),
      now: rs("1", 3),
      wakes: [],
    },
    { name: "a node's heartbeat wakes nothing", source: "nodes", old: node("a", "1"), now: node("a", "2"), wakes: [] },
    {
      name: "a node's zone change wakes every policy",
      source: "nodes",
      old: node("a"),
      now: node("b"),
      wakes: ["policy shop/gated", "policy shop/web"],
    },
    {
      name: "a managed EndpointSlice's change wakes the policies naming its Service and the Service",
      source: "slices",
      old: undefined,
      now: { metadata: { namespace: "shop", name: "web-1", labels: { "kubernetes.io/service-name": "web" } } },
      wakes: ["policy shop/web", "service shop/web"],
    },
    {
      name: "a diagnostics ConfigMap's change wakes the policy owning it",
      source: "diagnostics",
      old: undefined,
      now: {
        metadata: { namespace: "shop", name: "d", ownerReferences: [{ kind: "HealthProbePolicy", name: "web" }] },
      },
      wakes: ["policy shop/web"],
    },
    {
      name: "a policy's ledger ConfigMap deleted by someone wakes the policy owning it (it is restored)",
      source: "ledgers",
      old: {
        metadata: {
          namespace: "shop",
          name: "web-healthprobe-ledger",
          ownerReferences: [{ kind: "HealthProbePolicy", name: "web" }],
        },
      },
      now: undefined,
      wakes: ["policy shop/web", "replacement shop/web"],
    },
    {
      name: "a status write that lists a pod awaiting replacement wakes the policy's replacement",
      source: "policies",
      old: web,
      now: withStatusPods(web, [{ name: "p1", state: "Unhealthy", replaceAfter: "2026-01-01T13:00:00Z" }]),
      wakes: ["policy shop/web", "replacement shop/web"],
    },
    {
      name: "the status write that lists no pod awaiting replacement any more wakes it too (its condition clears)",
      source: "policies",
      old: withStatusPods(web, [{ name: "p1", state: "Unhealthy", replaceAfter: "2026-01-01T13:00:00Z" }]),
      now: withStatusPods(web, [{ name: "p1", state: "Healthy" }]),
      wakes: ["policy shop/web", "replacement shop/web"],
    },
    {
      name: "a status write with no pod awaiting replacement before or after wakes the policy only",
      source: "policies",
      old: withStatusPods(web, [{ name: "p1", state: "Unknown" }]),
      now: withStatusPods(web, [{ name: "p1", state: "Healthy" }]),
      wakes: ["policy shop/web"],
    },
  ])("$name", ({ source, old, now, wakes }) => {
    expect(sorted(wakesOf(WAKE_RULES, source, old, now, context()))).toEqual(wakes);
  });

  it.each([
    {
      name: "a pod the policy's status lists as awaiting replacement wakes its replacement",
      replaceAfter: true,
      wakes: true,
    },
    {
      name: "a pod the policy's status lists without replaceAfter wakes no replacement",
      replaceAfter: false,
      wakes: false,
    },
  ])("$name", ({ replaceAfter, wakes }) => {
    const ctx = context();
    const entry = { uid: "p1", state: "Unhealthy", ...(replaceAfter ? { replaceAfter: "2026-01-01T13:00:00Z" } : {}) };
    (ctx.caches.policies as MemoryCache<PolicyObject>).put(withStatusPods(web, [entry]));
    const got = wakesOf(WAKE_RULES, "pods", pod({ app: "web" }), pod({ app: "web", nudge: "1" }), ctx);
    expect(got.some(([queue, key]) => queue === "replacement" && key === "shop/web")).toBe(wakes);
  });

  it("every rule has a sentence name of its own", () => {
    expect(new Set(WAKE_RULES.map((r) => r.name)).size).toBe(WAKE_RULES.length);
  });
});

describe("a namespace taken over", () => {
  const keysFor = (ctx: WakeContext, namespace: string) => {
    const got: string[] = [];
    const q = (name: WakeQueue) => ({ add: (key: string) => got.push(`${name} ${key}`) });
    enqueueNamespace(
      ctx,
      { policy: q("policy"), replacement: q("replacement"), service: q("service"), namespace: q("namespace") },
      namespace,
    );
    return got.sort();
  };

  it("wakes its policies, their replacement and the Services whose slices it manages", () => {
    expect(keysFor(context(), "shop")).toEqual([
      "policy shop/gated",
      "policy shop/web",
      "replacement shop/gated",
      "replacement shop/web",
      "service shop/web",
    ]);
  });

  it("also wakes the namespace itself when a pod there has the readiness gate", () => {
    const ctx = context();
    (ctx.caches.pods as MemoryCache<PodObject>).put(pod({ app: "web" }, true));
    expect(keysFor(ctx, "shop")).toContain("namespace shop");
  });

  it("wakes no policy of another namespace", () => {
    const ctx = { ...context(), managedServices: () => [] };
    expect(keysFor(ctx, "payments")).toEqual([]);
  });
});
