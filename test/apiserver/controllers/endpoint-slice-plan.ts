// What the built-in EndpointSlice controller wants for one Service with a selector, and the creates,
// updates and deletes that get its slices there (pkg/controller/endpointslice/reconciler.go and
// staging/src/k8s.io/endpointslice/utils.go): one endpoint per selected pod with an address, ready =
// Ready and not terminating (or publishNotReadyAddresses), serving = Ready, terminating =
// deletionTimestamp; slices grouped by the ports each pod resolves, at most 100 endpoints each,
// existing slices kept and filled before new ones are made, a placeholder when there is nothing.
import type {
  V1Endpoint,
  DiscoveryV1EndpointPort,
  V1EndpointSlice,
  V1Pod,
  V1Service,
  V1ServicePort,
} from "@kubernetes/client-node";
import { canonical } from "../patch.js";

export const CONTROLLER_NAME = "endpointslice-controller.k8s.io";
export const LABEL_SERVICE_NAME = "kubernetes.io/service-name";
export const LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
const LABEL_HEADLESS = "service.kubernetes.io/headless";
/** kube-controller-manager's --max-endpoints-per-slice default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

export interface SlicePlan {
  create: V1EndpointSlice[];
  /** Full slices to PUT, each with the name (and resourceVersion) of the slice it replaces. */
  update: V1EndpointSlice[];
  delete: V1EndpointSlice[];
}

/** The Service's selector as the controller reads it: none (or an empty one, which storage drops) selects nothing. */
export function serviceSelector(svc: V1Service): Record<string, string> | undefined {
  if (svc.spec?.type === "ExternalName") return undefined;
  const s = svc.spec?.selector;
  return s && Object.keys(s).length > 0 ? s : undefined;
}

export const selects = (selector: Record<string, string>, labels: Record<string, string> | undefined): boolean =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

const isPodReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** ShouldPodBeInEndpoints with terminating pods included: not Succeeded or Failed, and an address. */
export function shouldPodBeInEndpoints(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return false;
  return Boolean(pod.status?.podIP) || (pod.status?.podIPs ?? []).length > 0;
}

const isIPv6 = (ip: string): boolean => ip.includes(":");

export function podToEndpoint(pod: V1Pod, svc: V1Service, addressType: string): V1Endpoint {
  const serving = isPodReady(pod);
  const terminating = Boolean(pod.metadata?.deletionTimestamp);
  const ready = svc.spec?.publishNotReadyAddresses === true || (serving && !terminating);
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip);
  const addresses = (ips.length > 0 ? ips : [pod.status?.podIP ?? ""]).filter(
    (ip) => ip && isIPv6(ip) === (addressType === "IPv6"),
  );
  const endpoint: V1Endpoint = {
    addresses,
    conditions: { ready, serving, terminating },
    targetRef: { kind: "Pod", namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid },
  };
  if (pod.spec?.nodeName) endpoint.nodeName = pod.spec.nodeName;
  // ShouldSetHostname: the pod names this Service as its subdomain.
  if (
    pod.spec?.hostname &&
    pod.spec.subdomain === svc.metadata?.name &&
    pod.metadata?.namespace === svc.metadata?.namespace
  )
    endpoint.hostname = pod.spec.hostname;
  return endpoint;
}

/** FindPort: a number is taken as it is; a name is looked up in the containers' (and sidecars') ports of the same protocol. */
export function findPort(pod: V1Pod, port: V1ServicePort): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === "number") return target;
  const protocol = port.protocol ?? "TCP";
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  for (const c of [...(pod.spec?.containers ?? []), ...sidecars]) {
    const found = (c.ports ?? []).find((p) => p.name === target && (p.protocol ?? "TCP") === protocol);
    if (found) return found.containerPort;
  }
  return undefined;
}

/** getEndpointPorts: one per Service port the pod resolves; a port it cannot resolve is left out. */
export function endpointPorts(svc: V1Service, pod: V1Pod): DiscoveryV1EndpointPort[] {
  const out: DiscoveryV1EndpointPort[] = [];
  for (const p of svc.spec?.ports ?? []) {
    const port = findPort(pod, p);
    if (port === undefined) continue;
    out.push({
      name: p.name ?? "",
      port,
      protocol: p.protocol ?? "TCP",
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    });
  }
  return out;
}

