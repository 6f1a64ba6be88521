// Plans a selector-less Service's EndpointSlices the way kube-controller-manager's
// EndpointSlice reconciler does (reconcileByAddressType, reconcileByPortMapping,
// finalize), with deterministic choices where the built-in one picks at random, so
// that the same input always gives the same plan.

import {
  compareEndpoints,
  computeEndpoint,
  computeEndpointKey,
  computeEndpointPorts,
  computePortSetKey,
  classifyAddress,
  endpointsEqualBeyondKey,
  shouldIncludePod,
  sortPorts,
} from "./endpoint-slice-endpoint.js";
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  ENDPOINT_SLICE_API_VERSION,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_OPERATOR,
  type AddressType,
  type EndpointSliceObject,
  type EndpointSlicePlan,
  type EndpointSlicePlanInput,
  type ServiceOwnerReference,
  type SliceChange,
  type SliceEndpoint,
  type SlicePod,
  type SlicePort,
  type SliceService,
} from "./endpoint-slice-types.js";

const ADDRESS_TYPES: readonly AddressType[] = ["IPv4", "IPv6"];

export function computeSliceLabels(service: SliceService): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY_OPERATOR, [LABEL_SERVICE_NAME]: service.name };
}

export function computeServiceOwnerReference(service: SliceService): ServiceOwnerReference {
  return { apiVersion: "v1", kind: "Service", name: service.name, uid: service.uid, controller: true, blockOwnerDeletion: true };
}

/**
 * The address types to write. The Service's ipFamilies when set; otherwise the
 * families the pods' addresses use, or IPv4 when there are none. (The built-in
 * controller falls back to the ClusterIP's family, or both for a headless Service;
 * the planner sees no ClusterIP, and both would leave an empty IPv6 slice in every
 * single-stack cluster.)
 */
export function computeAddressTypes(service: SliceService, pods: SlicePod[]): Set<AddressType> {
  if (service.ipFamilies && service.ipFamilies.length > 0) return new Set(service.ipFamilies);
  const types = new Set<AddressType>();
  for (const pod of pods) {
    if (!shouldIncludePod(pod).include) continue;
    for (const ip of pod.podIPs) types.add(classifyAddress(ip).addressType);
  }
  if (types.size === 0) types.add("IPv4");
  return types;
}

function isOwnedBy(slice: EndpointSliceObject, service: SliceService): boolean {
  return (slice.metadata.ownerReferences ?? []).some(
    (ref) => ref.uid === service.uid && ref.kind === "Service" && ref.apiVersion === "v1",
  );
}

function labelsEqual(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const aKeys = Object.keys(a ?? {});
  return aKeys.length === Object.keys(b).length && aKeys.every((k) => Object.hasOwn(b, k) && b[k] === a?.[k]);
}

function byName(a: EndpointSliceObject, b: EndpointSliceObject): number {
  const an = a.metadata.name ?? "";
  const bn = b.metadata.name ?? "";
  return an < bn ? -1 : an > bn ? 1 : 0;
}

function sliceName(slice: EndpointSliceObject): string {
  return slice.metadata.name ?? slice.metadata.generateName ?? "";
}

function newSlice(service: SliceService, addressType: AddressType, ports: SlicePort[]): EndpointSliceObject {
  return {
    apiVersion: ENDPOINT_SLICE_API_VERSION,
    kind: "EndpointSlice",
    metadata: {
      generateName: `${service.name}-`,
      namespace: service.namespace,
      labels: computeSliceLabels(service),
      ownerReferences: [computeServiceOwnerReference(service)],
    },
    addressType,
    endpoints: [],
    ports,
  };
}

/** The desired content written over an existing slice: its identity, our labels, owner and content. */
function asUpdateOf(existing: EndpointSliceObject, desired: EndpointSliceObject, service: SliceService): EndpointSliceObject {
  const metadata: EndpointSliceObject["metadata"] = {
    name: existing.metadata.name,
    namespace: existing.metadata.namespace,
    labels: computeSliceLabels(service),
    ownerReferences: [computeServiceOwnerReference(service)],
  };
  // Others' annotations survive our full-object update.
  if (existing.metadata.annotations !== undefined) metadata.annotations = { ...existing.metadata.annotations };
  if (existing.metadata.resourceVersion !== undefined) metadata.resourceVersion = existing.metadata.resourceVersion;
  return { ...desired, metadata, endpoints: [...desired.endpoints].sort(compareEndpoints), ports: sortPorts(desired.ports) };
}

