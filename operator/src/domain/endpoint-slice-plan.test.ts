import { describe, it, expect } from "@jest/globals";
import { planEndpointSlices } from "./endpoint-slice-plan.js";
import type { EndpointSliceObject, EndpointSlicePlanInput } from "./endpoint-slice-types.js";
import {
  aPod,
  aService,
  aSlice,
  anInput,
  applySlicePlan,
  endpointsOf,
  isEmptyPlan,
  somePods,
} from "./testing/slice-builders.js";

/** Plans from nothing and applies, as a first reconcile would. */
function settled(input: EndpointSlicePlanInput): EndpointSliceObject[] {
  return applySlicePlan(input.existing, planEndpointSlices(input));
}

function counts(input: EndpointSlicePlanInput): { create: number; update: number; delete: number } {
  const plan = planEndpointSlices(input);
  return { create: plan.create.length, update: plan.update.length, delete: plan.delete.length };
}

describe("planning a Service's EndpointSlices from nothing", () => {
  it("creates one slice with an endpoint per pod, named by the API server", () => {
    const plan = planEndpointSlices(
      anInput({ pods: [aPod({ name: "web-1", ip: "10.0.0.1" }), aPod({ name: "web-2", ip: "10.0.0.2" })] }),
    );
    expect(plan.update).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.create).toHaveLength(1);
    const slice = plan.create[0] as EndpointSliceObject;
    expect(slice.metadata).toEqual({
      generateName: "web-",
      namespace: "default",
      labels: {
        "endpointslice.kubernetes.io/managed-by": "healthprobe-operator.healthprobe.io",
        "kubernetes.io/service-name": "web",
      },
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name: "web",
          uid: "svc-uid-web",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(slice.addressType).toBe("IPv4");
    expect(slice.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    expect(slice.endpoints.map((e) => e.addresses)).toEqual([["10.0.0.1"], ["10.0.0.2"]]);
  });

  it("writes targetRef, nodeName and zone for each endpoint", () => {
    const plan = planEndpointSlices(
      anInput({ pods: [aPod({ name: "web-1", uid: "u-1", nodeName: "node-b" })], nodeZones: { "node-b": "eu-1b" } }),
    );
    expect(plan.create[0]?.endpoints[0]).toEqual({
      addresses: ["10.0.0.1"],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: "node-b",
      zone: "eu-1b",
      targetRef: { kind: "Pod", namespace: "default", name: "web-1", uid: "u-1" },
    });
  });

  const conditionCases = [
    {
      name: "an admitted Ready pod is ready",
      pod: aPod({ ready: true }),
      admitted: true,
      want: { ready: true, serving: true, terminating: false },
    },
    {
      name: "a pod the policy does not admit is not ready",
      pod: aPod({ ready: true }),
      admitted: false,
      want: { ready: false, serving: false, terminating: false },
    },
    {
      name: "a kubelet-unready pod is never ready, however admitted",
      pod: aPod({ ready: false }),
      admitted: true,
      want: { ready: false, serving: false, terminating: false },
    },
    {
      name: "a terminating pod stays listed as terminating and serving",
      pod: aPod({ terminating: true }),
      admitted: true,
      want: { ready: false, serving: true, terminating: true },
    },
  ];
  it.each(conditionCases)("$name", ({ pod, admitted, want }) => {
    const plan = planEndpointSlices(anInput({ pods: [pod], admitted: () => admitted }));
    expect(plan.create[0]?.endpoints.map((e) => e.conditions)).toEqual([want]);
  });

  const skippedCases = [
    { name: "a pod without an IP", pod: aPod({ name: "web-2", podIPs: [] }) },
    { name: "a Succeeded pod", pod: aPod({ name: "web-2", ip: "10.0.0.2", phase: "Succeeded" }) },
    { name: "a Failed pod", pod: aPod({ name: "web-2", ip: "10.0.0.2", phase: "Failed" }) },
  ];
  it.each(skippedCases)("leaves out $name", ({ pod }) => {
    const plan = planEndpointSlices(anInput({ pods: [aPod({ name: "web-1" }), pod] }));
    expect(plan.create.flatMap((s) => s.endpoints.map((e) => e.targetRef.name))).toEqual(["web-1"]);
  });

  it("splits 250 pods into 3 slices of at most 100", () => {
    const plan = planEndpointSlices(anInput({ pods: somePods(250), maxEndpointsPerSlice: 100 }));
    expect(plan.create.map((s) => s.endpoints.length)).toEqual([100, 100, 50]);
    expect(new Set(plan.create.flatMap((s) => s.endpoints.map((e) => e.targetRef.name))).size).toBe(250);
  });

  it("uses 100 endpoints per slice when no limit is given", () => {
    const { maxEndpointsPerSlice: _unused, ...input } = anInput({ pods: somePods(101) });
    expect(planEndpointSlices(input).create.map((s) => s.endpoints.length)).toEqual([100, 1]);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses maxEndpointsPerSlice %p", (max) => {
    expect(() => planEndpointSlices(anInput({ maxEndpointsPerSlice: max }))).toThrow(/web.*maxEndpointsPerSlice/);
  });

  it("puts pods whose named targetPort resolves differently into different slices", () => {
    const service = aService({ ports: [{ name: "http", port: 80, targetPort: "web" }] });
    const plan = planEndpointSlices(
      anInput({
        service,
        pods: [
          aPod({ name: "old-1", ip: "10.0.0.1", containerPorts: [{ name: "web", containerPort: 8080 }] }),
          aPod({ name: "new-1", ip: "10.0.0.2", containerPorts: [{ name: "web", containerPort: 9090 }] }),
          aPod({ name: "old-2", ip: "10.0.0.3", containerPorts: [{ name: "web", containerPort: 8080 }] }),
        ],
      }),
    );
    const bySlice = plan.create.map((s) => ({
      port: s.ports[0]?.port,
      pods: s.endpoints.map((e) => e.targetRef.name),
    }));
    expect(bySlice).toEqual(
      expect.arrayContaining([
        { port: 8080, pods: ["old-1", "old-2"] },
        { port: 9090, pods: ["new-1"] },
      ]),
    );
    expect(bySlice).toHaveLength(2);
  });

  it("lists a pod that cannot resolve a named port in a slice without that port", () => {
    const service = aService({ ports: [{ name: "http", port: 80, targetPort: "web" }] });
    const plan = planEndpointSlices(
      anInput({ service, pods: [aPod({ name: "odd", containerPorts: [{ name: "other", containerPort: 1 }] })] }),
    );
    expect(plan.create.map((s) => ({ ports: s.ports, pods: s.endpoints.map((e) => e.targetRef.name) }))).toEqual([
      { ports: [], pods: ["odd"] },
    ]);
  });
});

describe("address families", () => {
  const dual = aPod({ name: "web-1", podIPs: ["10.0.0.1", "fd00::1"] });
  const v4 = aPod({ name: "web-2", podIPs: ["10.0.0.2"] });

  it("writes a dual-stack pod into an IPv4 and an IPv6 slice", () => {
    const slices = settled(anInput({ service: aService({ ipFamilies: ["IPv4", "IPv6"] }), pods: [dual, v4] }));
    expect(endpointsOf(slices, "IPv4").map((e) => [e.targetRef.name, e.addresses])).toEqual([
      ["web-1", ["10.0.0.1"]],
      ["web-2", ["10.0.0.2"]],
    ]);
    expect(endpointsOf(slices, "IPv6").map((e) => [e.targetRef.name, e.addresses])).toEqual([["web-1", ["fd00::1"]]]);
  });

  it("writes only the Service's families", () => {
    const slices = settled(anInput({ service: aService({ ipFamilies: ["IPv6"] }), pods: [dual, v4] }));
    expect(slices.map((s) => s.addressType)).toEqual(["IPv6"]);
    expect(endpointsOf(slices, "IPv6").map((e) => e.targetRef.name)).toEqual(["web-1"]);
  });

  it("keeps an empty placeholder for a Service family no pod has an address in", () => {
    const slices = settled(anInput({ service: aService({ ipFamilies: ["IPv4", "IPv6"] }), pods: [v4] }));
    const v6 = slices.filter((s) => s.addressType === "IPv6");
    expect(v6.map((s) => ({ ports: s.ports, endpoints: s.endpoints }))).toEqual([{ ports: [], endpoints: [] }]);
    expect(
      isEmptyPlan(
        planEndpointSlices(
          anInput({ service: aService({ ipFamilies: ["IPv4", "IPv6"] }), pods: [v4], existing: slices }),
        ),
      ),
    ).toBe(true);
  });

  it("without ipFamilies, writes the families the pods use and no empty IPv6 slice", () => {
    expect(settled(anInput({ pods: [v4] })).map((s) => s.addressType)).toEqual(["IPv4"]);
    expect(
      settled(anInput({ pods: [dual] }))
        .map((s) => s.addressType)
        .sort(),
    ).toEqual(["IPv4", "IPv6"]);
  });

  it("deletes slices of a family the Service no longer uses", () => {
    const service = aService({ ipFamilies: ["IPv4", "IPv6"] });
    const slices = settled(anInput({ service, pods: [dual] }));
    const plan = planEndpointSlices(
      anInput({ service: aService({ ipFamilies: ["IPv4"] }), pods: [dual], existing: slices }),
    );
    const v6Name = slices.find((s) => s.addressType === "IPv6")?.metadata.name;
    expect(plan.delete).toEqual([{ name: v6Name, namespace: "default" }]);
    expect(plan.create).toEqual([]);
    expect(plan.update).toEqual([]);
  });
});

describe("minimal churn against existing slices", () => {
  const pods = somePods(250);
  const start = settled(anInput({ pods }));

  it("plans nothing when the slices are already right", () => {
    expect(isEmptyPlan(planEndpointSlices(anInput({ pods, existing: start })))).toBe(true);
  });

  it("plans nothing when existing slices list endpoints and ports in another order", () => {
    const service = aService({
      ports: [
        { name: "a", port: 1 },
        { name: "b", port: 2 },
      ],
    });
    const slices = settled(anInput({ service, pods: somePods(5) }));
    const shuffled = slices.map((s) => ({
      ...s,
      endpoints: [...s.endpoints].reverse(),
      ports: [...s.ports].reverse(),
    }));
    expect(isEmptyPlan(planEndpointSlices(anInput({ service, pods: somePods(5), existing: shuffled })))).toBe(true);
  });

  it("rewrites only the slice of a pod whose admission flipped", () => {
    const plan = planEndpointSlices(anInput({ pods, existing: start, admitted: (uid) => uid !== "uid-web-120" }));
    expect(plan.create).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.update).toHaveLength(1);
    const update = plan.update[0] as EndpointSliceObject;
    const before = start.find((s) => s.metadata.name === update.metadata.name) as EndpointSliceObject;
    expect(update.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(update.endpoints.filter((e) => !e.conditions.ready).map((e) => e.targetRef.name)).toEqual(["web-120"]);
    expect(update.endpoints.map((e) => e.targetRef.name).sort()).toEqual(
      before.endpoints.map((e) => e.targetRef.name).sort(),
    );
    expect(plan.changes).toEqual([
      {
        action: "update",
        slice: update.metadata.name,
        addressType: "IPv4",
        reason: "1 endpoint(s) changed; 100 endpoint(s)",
      },
    ]);
  });

  it("removes a deleted pod's endpoint from its own slice only", () => {
    const home = start.find((s) => s.endpoints.some((e) => e.targetRef.name === "web-007"))?.metadata.name;
    const plan = planEndpointSlices(anInput({ pods: pods.filter((p) => p.name !== "web-007"), existing: start }));
    expect(counts(anInput({ pods: pods.filter((p) => p.name !== "web-007"), existing: start }))).toEqual({
      create: 0,
      update: 1,
      delete: 0,
    });
    expect(plan.update[0]?.metadata.name).toBe(home);
    expect(plan.update[0]?.endpoints).toHaveLength(99);
  });

  it("updates an endpoint in place when its pod starts terminating", () => {
    const withTerminating = pods.map((p) => (p.name === "web-200" ? { ...p, terminating: true } : p));
    const plan = planEndpointSlices(anInput({ pods: withTerminating, existing: start }));
    const home = start.find((s) => s.endpoints.some((e) => e.targetRef.name === "web-200"))?.metadata.name;
    expect(plan.update.map((s) => s.metadata.name)).toEqual([home]);
    expect(plan.update[0]?.endpoints.find((e) => e.targetRef.name === "web-200")?.conditions).toEqual({
      ready: false,
      serving: true,
      terminating: true,
    });
  });

  it("updates the targetRef of a pod recreated with the same name and IP", () => {
    const recreated = pods.map((p) => (p.name === "web-042" ? { ...p, uid: "uid-web-042-again" } : p));
    const plan = planEndpointSlices(anInput({ pods: recreated, existing: start }));
    expect(plan.update).toHaveLength(1);
    expect(plan.update[0]?.endpoints.find((e) => e.targetRef.name === "web-042")?.targetRef.uid).toBe(
      "uid-web-042-again",
    );
  });

  it("updates the zone when the node's zone changes", () => {
    const plan = planEndpointSlices(anInput({ pods, existing: start, nodeZones: { "node-a": "zone-a2" } }));
    expect(plan.update).toHaveLength(3);
    expect(new Set(plan.update.flatMap((s) => s.endpoints.map((e) => e.zone)))).toEqual(new Set(["zone-a2"]));
  });

  it("fills an existing slice with spare room before creating one", () => {
    const base = settled(anInput({ pods: somePods(95) }));
    const plan = planEndpointSlices(anInput({ pods: somePods(98), existing: base }));
    expect(plan.create).toEqual([]);
    expect(plan.update.map((s) => s.endpoints.length)).toEqual([98]);
  });

  it("fills a slice that changes anyway before others", () => {
    // web-000..099 in one slice, web-100..159 in another; web-150 goes, 3 new pods come.
    const base = settled(anInput({ pods: somePods(160) }));
    const next = somePods(163).filter((p) => p.name !== "web-150");
    const plan = planEndpointSlices(anInput({ pods: next, existing: base }));
    expect(plan.create).toEqual([]);
    expect(plan.update).toHaveLength(1);
    expect(plan.update[0]?.endpoints).toHaveLength(62);
  });

  it("creates a new slice for new pods that fit no existing slice whole", () => {
    const base = settled(anInput({ pods: somePods(160) }));
    const plan = planEndpointSlices(anInput({ pods: somePods(210), existing: base }));
    expect(counts(anInput({ pods: somePods(210), existing: base }))).toEqual({ create: 1, update: 0, delete: 0 });
    expect(plan.create[0]?.endpoints).toHaveLength(50);
  });

  it("rewrites a slice for a new port set instead of deleting and creating", () => {
    const moved = aService({ ports: [{ name: "http", port: 80, targetPort: 9090 }] });
    const base = settled(anInput({ pods: somePods(3) }));
    const plan = planEndpointSlices(anInput({ service: moved, pods: somePods(3), existing: base }));
    expect({ create: plan.create.length, delete: plan.delete.length }).toEqual({ create: 0, delete: 0 });
    expect(plan.update.map((s) => ({ name: s.metadata.name, ports: s.ports, n: s.endpoints.length }))).toEqual([
      { name: base[0]?.metadata.name, ports: [{ name: "http", port: 9090, protocol: "TCP" }], n: 3 },
    ]);
  });

  it("keeps one empty placeholder slice when every pod is gone, then plans nothing", () => {
    const plan = planEndpointSlices(anInput({ pods: [], existing: start }));
    expect(plan.create).toEqual([]);
    expect(plan.delete).toHaveLength(2);
    expect(plan.update.map((s) => ({ ports: s.ports, endpoints: s.endpoints }))).toEqual([
      { ports: [], endpoints: [] },
    ]);
    const after = applySlicePlan(start, plan);
    expect(after).toHaveLength(1);
    expect(isEmptyPlan(planEndpointSlices(anInput({ pods: [], existing: after })))).toBe(true);
  });

  it("takes a placeholder read back with null endpoints and ports as equal", () => {
    const [placeholder] = settled(anInput({ pods: [] }));
    const fromApi = { ...placeholder, endpoints: null, ports: null } as unknown as EndpointSliceObject;
    expect(isEmptyPlan(planEndpointSlices(anInput({ pods: [], existing: [fromApi] })))).toBe(true);
  });

  it("turns the placeholder into the first real slice when pods come back", () => {
    const empty = settled(anInput({ pods: [] }));
    const plan = planEndpointSlices(anInput({ pods: somePods(2), existing: empty }));
    expect({ create: plan.create.length, delete: plan.delete.length }).toEqual({ create: 0, delete: 0 });
    expect(plan.update.map((s) => [s.metadata.name, s.endpoints.length])).toEqual([[empty[0]?.metadata.name, 2]]);
  });

  it("deletes a slice owned by an earlier Service of the same name and never reuses it", () => {
    const stale = aSlice({ name: "web-old", service: aService({ uid: "svc-uid-before" }), endpoints: [] });
    const plan = planEndpointSlices(anInput({ pods: somePods(1), existing: [stale] }));
    expect(plan.delete).toEqual([{ name: "web-old", namespace: "default" }]);
    expect(plan.create).toHaveLength(1);
    expect(plan.update).toEqual([]);
  });

  it("restores labels someone changed", () => {
    const base = settled(anInput({ pods: somePods(2) }));
    const tampered = base.map((s) => ({
      ...s,
      metadata: { ...s.metadata, labels: { ...s.metadata.labels, extra: "x" } },
    }));
    const plan = planEndpointSlices(anInput({ pods: somePods(2), existing: tampered }));
    expect(plan.update.map((s) => s.metadata.labels)).toEqual([base[0]?.metadata.labels]);
  });

  it("keeps others' annotations on the slices it rewrites", () => {
    const base = settled(anInput({ pods: somePods(2) })).map((s) => ({
      ...s,
      metadata: { ...s.metadata, annotations: { note: "kept" } },
    }));
    const plan = planEndpointSlices(anInput({ pods: somePods(3), existing: base }));
    expect(plan.update[0]?.metadata.annotations).toEqual({ note: "kept" });
  });

  it("moves the overflow out of a slice above a lowered limit", () => {
    const base = settled(anInput({ pods: somePods(10), maxEndpointsPerSlice: 10 }));
    const input = anInput({ pods: somePods(10), maxEndpointsPerSlice: 4, existing: base });
    const after = applySlicePlan(base, planEndpointSlices(input));
    expect(after.map((s) => s.endpoints.length).sort()).toEqual([2, 4, 4]);
    expect(isEmptyPlan(planEndpointSlices({ ...input, existing: after }))).toBe(true);
  });

  it("keeps an endpoint listed twice in only one slice", () => {
    const [first] = settled(anInput({ pods: somePods(2) }));
    const copy = aSlice({ name: "web-zcopy", endpoints: first?.endpoints.slice(0, 1) ?? [] });
    const plan = planEndpointSlices(anInput({ pods: somePods(2), existing: [first as EndpointSliceObject, copy] }));
    expect(plan.delete).toEqual([{ name: "web-zcopy", namespace: "default" }]);
    expect(plan.update).toEqual([]);
  });
});

describe("purity", () => {
  it("gives the same plan for the same input, whatever the order of pods and slices", () => {
    const pods = somePods(230);
    const existing = settled(anInput({ pods: somePods(180), maxEndpointsPerSlice: 50 }));
    const admitted = (uid: string): boolean => !uid.endsWith("7");
    const a = planEndpointSlices(anInput({ pods, existing, admitted, maxEndpointsPerSlice: 50 }));
    const b = planEndpointSlices(
      anInput({ pods: [...pods].reverse(), existing: [...existing].reverse(), admitted, maxEndpointsPerSlice: 50 }),
    );
    expect(b).toEqual(a);
    expect(a.create.length + a.update.length).toBeGreaterThan(0);
  });

  it("does not change its input", () => {
    const pods = somePods(30);
    const existing = settled(anInput({ pods: somePods(20), maxEndpointsPerSlice: 8 }));
    const input = anInput({ pods, existing, maxEndpointsPerSlice: 8, admitted: (uid) => uid !== "uid-web-003" });
    const snapshot = structuredClone({
      pods: input.pods,
      existing: input.existing,
      service: input.service,
      nodeZones: input.nodeZones,
    });
    const plan = planEndpointSlices(input);
    plan.update.forEach((s) => s.endpoints.pop());
    expect({ pods: input.pods, existing: input.existing, service: input.service, nodeZones: input.nodeZones }).toEqual(
      snapshot,
    );
  });
});
