// What one pod contributes to a Service's EndpointSlices: its ports, its
// addresses per family and its endpoint, as the built-in EndpointSlice controller
// derives them (podToEndpoint, getEndpointPorts, FindPort, ShouldPodBeInEndpoints).

import type {
  AddressType,
  EndpointConditions,
  SliceEndpoint,
  SlicePod,
  SlicePort,
  SliceService,
} from "./endpoint-slice-types.js";

export interface PodInclusion {
  include: boolean;
  reason: string;
}

/** Terminal pods and pods without an IP have no endpoint; terminating pods keep theirs. */
export function shouldIncludePod(pod: SlicePod): PodInclusion {
  if (pod.phase === "Succeeded" || pod.phase === "Failed") {
    return { include: false, reason: `pod is terminal (phase ${pod.phase})` };
  }
  if (pod.podIPs.length === 0) return { include: false, reason: "pod has no IP" };
  return { include: true, reason: pod.terminating ? "pod is terminating" : "pod has an IP" };
}

export interface ConditionsDecision {
  conditions: EndpointConditions;
  reason: string;
}

/**
 * Like the built-in controller, except that the policy's admission gates both
 * `ready` and `serving`: a drained pod must not come back through the
 * terminating-endpoint fallback (kube-proxy uses serving endpoints when none is
 * ready). So `serving` = kubelet Ready AND admitted, and `ready` = serving AND not
 * terminating; for a pod that is not terminating, serving equals ready.
 */
export function computeEndpointConditions(pod: SlicePod, admitted: boolean): ConditionsDecision {
  const serving = pod.kubeletReady && admitted;
  const ready = serving && !pod.terminating;
  const conditions = { ready, serving, terminating: pod.terminating };
  if (!pod.kubeletReady) return { conditions, reason: "kubelet reports the pod not Ready" };
  if (!admitted) return { conditions, reason: "the policy does not admit the pod" };
  if (pod.terminating) return { conditions, reason: "pod is terminating" };
  return { conditions, reason: "kubelet Ready and admitted" };
}

const IPV4_MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

/** The family of an address and its usual spelling (IPv4-mapped IPv6 counts as IPv4, as in Go's net.IP). */
export function classifyAddress(ip: string): { addressType: AddressType; address: string } {
  const mapped = IPV4_MAPPED.exec(ip);
  if (mapped?.[1] !== undefined) return { addressType: "IPv4", address: mapped[1] };
  if (ip.includes(":")) return { addressType: "IPv6", address: ip.toLowerCase() };
  return { addressType: "IPv4", address: ip };
}

export function computeEndpointAddresses(pod: SlicePod, addressType: AddressType): string[] {
  const addresses: string[] = [];
  for (const ip of pod.podIPs) {
    const classified = classifyAddress(ip);
    if (classified.addressType === addressType && !addresses.includes(classified.address)) {
      addresses.push(classified.address);
    }
  }
  return addresses;
}

export type PortResolution = { resolved: true; port: number; reason: string } | { resolved: false; reason: string };

/** FindPort: a number is used as is; a name is looked up among the pod's container ports with the same protocol. */
export function computeTargetPort(pod: SlicePod, servicePort: SliceService["ports"][number]): PortResolution {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === "number") return { resolved: true, port: target, reason: "numeric targetPort" };
  const protocol = servicePort.protocol ?? "TCP";
  for (const container of pod.containers) {
    for (const port of container.ports ?? []) {
      if (port.name === target && (port.protocol ?? "TCP") === protocol) {
        return { resolved: true, port: port.containerPort, reason: `container port ${target}/${protocol}` };
      }
    }
  }
  return {
    resolved: false,
    reason: `pod ${pod.namespace}/${pod.name} has no container port named ${target} for ${protocol}`,
  };
}

