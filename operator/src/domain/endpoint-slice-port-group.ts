// reconcileByPortMapping for one address type and port set: where each desired endpoint goes
// among the existing slices of that port set, and which new slices are needed (endpoint-slice-plan.ts
// drives it per address type).
import { compareEndpoints, computeEndpointKey, endpointsEqualBeyondKey } from "./endpoint-slice-endpoint.js";
import {
  ENDPOINT_SLICE_API_VERSION,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_OPERATOR,
  type AddressType,
  type EndpointSliceObject,
  type ServiceOwnerReference,
  type SliceChange,
  type SliceEndpoint,
  type SlicePort,
  type SliceService,
} from "./endpoint-slice-types.js";

export function computeSliceLabels(service: SliceService): Record<string, string> {
  return { [LABEL_MANAGED_BY]: MANAGED_BY_OPERATOR, [LABEL_SERVICE_NAME]: service.name };
}

export function computeServiceOwnerReference(service: SliceService): ServiceOwnerReference {
  return {
    apiVersion: "v1",
    kind: "Service",
    name: service.name,
    uid: service.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function labelsEqual(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const aKeys = Object.keys(a ?? {});
  return aKeys.length === Object.keys(b).length && aKeys.every((k) => Object.hasOwn(b, k) && b[k] === a?.[k]);
}

export function byName(a: EndpointSliceObject, b: EndpointSliceObject): number {
  const an = a.metadata.name ?? "";
  const bn = b.metadata.name ?? "";
  return an < bn ? -1 : an > bn ? 1 : 0;
}

export function sliceName(slice: EndpointSliceObject): string {
  return slice.metadata.name ?? slice.metadata.generateName ?? "";
}

export function newSlice(service: SliceService, addressType: AddressType, ports: SlicePort[]): EndpointSliceObject {
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

export interface TypePlan {
  create: EndpointSliceObject[];
  update: Array<{ existing: EndpointSliceObject; desired: EndpointSliceObject }>;
  delete: EndpointSliceObject[];
  changes: SliceChange[];
}

export interface PortGroup {
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
export function planPortGroup(
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
  const byFullness = [...toUpdate].sort(
    (a, b) => b.endpoints.length - a.endpoints.length || byName(a.existing, b.existing),
  );
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
      plan.changes.push({
        action: "create",
        slice: sliceName(created),
        addressType,
        reason: `${w.added} endpoint(s) to place`,
      });
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
        plan.changes.push({
          action: "delete",
          slice: sliceName(slice),
          addressType,
          reason: `all ${removed} endpoint(s) removed`,
        });
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