/** Whether writing `desired` over `existing` would change anything we manage; endpoint and port order do not count. */
export function sliceContentEqual(existing: EndpointSliceObject, desired: EndpointSliceObject): boolean {
  if (existing.addressType !== desired.addressType) return false;
  if (!labelsEqual(existing.metadata.labels, desired.metadata.labels)) return false;
  if (computePortSetKey(existing.ports ?? []) !== computePortSetKey(desired.ports)) return false;
  const existingEndpoints = existing.endpoints ?? [];
  if (existingEndpoints.length !== desired.endpoints.length) return false;
  const a = [...existingEndpoints].sort(compareEndpoints);
  const b = [...desired.endpoints].sort(compareEndpoints);
  return a.every((ep, i) => {
    const other = b[i];
    return other !== undefined && computeEndpointKey(ep) === computeEndpointKey(other) && endpointsEqualBeyondKey(ep, other);
  });
}

interface TypePlan {
  create: EndpointSliceObject[];
  update: Array<{ existing: EndpointSliceObject; desired: EndpointSliceObject }>;
  delete: EndpointSliceObject[];
  changes: SliceChange[];
}

interface PortGroup {
  ports: SlicePort[];
  endpoints: Map<string, SliceEndpoint>;
}

function describeCounts(kept: number, changed: number, removed: number, added: number): string {
  const parts: string[] = [];
  if (added > 0) parts.push(`${added} endpoint(s) added`);
  if (changed > 0) parts.push(`${changed} endpoint(s) changed`);
  if (removed > 0) parts.push(`${removed} endpoint(s) removed`);
  if (parts.length === 0) parts.push("labels changed");
  return `${parts.join(", ")}; ${kept + added} endpoint(s)`;
}

/** A slice being planned: the endpoints it will hold, and what changed in it. */
interface WorkingSlice {
  existing: EndpointSliceObject;
  endpoints: SliceEndpoint[];
  changed: number;
  removed: number;
  added: number;
}

/** reconcileByPortMapping: keep endpoints where they are, fill changed slices, then the fullest-fitting unchanged one, then new ones. */
function planPortGroup(
  service: SliceService,
  addressType: AddressType,
  existing: EndpointSliceObject[],
  group: PortGroup,
  max: number,
): TypePlan {
  const remaining = new Map(group.endpoints);
  const plan: TypePlan = { create: [], update: [], delete: [], changes: [] };

  // 1. Keep desired endpoints in the slice that already holds them; drop the rest.
  const { toUpdate, unchanged } = keepInPlace(existing, remaining, computeSliceLabels(service), max, addressType, plan);

  const queue = [...remaining.values()].sort(compareEndpoints);
  let next = 0;
  const fill = (w: { endpoints: SliceEndpoint[]; added: number }): void => {
    while (next < queue.length && w.endpoints.length < max) {
      w.endpoints.push(queue[next++] as SliceEndpoint);
      w.added++;
    }
  };

  // 2. Slices that change anyway take new endpoints first, fullest first.
  const byFullness = [...toUpdate].sort((a, b) => b.endpoints.length - a.endpoints.length || byName(a.existing, b.existing));
  for (const w of byFullness) fill(w);

  // 3. Then the unchanged slice closest to full that fits the rest, else new slices.
  while (next < queue.length) {
    const target = closestFit(unchanged, queue.length - next, max);
    if (target !== undefined) {
      unchanged.splice(unchanged.indexOf(target), 1);
      toUpdate.push(target);
      fill(target);
    } else {
      const created = newSlice(service, addressType, group.ports);
      const w = { endpoints: created.endpoints, added: 0 };
      fill(w);
      created.endpoints.sort(compareEndpoints);
      plan.create.push(created);
      plan.changes.push({ action: "create", slice: sliceName(created), addressType, reason: `${w.added} endpoint(s) to place` });
    }
  }

  for (const w of toUpdate) {
    const desired = newSlice(service, addressType, group.ports);
    desired.endpoints = w.endpoints;
    plan.update.push({ existing: w.existing, desired });
    plan.changes.push({
      action: "update",
      slice: sliceName(w.existing),
      addressType,
      reason: describeCounts(w.endpoints.length - w.added, w.changed, w.removed, w.added),
    });
  }
  return plan;
}