/** getEndpointPorts: a port the pod cannot resolve is left out for that pod. Sorted canonically. */
export function computeEndpointPorts(service: SliceService, pod: SlicePod): SlicePort[] {
  const ports: SlicePort[] = [];
  for (const servicePort of service.ports) {
    const resolution = computeTargetPort(pod, servicePort);
    if (!resolution.resolved) continue;
    const port: SlicePort = {
      name: servicePort.name ?? "",
      port: resolution.port,
      protocol: servicePort.protocol ?? "TCP",
    };
    if (servicePort.appProtocol !== undefined) port.appProtocol = servicePort.appProtocol;
    ports.push(port);
  }
  return sortPorts(ports);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortPorts(ports: SlicePort[]): SlicePort[] {
  return [...ports].sort(
    (a, b) =>
      compareStrings(a.name, b.name) ||
      compareStrings(a.protocol, b.protocol) ||
      a.port - b.port ||
      compareStrings(a.appProtocol ?? "", b.appProtocol ?? ""),
  );
}

/** Slices are grouped by their port set (the built-in controller's PortMapKey); order does not matter. */
export function computePortSetKey(ports: SlicePort[]): string {
  return JSON.stringify(sortPorts(ports).map((p) => [p.name, p.protocol, p.port, p.appProtocol ?? null]));
}

/**
 * podToEndpoint, with admission. Zone comes from the node when known; hostname
 * only when the pod's subdomain names the Service in the same namespace.
 */
export function computeEndpoint(
  pod: SlicePod,
  service: SliceService,
  addressType: AddressType,
  admitted: boolean,
  nodeZones: Record<string, string>,
): SliceEndpoint {
  const endpoint: SliceEndpoint = {
    addresses: computeEndpointAddresses(pod, addressType),
    conditions: computeEndpointConditions(pod, admitted).conditions,
    targetRef: { kind: "Pod", namespace: pod.namespace, name: pod.name, uid: pod.uid },
  };
  if (pod.nodeName) {
    endpoint.nodeName = pod.nodeName;
    const zone = Object.hasOwn(nodeZones, pod.nodeName) ? nodeZones[pod.nodeName] : undefined;
    if (zone) endpoint.zone = zone;
  }
  if (pod.hostname && pod.subdomain === service.name && pod.namespace === service.namespace) {
    endpoint.hostname = pod.hostname;
  }
  return endpoint;
}

/**
 * An endpoint's identity: addresses, hostname and pod namespace/name (the built-in
 * controller's endpoint hash). Everything else may change in place.
 */
export function computeEndpointKey(endpoint: SliceEndpoint): string {
  return JSON.stringify([
    [...endpoint.addresses].sort(),
    endpoint.hostname ?? "",
    endpoint.targetRef?.namespace ?? "",
    endpoint.targetRef?.name ?? "",
  ]);
}

/** EndpointsEqualBeyondHash: the fields the key does not cover. */
export function endpointsEqualBeyondKey(a: SliceEndpoint, b: SliceEndpoint): boolean {
  return (
    (a.nodeName ?? "") === (b.nodeName ?? "") &&
    (a.zone ?? "") === (b.zone ?? "") &&
    a.conditions?.ready === b.conditions?.ready &&
    a.conditions?.serving === b.conditions?.serving &&
    a.conditions?.terminating === b.conditions?.terminating &&
    a.targetRef?.kind === b.targetRef?.kind &&
    a.targetRef?.uid === b.targetRef?.uid
  );
}

/** A total order on endpoints: by pod namespace, name, uid, then addresses. */
export function compareEndpoints(a: SliceEndpoint, b: SliceEndpoint): number {
  return (
    compareStrings(a.targetRef?.namespace ?? "", b.targetRef?.namespace ?? "") ||
    compareStrings(a.targetRef?.name ?? "", b.targetRef?.name ?? "") ||
    compareStrings(a.targetRef?.uid ?? "", b.targetRef?.uid ?? "") ||
    compareStrings(computeEndpointKey(a), computeEndpointKey(b))
  );
}
