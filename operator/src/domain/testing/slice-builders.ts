// Small builders for EndpointSlice planning tests, and a stand-in for the API
// server that applies a plan to a list of slices.

import { computeServiceOwnerReference, computeSliceLabels } from "../endpoint-slice-plan.js";
import type {
  AddressType,
  EndpointSliceObject,
  EndpointSlicePlan,
  EndpointSlicePlanInput,
  SliceEndpoint,
  SlicePod,
  SliceService,
  SlicePort,
} from "../endpoint-slice-types.js";

export function aService(overrides: Partial<SliceService> = {}): SliceService {
  return {
    name: "web",
    namespace: "default",
    uid: "svc-uid-web",
    ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
    ...overrides,
  };
}

export interface PodOptions extends Partial<SlicePod> {
  /** Shorthand for podIPs: [ip]. */
  ip?: string;
  /** Shorthand for kubeletReady. */
  ready?: boolean;
  /** Shorthand for a single container's ports. */
  containerPorts?: Array<{ name?: string; containerPort: number; protocol?: string }>;
}

export function aPod(options: PodOptions = {}): SlicePod {
  const { ip, ready, containerPorts, ...rest } = options;
  const name = rest.name ?? "web-1";
  return {
    name,
    namespace: "default",
    uid: `uid-${name}`,
    podIPs: ip !== undefined ? [ip] : ["10.0.0.1"],
    nodeName: "node-a",
    kubeletReady: ready ?? true,
    terminating: false,
    phase: "Running",
    containers: [{ ports: containerPorts ?? [{ name: "http", containerPort: 8080, protocol: "TCP" }] }],
    ...rest,
  };
}

/** `count` ready pods web-000, web-001, ... with IPs 10.0.x.y. */
export function somePods(count: number, options: PodOptions = {}): SlicePod[] {
  return Array.from({ length: count }, (_, i) =>
    aPod({ ...options, name: `web-${String(i).padStart(3, "0")}`, ip: `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}` }),
  );
}

export function anInput(overrides: Partial<EndpointSlicePlanInput> = {}): EndpointSlicePlanInput {
  return {
    service: aService(),
    pods: [],
    admitted: () => true,
    nodeZones: { "node-a": "zone-a", "node-b": "zone-b" },
    existing: [],
    maxEndpointsPerSlice: 100,
    ...overrides,
  };
}

export function aSlice(options: {
  name: string;
  service?: SliceService;
  addressType?: AddressType;
  endpoints?: SliceEndpoint[];
  ports?: SlicePort[];
  resourceVersion?: string;
}): EndpointSliceObject {
  const service = options.service ?? aService();
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: options.name,
      namespace: service.namespace,
      labels: computeSliceLabels(service),
      ownerReferences: [computeServiceOwnerReference(service)],
      resourceVersion: options.resourceVersion ?? "1",
    },
    addressType: options.addressType ?? "IPv4",
    endpoints: options.endpoints ?? [],
    ports: options.ports ?? [{ name: "http", port: 8080, protocol: "TCP" }],
  };
}

/**
 * Applies a plan like the API server would: creates get a name from generateName
 * and a resourceVersion, updates replace by name and bump it, deletes remove.
 * Throws on what the API server would refuse (a stale resourceVersion, a missing name).
 */
export function applySlicePlan(
  existing: EndpointSliceObject[],
  plan: EndpointSlicePlan,
  seed = 0,
): EndpointSliceObject[] {
  let counter = seed;
  const byName = new Map(existing.map((s) => [s.metadata.name ?? "", structuredClone(s)]));
  for (const d of plan.delete) {
    if (!byName.delete(d.name)) throw new Error(`deleting missing slice ${d.name}`);
  }
  for (const u of plan.update) {
    const name = u.metadata.name ?? "";
    const current = byName.get(name);
    if (current === undefined) throw new Error(`updating missing slice ${name}`);
    if (u.metadata.resourceVersion !== current.metadata.resourceVersion) throw new Error(`conflict on slice ${name}`);
    if (u.addressType !== current.addressType) throw new Error(`addressType is immutable on slice ${name}`);
    const next = structuredClone(u);
    next.metadata.resourceVersion = String(Number(current.metadata.resourceVersion ?? "0") + 1);
    byName.set(name, next);
  }
  for (const c of plan.create) {
    if (c.metadata.name !== undefined || c.metadata.generateName === undefined)
      throw new Error("creates carry generateName only");
    let name = `${c.metadata.generateName}gen${counter++}`;
    while (byName.has(name)) name = `${c.metadata.generateName}gen${counter++}`;
    const next = structuredClone(c);
    delete next.metadata.generateName;
    next.metadata.name = name;
    next.metadata.resourceVersion = "1";
    byName.set(name, next);
  }
  return [...byName.values()];
}

export function isEmptyPlan(plan: EndpointSlicePlan): boolean {
  return plan.create.length === 0 && plan.update.length === 0 && plan.delete.length === 0;
}

/** Every endpoint of the given address type, with the slice it sits in. */
export function endpointsOf(
  slices: EndpointSliceObject[],
  addressType: AddressType,
): Array<SliceEndpoint & { slice: string; ports: SlicePort[] }> {
  return slices
    .filter((s) => s.addressType === addressType)
    .flatMap((s) =>
      s.endpoints.map((e) => ({ ...e, slice: s.metadata.name ?? s.metadata.generateName ?? "", ports: s.ports })),
    );
}
