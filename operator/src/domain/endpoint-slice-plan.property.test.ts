import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { planEndpointSlices } from "./endpoint-slice-plan.js";
import type {
  AddressType,
  EndpointSliceObject,
  EndpointSlicePlanInput,
  SlicePod,
  SlicePort,
  SliceService,
} from "./endpoint-slice-types.js";
import { aPod, aService, aSlice, anInput, applySlicePlan, isEmptyPlan } from "./testing/slice-builders.js";

// A small world so that random states collide often: few names, few ports, tiny slices.
const NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
type IpKind = "v4" | "v6" | "dual" | "none";

interface PodSpec {
  name: string;
  generation: number;
  ipKind: IpKind;
  ready: boolean;
  terminating: boolean;
  phase: "Running" | "Pending" | "Succeeded" | "Failed";
  webPort: number | undefined;
  node: string | undefined;
  hostname: boolean;
}

const podSpec = (name: string): fc.Arbitrary<PodSpec> =>
  fc.record({
    name: fc.constant(name),
    generation: fc.integer({ min: 0, max: 1 }),
    ipKind: fc.constantFrom<IpKind>("v4", "v4", "v6", "dual", "none"),
    ready: fc.boolean(),
    terminating: fc.boolean(),
    phase: fc.constantFrom<PodSpec["phase"]>("Running", "Running", "Running", "Pending", "Succeeded", "Failed"),
    webPort: fc.constantFrom<number | undefined>(8080, 8080, 9090, undefined),
    node: fc.constantFrom<string | undefined>("node-a", "node-b", "node-c", undefined),
    hostname: fc.boolean(),
  });

const podSpecs: fc.Arbitrary<PodSpec[]> = fc
  .subarray(NAMES)
  .chain((names) => (names.length === 0 ? fc.constant([]) : fc.tuple(...names.map(podSpec))));

function toPod(spec: PodSpec): SlicePod {
  const i = NAMES.indexOf(spec.name) + 1;
  const ips: Record<IpKind, string[]> = {
    v4: [`10.0.0.${i}`],
    v6: [`fd00::${i}`],
    dual: [`10.0.0.${i}`, `fd00::${i}`],
    none: [],
  };
  return aPod({
    name: spec.name,
    uid: `uid-${spec.name}-${spec.generation}`,
    podIPs: ips[spec.ipKind],
    kubeletReady: spec.ready,
    terminating: spec.terminating,
    phase: spec.phase,
    nodeName: spec.node,
    hostname: spec.hostname ? spec.name : undefined,
    subdomain: spec.hostname ? "web" : undefined,
    containerPorts: spec.webPort === undefined ? [] : [{ name: "web", containerPort: spec.webPort }],
  });
}

interface ServiceSpec {
  withAdmin: boolean;
  families: AddressType[] | undefined;
}
const serviceSpec: fc.Arbitrary<ServiceSpec> = fc.record({
  withAdmin: fc.boolean(),
  families: fc.constantFrom<AddressType[] | undefined>(
    undefined,
    ["IPv4"],
    ["IPv6"],
    ["IPv4", "IPv6"],
    ["IPv6", "IPv4"],
  ),
});

function toService(spec: ServiceSpec): SliceService {
  const ports: SliceService["ports"] = [{ name: "http", port: 80, targetPort: "web" }];
  if (spec.withAdmin) ports.push({ name: "admin", port: 9000 });
  return aService({ ports, ipFamilies: spec.families });
}

interface WorldSpec {
  pods: PodSpec[];
  service: ServiceSpec;
  admitted: string[];
  max: number;
  /** The zone of node-b, when known. */
  zoneB: string | undefined;
}
const worldSpec: fc.Arbitrary<WorldSpec> = fc.record({
  pods: podSpecs,
  service: serviceSpec,
  admitted: fc.subarray(NAMES),
  max: fc.integer({ min: 1, max: 5 }),
  zoneB: fc.constantFrom<string | undefined>("zone-b", "zone-b2", undefined),
});

function toInput(world: WorldSpec, existing: EndpointSliceObject[]): EndpointSlicePlanInput {
  const admittedUids = new Set(
    world.pods.filter((p) => world.admitted.includes(p.name)).map((p) => `uid-${p.name}-${p.generation}`),
  );
  return anInput({
    service: toService(world.service),
    pods: world.pods.map(toPod),
    admitted: (uid) => admittedUids.has(uid),
    existing,
    maxEndpointsPerSlice: world.max,
    nodeZones: world.zoneB === undefined ? { "node-a": "zone-a" } : { "node-a": "zone-a", "node-b": world.zoneB },
  });
}