/** getAddressTypesForService: the Service's IP families, else its cluster IP's family (IPv4 for a headless one). */
export function addressTypes(svc: V1Service): string[] {
  const families = svc.spec?.ipFamilies ?? [];
  if (families.length > 0) return families.map((f) => (f === "IPv6" ? "IPv6" : "IPv4"));
  const ip = svc.spec?.clusterIP;
  return [ip && ip !== "None" && isIPv6(ip) ? "IPv6" : "IPv4"];
}

/** setEndpointSliceLabels: the Service's labels but the reserved ones, then the controller's own. */
export function sliceLabels(svc: V1Service): Record<string, string> {
  const reserved = new Set([LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS]);
  const labels = Object.fromEntries(Object.entries(svc.metadata?.labels ?? {}).filter(([k]) => !reserved.has(k)));
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === "None") labels[LABEL_HEADLESS] = "";
  labels[LABEL_SERVICE_NAME] = svc.metadata!.name!;
  labels[LABEL_MANAGED_BY] = CONTROLLER_NAME;
  return labels;
}

const ownedBy = (slice: V1EndpointSlice, svc: V1Service): boolean =>
  (slice.metadata?.ownerReferences ?? []).some(
    (o) => o.uid === svc.metadata?.uid && o.kind === "Service" && o.apiVersion === "v1",
  );

const portsKey = (ports: DiscoveryV1EndpointPort[] | undefined): string =>
  JSON.stringify(
    (ports ?? []).map((p) => canonical(p)).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  );
const endpointKey = (e: V1Endpoint): string =>
  `${e.targetRef?.namespace ?? ""}/${e.targetRef?.name ?? ""}/${[...e.addresses].sort().join(",")}`;
const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

function newSlice(svc: V1Service, ports: DiscoveryV1EndpointPort[], addressType: string): V1EndpointSlice {
  const name = svc.metadata!.name!;
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      generateName: `${name}-`,
      namespace: svc.metadata!.namespace,
      labels: sliceLabels(svc),
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name,
          uid: svc.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints: [],
    ports,
  };
}

/** The slices the controller wants changed so that `existing` (its own, for this Service) list `pods`. */
export function planSlices(
  svc: V1Service,
  pods: readonly V1Pod[],
  existing: readonly V1EndpointSlice[],
  maxPerSlice = MAX_ENDPOINTS_PER_SLICE,
): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const types = addressTypes(svc);
  for (const slice of existing) if (!types.includes(slice.addressType)) plan.delete.push(slice);
  for (const addressType of types) {
    const part = planAddressType(
      svc,
      pods,
      existing.filter((s) => s.addressType === addressType),
      addressType,
      maxPerSlice,
    );
    plan.create.push(...part.create);
    plan.update.push(...part.update);
    plan.delete.push(...part.delete);
  }
  return finalize(svc, plan);
}

function desiredByPorts(
  svc: V1Service,
  pods: readonly V1Pod[],
  addressType: string,
): Map<string, { ports: DiscoveryV1EndpointPort[]; endpoints: Map<string, V1Endpoint> }> {
  const desired = new Map<string, { ports: DiscoveryV1EndpointPort[]; endpoints: Map<string, V1Endpoint> }>();
  const sorted = [...pods].sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
  for (const pod of sorted) {
    if (!shouldPodBeInEndpoints(pod)) continue;
    const ports = endpointPorts(svc, pod);
    const key = portsKey(ports);
    const group = desired.get(key) ?? { ports, endpoints: new Map<string, V1Endpoint>() };
    desired.set(key, group);
    const endpoint = podToEndpoint(pod, svc, addressType);
    if (endpoint.addresses.length > 0) group.endpoints.set(endpointKey(endpoint), endpoint);
  }
  return desired;
}