/**
 * Each existing slice keeps the desired endpoints it already holds (taking them out of
 * `remaining`) and drops the rest. A slice left empty is deleted; one that changed, or whose
 * labels did, is to be updated; the others are unchanged so far.
 */
function keepInPlace(
  existing: EndpointSliceObject[],
  remaining: Map<string, SliceEndpoint>,
  labels: Record<string, string>,
  max: number,
  addressType: AddressType,
  plan: TypePlan,
): { toUpdate: WorkingSlice[]; unchanged: WorkingSlice[] } {
  const toUpdate: WorkingSlice[] = [];
  const unchanged: WorkingSlice[] = [];
  for (const slice of existing) {
    const kept: SliceEndpoint[] = [];
    let changed = 0;
    for (const endpoint of slice.endpoints ?? []) {
      const key = computeEndpointKey(endpoint);
      const desired = remaining.get(key);
      // A slice over the limit (the limit was lowered) gives its overflow back for placing elsewhere.
      if (desired === undefined || kept.length >= max) continue;
      kept.push(desired);
      if (!endpointsEqualBeyondKey(desired, endpoint)) changed++;
      remaining.delete(key);
    }
    const removed = (slice.endpoints ?? []).length - kept.length;
    const working = { existing: slice, endpoints: kept, changed, removed, added: 0 };
    if (changed > 0 || removed > 0) {
      if (kept.length === 0) {
        plan.delete.push(slice);
        plan.changes.push({ action: "delete", slice: sliceName(slice), addressType, reason: `all ${removed} endpoint(s) removed` });
      } else {
        toUpdate.push(working);
      }
    } else if (!labelsEqual(slice.metadata.labels, labels)) {
      toUpdate.push(working);
    } else {
      unchanged.push(working);
    }
  }
  return { toUpdate, unchanged };
}

/** The unchanged slice that `left` more endpoints bring closest to `max` without passing it; none when `left` fills a slice alone. */
function closestFit(unchanged: WorkingSlice[], left: number, max: number): WorkingSlice | undefined {
  if (left >= max) return undefined;
  let target: WorkingSlice | undefined;
  let closest = max;
  for (const w of unchanged) {
    const diff = max - (left + w.endpoints.length);
    if (diff >= 0 && diff < closest) {
      closest = diff;
      target = w;
    }
  }
  return target;
}