/** Junk the cache might hold: any family, any ports, any endpoints, other owners, wrong labels, overfull. */
const junkSlices: fc.Arbitrary<EndpointSliceObject[]> = fc
  .array(
    fc.record({
      addressType: fc.constantFrom<AddressType>("IPv4", "IPv6"),
      ports: fc.constantFrom<SlicePort[]>(
        [],
        [{ name: "http", port: 8080, protocol: "TCP" }],
        [{ name: "http", port: 9090, protocol: "TCP" }],
        [
          { name: "admin", port: 9000, protocol: "TCP" },
          { name: "http", port: 8080, protocol: "TCP" },
        ],
      ),
      pods: fc.array(
        fc.tuple(
          podSpec("x").map((p) => p),
          fc.constantFrom(...NAMES),
          fc.boolean(),
        ),
        { maxLength: 7 },
      ),
      foreignOwner: fc.boolean(),
      extraLabel: fc.boolean(),
    }),
    { maxLength: 4 },
  )
  .map((specs) =>
    specs.map((spec, n) => {
      const endpoints = spec.pods.map(([p, name, ready]) => {
        const pod = toPod({ ...p, name, ipKind: spec.addressType === "IPv4" ? "v4" : "v6" });
        return {
          addresses: pod.podIPs,
          conditions: { ready, serving: ready, terminating: pod.terminating },
          nodeName: pod.nodeName,
          targetRef: { kind: "Pod" as const, namespace: pod.namespace, name: pod.name, uid: pod.uid },
        };
      });
      const slice = aSlice({
        name: `junk-${n}`,
        addressType: spec.addressType,
        ports: spec.ports,
        endpoints,
        service: spec.foreignOwner ? aService({ uid: "svc-uid-before" }) : aService(),
      });
      if (spec.extraLabel) slice.metadata.labels = { ...slice.metadata.labels, stray: "yes" };
      return slice;
    }),
  );

/** An earlier state of the same world: some pods as they were, some different, some gone, some extra; other settings. */
function earlierOf(world: WorldSpec): fc.Arbitrary<WorldSpec> {
  const kept = world.pods.map((p) =>
    fc.oneof(
      fc.constant([p]),
      fc.constant([]),
      podSpec(p.name).map((q) => [q]),
    ),
  );
  const keptPods = kept.length === 0 ? fc.constant([] as PodSpec[]) : fc.tuple(...kept).map((xs) => xs.flat());
  const extraPods = podSpecs.map((ps) => ps.filter((p) => !world.pods.some((q) => q.name === p.name)));
  return fc.record({
    pods: fc.tuple(keptPods, extraPods).map(([a, b]) => [...a, ...b]),
    service: fc.oneof(fc.constant(world.service), serviceSpec),
    admitted: fc.oneof(fc.constant(world.admitted), fc.subarray(NAMES)),
    max: fc.integer({ min: 1, max: 6 }),
    zoneB: fc.oneof(fc.constant(world.zoneB), fc.constantFrom<string | undefined>("zone-b", undefined)),
  });
}

/** A world, and a prior layout: what an earlier state of it settled into, plus junk. */
const worldAndPrior: fc.Arbitrary<[WorldSpec, EndpointSliceObject[]]> = worldSpec.chain((world) =>
  fc.tuple(
    fc.constant(world),
    fc
      .tuple(fc.option(earlierOf(world), { nil: undefined, freq: 4 }), fc.oneof(fc.constant([]), junkSlices))
      .map(([earlier, junk]) =>
        (earlier === undefined ? [] : applySlicePlan([], planEndpointSlices(toInput(earlier, [])))).concat(junk),
      ),
  ),
);

// What the built-in controller would list, computed here from the pod spec rather than by the planner.
function expectedFamilies(world: WorldSpec): AddressType[] {
  if (world.service.families !== undefined) return world.service.families;
  const included = world.pods.filter((p) => p.ipKind !== "none" && p.phase !== "Succeeded" && p.phase !== "Failed");
  const families = new Set<AddressType>();
  for (const p of included) {
    if (p.ipKind === "v4" || p.ipKind === "dual") families.add("IPv4");
    if (p.ipKind === "v6" || p.ipKind === "dual") families.add("IPv6");
  }
  return families.size === 0 ? ["IPv4"] : [...families];
}

function hasFamily(p: PodSpec, family: AddressType): boolean {
  return family === "IPv4" ? p.ipKind === "v4" || p.ipKind === "dual" : p.ipKind === "v6" || p.ipKind === "dual";
}

