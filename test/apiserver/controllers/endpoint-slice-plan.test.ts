// The EndpointSlice controller's rules as pure functions: endpoint conditions, ports, labels, and
// how existing slices are kept, filled, reused and split.
import { describe, it, expect } from "@jest/globals";
import type { V1EndpointSlice, V1Pod, V1Service } from "@kubernetes/client-node";
import {
  addressTypes,
  endpointPorts,
  planSlices,
  podToEndpoint,
  shouldPodBeInEndpoints,
  sliceLabels,
} from "./endpoint-slice-plan.js";

const SVC_UID = "svc-uid";

function aService(
  opts: {
    labels?: Record<string, string>;
    publishNotReadyAddresses?: boolean;
    clusterIP?: string;
    ipFamilies?: string[];
    targetPort?: number | string;
    protocol?: string;
  } = {},
): V1Service {
  return {
    metadata: { name: "web", namespace: "shop", uid: SVC_UID, ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      selector: { app: "web" },
      clusterIP: opts.clusterIP ?? "10.96.0.10",
      ...(opts.ipFamilies ? { ipFamilies: opts.ipFamilies } : {}),
      ...(opts.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
      ports: [{ name: "http", port: 80, targetPort: opts.targetPort ?? "web", protocol: opts.protocol ?? "TCP" }],
    },
  };
}

function aPod(
  name: string,
  opts: {
    ready?: boolean;
    terminating?: boolean;
    phase?: string;
    ip?: string | null;
    port?: number;
    hostname?: string;
    subdomain?: string;
  } = {},
): V1Pod {
  const ip = opts.ip === null ? undefined : (opts.ip ?? "10.244.0.1");
  return {
    metadata: {
      name,
      namespace: "shop",
      uid: `uid-${name}`,
      labels: { app: "web" },
      ...(opts.terminating ? { deletionTimestamp: new Date("2026-01-01T00:00:00Z") } : {}),
    },
    spec: {
      containers: [
        {
          name: "app",
          image: "app:1",
          ports: opts.port === undefined ? [] : [{ name: "web", containerPort: opts.port, protocol: "TCP" }],
        },
      ],
      ...(opts.hostname ? { hostname: opts.hostname, subdomain: opts.subdomain } : {}),
    },
    status: {
      phase: opts.phase ?? "Running",
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
    },
  };
}

const podsNamed = (n: number): V1Pod[] =>
  Array.from({ length: n }, (_, i) =>
    aPod(`p${String(i).padStart(3, "0")}`, { ip: `10.244.${Math.floor(i / 250)}.${(i % 250) + 1}`, port: 8080 }),
  );

/** Slices as the server would hold them after the plan: names given to creates. */
function applied(plan: ReturnType<typeof planSlices>, existing: V1EndpointSlice[]): V1EndpointSlice[] {
  const updated = new Map(plan.update.map((s) => [s.metadata!.name!, s]));
  const deleted = new Set(plan.delete.map((s) => s.metadata!.name!));
  const kept = existing.filter((s) => !deleted.has(s.metadata!.name!)).map((s) => updated.get(s.metadata!.name!) ?? s);
  return [...kept, ...plan.create.map((s, i) => ({ ...s, metadata: { ...s.metadata, name: `web-new${i}` } }))];
}

describe("EndpointSlice controller rules", () => {
  it.each([
    {
      what: "a Ready pod",
      pod: { ready: true },
      svc: {},
      conditions: { ready: true, serving: true, terminating: false },
    },
    {
      what: "a pod that is not Ready",
      pod: { ready: false },
      svc: {},
      conditions: { ready: false, serving: false, terminating: false },
    },
    {
      what: "a Ready pod being deleted",
      pod: { ready: true, terminating: true },
      svc: {},
      conditions: { ready: false, serving: true, terminating: true },
    },
    {
      what: "a pod that is not Ready, with publishNotReadyAddresses",
      pod: { ready: false },
      svc: { publishNotReadyAddresses: true },
      conditions: { ready: true, serving: false, terminating: false },
    },
    {
      what: "a terminating pod, with publishNotReadyAddresses",
      pod: { ready: true, terminating: true },
      svc: { publishNotReadyAddresses: true },
      conditions: { ready: true, serving: true, terminating: true },
    },
  ])("gives $what the conditions $conditions", ({ pod, svc, conditions }) => {
    expect(podToEndpoint(aPod("a", pod), aService(svc), "IPv4").conditions).toEqual(conditions);
  });

  it.each([
    { what: "a running pod with an address", pod: aPod("a"), included: true },
    { what: "a pod without an address", pod: aPod("a", { ip: null }), included: false },
    { what: "a Succeeded pod", pod: aPod("a", { phase: "Succeeded" }), included: false },
    { what: "a Failed pod", pod: aPod("a", { phase: "Failed" }), included: false },
    { what: "a terminating pod", pod: aPod("a", { terminating: true }), included: true },
  ])("lists $what: $included", ({ pod, included }) => {
    expect(shouldPodBeInEndpoints(pod)).toBe(included);
  });

  it.each([
    {
      what: "a named target port found in the containers",
      svc: aService(),
      pod: aPod("a", { port: 8080 }),
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    },
    { what: "a named target port the pod lacks", svc: aService(), pod: aPod("a"), ports: [] },
    {
      what: "a named target port of another protocol",
      svc: aService({ protocol: "UDP" }),
      pod: aPod("a", { port: 8080 }),
      ports: [],
    },
    {
      what: "a numeric target port",
      svc: aService({ targetPort: 9000 }),
      pod: aPod("a"),
      ports: [{ name: "http", port: 9000, protocol: "TCP" }],
    },
  ])("resolves $what", ({ svc, pod, ports }) => {
    expect(endpointPorts(svc, pod)).toEqual(ports);
  });

  it("sets the hostname only for a pod whose subdomain is the Service, and the addresses of the slice's family only", () => {
    expect(podToEndpoint(aPod("a", { hostname: "a", subdomain: "web" }), aService(), "IPv4").hostname).toBe("a");
    expect(
      podToEndpoint(aPod("a", { hostname: "a", subdomain: "other" }), aService(), "IPv4").hostname,
    ).toBeUndefined();
    expect(podToEndpoint(aPod("a", { ip: "fd00::1" }), aService(), "IPv4").addresses).toEqual([]);
  });

  it("labels slices with the Service's labels but the reserved ones, headless when there is no cluster IP", () => {
    const labels = {
      team: "shop",
      "kubernetes.io/service-name": "spoof",
      "endpointslice.kubernetes.io/managed-by": "spoof",
    };
    expect(sliceLabels(aService({ labels }))).toEqual({
      team: "shop",
      "kubernetes.io/service-name": "web",
      "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    });
    expect(sliceLabels(aService({ clusterIP: "None" }))["service.kubernetes.io/headless"]).toBe("");
    expect(addressTypes(aService({ ipFamilies: ["IPv4", "IPv6"] }))).toEqual(["IPv4", "IPv6"]);
    expect(addressTypes(aService({ clusterIP: "None" }))).toEqual(["IPv4"]);
  });

  it("creates one placeholder for a Service that selects nothing, and keeps it on the next plan", () => {
    const first = planSlices(aService(), [], []);
    expect(first.create).toHaveLength(1);
    expect(first.create[0]).toMatchObject({
      addressType: "IPv4",
      endpoints: [],
      ports: [],
      metadata: { generateName: "web-", ownerReferences: [{ kind: "Service", uid: SVC_UID, controller: true }] },
    });
    const again = planSlices(aService(), [], applied(first, []));
    expect(again).toEqual({ create: [], update: [], delete: [] });
  });

  it("splits 250 endpoints 100, 100, 50, and plans nothing once they are written", () => {
    const pods = podsNamed(250);
    const first = planSlices(aService(), pods, []);
    expect(first.create.map((s) => s.endpoints!.length)).toEqual([100, 100, 50]);
    expect(planSlices(aService(), pods, applied(first, []))).toEqual({ create: [], update: [], delete: [] });
  });

  it("updates in place the one slice whose endpoint changed, and fills a new pod into the fullest slice it fits", () => {
    const pods = podsNamed(150);
    const slices = applied(planSlices(aService(), pods, []), []);
    const changed = pods.map((p, i) =>
      i === 120 ? { ...p, status: { ...p.status, conditions: [{ type: "Ready", status: "False" }] } } : p,
    );
    const plan = planSlices(aService(), changed, slices);
    expect(plan.create).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.update.map((s) => s.metadata!.name)).toEqual(["web-new1"]);
    expect(plan.update[0]!.endpoints!.find((e) => e.targetRef!.name === "p120")!.conditions!.ready).toBe(false);

    const grown = [...pods, aPod("zz", { ip: "10.244.9.9", port: 8080 })];
    const fill = planSlices(aService(), grown, slices);
    expect(fill.update.map((s) => [s.metadata!.name, s.endpoints!.length])).toEqual([["web-new1", 51]]);
  });

  it("deletes the slices of an earlier Service of the same name (another uid) and creates its own", () => {
    const old = applied(
      planSlices({ ...aService(), metadata: { ...aService().metadata, uid: "old-uid" } }, podsNamed(2), []),
      [],
    );
    const plan = planSlices(aService(), podsNamed(2), old);
    expect(plan.update).toEqual([]);
    expect(plan.delete.map((s) => s.metadata!.name)).toEqual(["web-new0"]);
    expect(plan.create).toHaveLength(1);
  });

  it("turns an emptied slice into the placeholder instead of deleting and creating", () => {
    const slices = applied(planSlices(aService(), podsNamed(3), []), []);
    const plan = planSlices(aService(), [], slices);
    expect(plan.create).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.update).toEqual([
      expect.objectContaining({ endpoints: [], ports: [], metadata: expect.objectContaining({ name: "web-new0" }) }),
    ]);
  });
});