function planAddressType(input: EndpointSlicePlanInput, addressType: AddressType, existing: EndpointSliceObject[], max: number): TypePlan {
  const { service } = input;
  const plan: TypePlan = { create: [], update: [], delete: [], changes: [] };

  const existingByPorts = new Map<string, EndpointSliceObject[]>();
  for (const slice of existing) {
    if (!isOwnedBy(slice, service)) {
      // A slice of an earlier Service with the same name: never reused, only removed.
      plan.delete.push(slice);
      plan.changes.push({ action: "delete", slice: sliceName(slice), addressType, reason: `not owned by Service uid ${service.uid}` });
      continue;
    }
    const key = computePortSetKey(slice.ports ?? []);
    existingByPorts.set(key, [...(existingByPorts.get(key) ?? []), slice]);
  }

  const desiredByPorts = new Map<string, PortGroup>();
  for (const pod of input.pods) {
    if (!shouldIncludePod(pod).include) continue;
    const ports = computeEndpointPorts(service, pod);
    const key = computePortSetKey(ports);
    let group = desiredByPorts.get(key);
    if (group === undefined) {
      group = { ports, endpoints: new Map() };
      desiredByPorts.set(key, group);
    }
    const endpoint = computeEndpoint(pod, service, addressType, input.admitted(pod.uid), input.nodeZones);
    if (endpoint.addresses.length > 0) group.endpoints.set(computeEndpointKey(endpoint), endpoint);
  }

  for (const key of [...desiredByPorts.keys()].sort()) {
    const part = planPortGroup(service, addressType, existingByPorts.get(key) ?? [], desiredByPorts.get(key) as PortGroup, max);
    plan.create.push(...part.create);
    plan.update.push(...part.update);
    plan.delete.push(...part.delete);
    plan.changes.push(...part.changes);
  }
  for (const key of [...existingByPorts.keys()].sort()) {
    if (desiredByPorts.has(key)) continue;
    for (const slice of existingByPorts.get(key) ?? []) {
      plan.delete.push(slice);
      plan.changes.push({ action: "delete", slice: sliceName(slice), addressType, reason: "no selected pod has this port set" });
    }
  }

  // Like the built-in controller, a Service with no endpoints keeps one empty
  // placeholder slice per address type, so consumers can tell "no endpoints" from
  // "not reconciled yet".
  if (existing.length === plan.delete.length && plan.create.length === 0) {
    const placeholder = newSlice(service, addressType, []);
    const only = plan.delete[0];
    if (plan.delete.length === 1 && only !== undefined && isOwnedBy(only, service) && sliceContentEqual(only, placeholder)) {
      plan.delete = [];
      plan.changes = plan.changes.filter((c) => c.action !== "delete");
    } else {
      plan.create.push(placeholder);
      plan.changes.push({ action: "create", slice: sliceName(placeholder), addressType, reason: "placeholder: the Service has no endpoints" });
    }
  }

  // finalize: a slice about to be deleted is rewritten instead of creating a new one.
  const keptDeletes: EndpointSliceObject[] = [];
  for (const doomed of plan.delete) {
    const created = plan.create.at(-1);
    if (created !== undefined && isOwnedBy(doomed, service)) {
      plan.create.pop();
      plan.update.push({ existing: doomed, desired: created });
      plan.changes = plan.changes.filter((c) => c.slice !== sliceName(doomed) || c.action !== "delete");
      const createIndex = plan.changes.map((c) => c.action).lastIndexOf("create");
      const createChange = plan.changes[createIndex];
      if (createChange !== undefined) {
        plan.changes[createIndex] = { ...createChange, action: "update", slice: sliceName(doomed), reason: `reused: ${createChange.reason}` };
      }
    } else {
      keptDeletes.push(doomed);
    }
  }
  plan.delete = keptDeletes;
  return plan;
}

/**
 * Plans the creates, updates and deletes that make the Service's EndpointSlices
 * show the selected pods, with `ready` = kubelet Ready AND admitted. Pure and
 * deterministic; an empty plan means the existing slices are already right.
 */
export function planEndpointSlices(input: EndpointSlicePlanInput): EndpointSlicePlan {
  const max = input.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  if (!Number.isInteger(max) || max < 1) {
    throw new RangeError(`planning EndpointSlices for Service ${input.service.namespace}/${input.service.name}: maxEndpointsPerSlice must be a positive integer, got ${max}`);
  }
  const { service } = input;
  const addressTypes = computeAddressTypes(service, input.pods);
  const plan: EndpointSlicePlan = { create: [], update: [], delete: [], changes: [] };

  const existingByType = new Map<AddressType, EndpointSliceObject[]>();
  for (const slice of [...input.existing].sort(byName)) {
    if (!addressTypes.has(slice.addressType)) {
      plan.delete.push({ name: slice.metadata.name ?? "", namespace: slice.metadata.namespace });
      plan.changes.push({ action: "delete", slice: sliceName(slice), addressType: slice.addressType, reason: `the Service does not use ${slice.addressType}` });
      continue;
    }
    existingByType.set(slice.addressType, [...(existingByType.get(slice.addressType) ?? []), slice]);
  }

  for (const addressType of ADDRESS_TYPES) {
    if (!addressTypes.has(addressType)) continue;
    const part = planAddressType(input, addressType, existingByType.get(addressType) ?? [], max);
    plan.create.push(...part.create);
    for (const { existing, desired } of part.update) {
      const update = asUpdateOf(existing, desired, service);
      if (!sliceContentEqual(existing, update)) plan.update.push(update);
    }
    plan.delete.push(...part.delete.map((s) => ({ name: s.metadata.name ?? "", namespace: s.metadata.namespace })));
    plan.changes.push(...part.changes.filter((c) => c.action !== "update" || plan.update.some((u) => u.metadata.name === c.slice)));
  }
  return plan;
}