function planAddressType(
  svc: V1Service,
  pods: readonly V1Pod[],
  existing: V1EndpointSlice[],
  addressType: string,
  max: number,
): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const existingByPorts = new Map<string, V1EndpointSlice[]>();
  for (const slice of existing) {
    if (!ownedBy(slice, svc)) {
      plan.delete.push(slice);
      continue;
    }
    const key = portsKey(slice.ports);
    existingByPorts.set(key, [...(existingByPorts.get(key) ?? []), slice]);
  }
  const desired = desiredByPorts(svc, pods, addressType);
  for (const [key, group] of desired) {
    const part = planPortGroup(svc, existingByPorts.get(key) ?? [], group.endpoints, group.ports, addressType, max);
    plan.create.push(...part.create);
    plan.update.push(...part.update);
    plan.delete.push(...part.delete);
  }
  for (const [key, slices] of existingByPorts) if (!desired.has(key)) plan.delete.push(...slices);
  if (existing.length === plan.delete.length && plan.create.length === 0) {
    const placeholder = newSlice(svc, [], addressType);
    const only = plan.delete.length === 1 ? plan.delete[0]! : undefined;
    // The placeholder that is already there stays.
    if (
      only &&
      ownedBy(only, svc) &&
      (only.endpoints ?? []).length === 0 &&
      (only.ports ?? []).length === 0 &&
      same(only.metadata?.labels, placeholder.metadata!.labels)
    )
      plan.delete = [];
    else plan.create.push(placeholder);
  }
  return plan;
}

/** reconcileByPortMapping: keep and update what is still wanted, fill the changed slices, then the fullest unchanged one, then new ones. */
function planPortGroup(
  svc: V1Service,
  existing: V1EndpointSlice[],
  wanted: Map<string, V1Endpoint>,
  ports: DiscoveryV1EndpointPort[],
  addressType: string,
  max: number,
): SlicePlan {
  const plan: SlicePlan = { create: [], update: [], delete: [] };
  const remaining = new Map(wanted);
  const labels = sliceLabels(svc);
  const toUpdate: V1EndpointSlice[] = [];
  const unchanged: V1EndpointSlice[] = [];
  for (const slice of existing) {
    const kept: V1Endpoint[] = [];
    let changed = false;
    for (const e of slice.endpoints ?? []) {
      const want = remaining.get(endpointKey(e));
      if (!want) continue;
      kept.push(want);
      remaining.delete(endpointKey(e));
      if (!same(want, e)) changed = true;
    }
    const labelsChanged = !same(slice.metadata?.labels ?? {}, labels);
    if (kept.length !== (slice.endpoints ?? []).length) {
      if (kept.length === 0) plan.delete.push(slice);
      else toUpdate.push({ ...slice, metadata: { ...slice.metadata, labels }, endpoints: kept });
    } else if (changed || labelsChanged) {
      toUpdate.push({ ...slice, metadata: { ...slice.metadata, labels }, endpoints: kept });
    } else unchanged.push(slice);
  }
  const take = (slice: V1EndpointSlice): void => {
    const endpoints = (slice.endpoints ??= []);
    for (const [key, e] of remaining) {
      if (endpoints.length >= max) break;
      endpoints.push(e);
      remaining.delete(key);
    }
  };
  for (const slice of toUpdate) take(slice);
  while (remaining.size > 0) {
    let fill: V1EndpointSlice | undefined;
    if (remaining.size < max && unchanged.length > 0) {
      // getSliceToFill: the unchanged slice that ends closest to full.
      const fits = unchanged.filter((s) => (s.endpoints ?? []).length + remaining.size <= max);
      fits.sort((a, b) => (b.endpoints ?? []).length - (a.endpoints ?? []).length);
      const chosen = fits[0];
      if (chosen) {
        unchanged.splice(unchanged.indexOf(chosen), 1);
        fill = { ...chosen, metadata: { ...chosen.metadata, labels }, endpoints: [...(chosen.endpoints ?? [])] };
        toUpdate.push(fill);
      }
    }
    if (!fill) {
      fill = newSlice(svc, ports, addressType);
      plan.create.push(fill);
    }
    take(fill);
  }
  plan.update.push(...toUpdate);
  return plan;
}

/** finalize: a slice to create takes the name of an owned slice of its address type that was to be deleted. */
function finalize(svc: V1Service, plan: SlicePlan): SlicePlan {
  const create = [...plan.create];
  const update = [...plan.update];
  const remove: V1EndpointSlice[] = [];
  for (const old of plan.delete) {
    const i = create.findIndex((c) => c.addressType === old.addressType);
    if (i >= 0 && ownedBy(old, svc)) {
      const [slice] = create.splice(i, 1);
      update.push({
        ...slice!,
        metadata: { ...slice!.metadata, name: old.metadata!.name, resourceVersion: old.metadata!.resourceVersion },
      });
    } else remove.push(old);
  }
  return { create, update, delete: remove };
}