function checkSettled(world: WorldSpec, slices: EndpointSliceObject[]): void {
  const families = expectedFamilies(world);
  expect(new Set(slices.map((s) => s.addressType))).toEqual(new Set(families));
  for (const slice of slices) {
    expect(slice.endpoints.length).toBeLessThanOrEqual(world.max);
    expect(slice.metadata.ownerReferences.map((r) => r.uid)).toEqual(["svc-uid-web"]);
    expect(slice.metadata.labels).toEqual({
      "endpointslice.kubernetes.io/managed-by": "healthprobe-operator.healthprobe.io",
      "kubernetes.io/service-name": "web",
    });
  }
  for (const family of families) {
    const listed = slices
      .filter((s) => s.addressType === family)
      .flatMap((s) => s.endpoints.map((e) => ({ e, ports: s.ports })));
    const wanted = world.pods.filter((p) => hasFamily(p, family) && p.phase !== "Succeeded" && p.phase !== "Failed");
    // Every selected pod with an address of the family, exactly once; nothing else.
    expect(listed.map(({ e }) => e.targetRef.name).sort()).toEqual(wanted.map((p) => p.name).sort());
    for (const p of wanted) {
      const found = listed.find(({ e }) => e.targetRef.name === p.name);
      const admitted = world.admitted.includes(p.name);
      expect(found?.e.conditions).toEqual({
        ready: p.ready && admitted && !p.terminating,
        serving: p.ready && admitted,
        terminating: p.terminating,
      });
      expect(found?.e.targetRef.uid).toBe(`uid-${p.name}-${p.generation}`);
      expect(found?.e.nodeName).toBe(p.node);
      expect(found?.e.zone).toBe(p.node === "node-a" ? "zone-a" : p.node === "node-b" ? world.zoneB : undefined);
      const ports = [
        ...(world.service.withAdmin ? [{ name: "admin", port: 9000, protocol: "TCP" }] : []),
        ...(p.webPort !== undefined ? [{ name: "http", port: p.webPort, protocol: "TCP" }] : []),
      ];
      expect([...(found?.ports ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1))).toEqual(ports);
    }
  }
}

describe("EndpointSlice planning, for random pods, admissions and prior layouts", () => {
  it("converges in one plan: applying it and planning again plans nothing", () => {
    fc.assert(
      fc.property(worldAndPrior, ([world, prior]) => {
        const first = planEndpointSlices(toInput(world, prior));
        const after = applySlicePlan(prior, first);
        const second = planEndpointSlices(toInput(world, after));
        expect(second).toEqual({ create: [], update: [], delete: [], changes: [] });
      }),
      { numRuns: 400 },
    );
  });

  it("lists every selected pod with an IP exactly once per family, with its conditions and ports, in slices within the limit", () => {
    fc.assert(
      fc.property(worldAndPrior, ([world, prior]) => {
        checkSettled(world, applySlicePlan(prior, planEndpointSlices(toInput(world, prior))));
      }),
      { numRuns: 300 },
    );
  });

  it("rewrites at most one slice per family of a pod whose admission flipped, and creates or deletes nothing", () => {
    fc.assert(
      fc.property(worldSpec, fc.constantFrom(...NAMES), (world, flipped) => {
        const settled = applySlicePlan([], planEndpointSlices(toInput(world, [])));
        const admitted = world.admitted.includes(flipped)
          ? world.admitted.filter((n) => n !== flipped)
          : [...world.admitted, flipped];
        const plan = planEndpointSlices(toInput({ ...world, admitted }, settled));
        expect(plan.create).toEqual([]);
        expect(plan.delete).toEqual([]);
        expect(plan.update.length).toBeLessThanOrEqual(2);
        for (const update of plan.update) {
          const before = settled.find((s) => s.metadata.name === update.metadata.name);
          expect(update.endpoints.map((e) => e.targetRef.name).sort()).toEqual(
            before?.endpoints.map((e) => e.targetRef.name).sort(),
          );
        }
        const pod = world.pods.find((p) => p.name === flipped);
        const matters =
          pod !== undefined &&
          pod.ready &&
          pod.ipKind !== "none" &&
          pod.phase !== "Succeeded" &&
          pod.phase !== "Failed";
        if (!matters) expect(isEmptyPlan(plan)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same plan whatever the order of pods and existing slices", () => {
    fc.assert(
      fc.property(worldAndPrior, fc.integer(), ([world, prior], seed) => {
        const shuffle = <T>(xs: T[]): T[] =>
          xs
            .map((x, i) => ({ x, k: (i * 7919 + seed) % 101 }))
            .sort((a, b) => a.k - b.k)
            .map(({ x }) => x);
        const a = planEndpointSlices(toInput(world, prior));
        const b = planEndpointSlices(toInput({ ...world, pods: shuffle(world.pods) }, shuffle(prior)));
        expect(b).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });

  it("only updates and deletes slices that exist, and only creates with generateName", () => {
    fc.assert(
      fc.property(worldAndPrior, ([world, prior]) => {
        const plan = planEndpointSlices(toInput(world, prior));
        const names = new Set(prior.map((s) => s.metadata.name));
        const touched = [...plan.update.map((s) => s.metadata.name), ...plan.delete.map((d) => d.name)];
        expect(touched.every((n) => names.has(n))).toBe(true);
        expect(new Set(touched).size).toBe(touched.length);
        expect(plan.create.every((s) => s.metadata.name === undefined && s.metadata.generateName === "web-")).toBe(
          true,
        );
      }),
      { numRuns: 200 },
    );
  });
});
