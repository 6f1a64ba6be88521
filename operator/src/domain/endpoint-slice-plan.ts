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
  type AddressType,
  type EndpointSliceObject,
  type EndpointSlicePlan,
  type EndpointSlicePlanInput,
  type SlicePod,
  type SliceService,
} from "./endpoint-slice-types.js";
import {
  byName,
  computeServiceOwnerReference,
  computeSliceLabels,
  labelsEqual,
  newSlice,
  planPortGroup,
  sliceName,
  type PortGroup,
  type TypePlan,
} from "./endpoint-slice-port-group.js";

export { computeServiceOwnerReference, computeSliceLabels };

const ADDRESS_TYPES: readonly AddressType[] = ["IPv4", "IPv6"];

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

/** The desired content written over an existing slice: its identity, our labels, owner and content. */
function asUpdateOf(
  existing: EndpointSliceObject,
  desired: EndpointSliceObject,
  service: SliceService,
): EndpointSliceObject {
  const metadata: EndpointSliceObject["metadata"] = {
    name: existing.metadata.name,
    namespace: existing.metadata.namespace,
    labels: computeSliceLabels(service),
    ownerReferences: [computeServiceOwnerReference(service)],
  };
  // Others' annotations survive our full-object update.
  if (existing.metadata.annotations !== undefined) metadata.annotations = { ...existing.metadata.annotations };
  if (existing.metadata.resourceVersion !== undefined) metadata.resourceVersion = existing.metadata.resourceVersion;
  return {
    ...desired,
    metadata,
    endpoints: [...desired.endpoints].sort(compareEndpoints),
    ports: sortPorts(desired.ports),
  };
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
    return (
      other !== undefined && computeEndpointKey(ep) === computeEndpointKey(other) && endpointsEqualBeyondKey(ep, other)
    );
  });
}

/** reconcileByAddressType: existing slices by port set; ones of an earlier Service with the same name are only removed. */
function existingByPortSet(
  service: SliceService,
  addressType: AddressType,
  existing: EndpointSliceObject[],
  plan: TypePlan,
): Map<string, EndpointSliceObject[]> {
  const byPorts = new Map<string, EndpointSliceObject[]>();
  for (const slice of existing) {
    if (!isOwnedBy(slice, service)) {
      plan.delete.push(slice);
      plan.changes.push({
        action: "delete",
        slice: sliceName(slice),
        addressType,
        reason: `not owned by Service uid ${service.uid}`,
      });
      continue;
    }
    const key = computePortSetKey(slice.ports ?? []);
    byPorts.set(key, [...(byPorts.get(key) ?? []), slice]);
  }
  return byPorts;
}

/** The desired endpoints of the selected pods, grouped by the port set each pod serves. */
function desiredByPortSet(input: EndpointSlicePlanInput, addressType: AddressType): Map<string, PortGroup> {
  const byPorts = new Map<string, PortGroup>();
  for (const pod of input.pods) {
    if (!shouldIncludePod(pod).include) continue;
    const ports = computeEndpointPorts(input.service, pod);
    const key = computePortSetKey(ports);
    let group = byPorts.get(key);
    if (group === undefined) {
      group = { ports, endpoints: new Map() };
      byPorts.set(key, group);
    }
    const endpoint = computeEndpoint(pod, input.service, addressType, input.admitted(pod.uid), input.nodeZones);
    if (endpoint.addresses.length > 0) group.endpoints.set(computeEndpointKey(endpoint), endpoint);
  }
  return byPorts;
}

/**
 * Like the built-in controller, a Service with no endpoints keeps one empty placeholder slice
 * per address type, so consumers can tell "no endpoints" from "not reconciled yet".
 */
function keepPlaceholder(
  service: SliceService,
  addressType: AddressType,
  existing: EndpointSliceObject[],
  plan: TypePlan,
): void {
  if (existing.length !== plan.delete.length || plan.create.length !== 0) return;
  const placeholder = newSlice(service, addressType, []);
  const only = plan.delete[0];
  if (
    plan.delete.length === 1 &&
    only !== undefined &&
    isOwnedBy(only, service) &&
    sliceContentEqual(only, placeholder)
  ) {
    plan.delete = [];
    plan.changes = plan.changes.filter((c) => c.action !== "delete");
  } else {
    plan.create.push(placeholder);
    plan.changes.push({
      action: "create",
      slice: sliceName(placeholder),
      addressType,
      reason: "placeholder: the Service has no endpoints",
    });
  }
}

/** finalize: a slice about to be deleted is rewritten instead of creating a new one. */
function reuseDeleted(service: SliceService, plan: TypePlan): void {
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
        plan.changes[createIndex] = {
          ...createChange,
          action: "update",
          slice: sliceName(doomed),
          reason: `reused: ${createChange.reason}`,
        };
      }
    } else {
      keptDeletes.push(doomed);
    }
  }
  plan.delete = keptDeletes;
}

function planAddressType(
  input: EndpointSlicePlanInput,
  addressType: AddressType,
  existing: EndpointSliceObject[],
  max: number,
): TypePlan {
  const { service } = input;
  const plan: TypePlan = { create: [], update: [], delete: [], changes: [] };
  const existingByPorts = existingByPortSet(service, addressType, existing, plan);
  const desiredByPorts = desiredByPortSet(input, addressType);

  for (const key of [...desiredByPorts.keys()].sort()) {
    const part = planPortGroup(
      service,
      addressType,
      existingByPorts.get(key) ?? [],
      desiredByPorts.get(key) as PortGroup,
      max,
    );
    plan.create.push(...part.create);
    plan.update.push(...part.update);
    plan.delete.push(...part.delete);
    plan.changes.push(...part.changes);
  }
  for (const key of [...existingByPorts.keys()].sort()) {
    if (desiredByPorts.has(key)) continue;
    for (const slice of existingByPorts.get(key) ?? []) {
      plan.delete.push(slice);
      plan.changes.push({
        action: "delete",
        slice: sliceName(slice),
        addressType,
        reason: "no selected pod has this port set",
      });
    }
  }
  keepPlaceholder(service, addressType, existing, plan);
  reuseDeleted(service, plan);
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
    throw new RangeError(
      `planning EndpointSlices for Service ${input.service.namespace}/${input.service.name}: maxEndpointsPerSlice must be a positive integer, got ${max}`,
    );
  }
  const { service } = input;
  const addressTypes = computeAddressTypes(service, input.pods);
  const plan: EndpointSlicePlan = { create: [], update: [], delete: [], changes: [] };

  const existingByType = new Map<AddressType, EndpointSliceObject[]>();
  for (const slice of [...input.existing].sort(byName)) {
    if (!addressTypes.has(slice.addressType)) {
      plan.delete.push({ name: slice.metadata.name ?? "", namespace: slice.metadata.namespace });
      plan.changes.push({
        action: "delete",
        slice: sliceName(slice),
        addressType: slice.addressType,
        reason: `the Service does not use ${slice.addressType}`,
      });
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
    plan.changes.push(
      ...part.changes.filter((c) => c.action !== "update" || plan.update.some((u) => u.metadata.name === c.slice)),
    );
  }
  return plan;
}
