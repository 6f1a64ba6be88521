// Plain-data shapes for planning a Service's EndpointSlices. They mirror the
// discovery.k8s.io/v1 objects closely enough that an adapter can send them as they are.

export type AddressType = "IPv4" | "IPv6";
export type PortProtocol = "TCP" | "UDP" | "SCTP";

export const ENDPOINT_SLICE_API_VERSION = "discovery.k8s.io/v1";
export const LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
export const LABEL_SERVICE_NAME = "kubernetes.io/service-name";
export { MANAGED_BY_VALUE as MANAGED_BY_OPERATOR } from "../api/group.js";
export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;

export interface SliceServicePort {
  name?: string;
  port: number;
  /** Absent: same as `port`. A string is a container port name, resolved per pod. */
  targetPort?: number | string;
  /** Default TCP, as the API server defaults it. */
  protocol?: PortProtocol;
  appProtocol?: string;
}

export interface SliceService {
  name: string;
  namespace: string;
  uid: string;
  ports: SliceServicePort[];
  /** spec.ipFamilies. Absent or empty: the families the pods' addresses use (IPv4 when none). */
  ipFamilies?: AddressType[];
}

export interface SliceContainerPort {
  name?: string;
  containerPort: number;
  /** Default TCP. */
  protocol?: string;
}

export interface SlicePod {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion?: string;
  /** status.podIPs; the first one is status.podIP. */
  podIPs: string[];
  nodeName?: string;
  hostname?: string;
  subdomain?: string;
  /** The pod's Ready condition is True. */
  kubeletReady: boolean;
  /** metadata.deletionTimestamp is set. */
  terminating: boolean;
  phase?: string;
  /** Regular containers and restartable (sidecar) init containers, which also serve named ports. */
  containers: Array<{ ports?: SliceContainerPort[] }>;
}

export interface EndpointConditions {
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export interface EndpointTargetRef {
  kind: "Pod";
  namespace: string;
  name: string;
  uid: string;
}

export interface SliceEndpoint {
  addresses: string[];
  conditions: EndpointConditions;
  nodeName?: string;
  zone?: string;
  hostname?: string;
  targetRef: EndpointTargetRef;
}

export interface SlicePort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface ServiceOwnerReference {
  apiVersion: "v1";
  kind: "Service";
  name: string;
  uid: string;
  controller: true;
  blockOwnerDeletion: true;
}

export interface EndpointSliceObject {
  apiVersion: "discovery.k8s.io/v1";
  kind: "EndpointSlice";
  metadata: {
    name?: string;
    generateName?: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences: ServiceOwnerReference[];
    resourceVersion?: string;
  };
  addressType: AddressType;
  endpoints: SliceEndpoint[];
  ports: SlicePort[];
}

export interface EndpointSlicePlanInput {
  service: SliceService;
  /** The pods the policy selects (any phase; the planner filters). */
  pods: SlicePod[];
  /** Whether the policy admits the pod to rotation. */
  admitted: (podUid: string) => boolean;
  /** Node name -> topology.kubernetes.io/zone, for nodes that have one. */
  nodeZones: Record<string, string>;
  /** The slices labelled as ours for this Service, from the cache. */
  existing: EndpointSliceObject[];
  /** Default 100. Must be a positive integer. */
  maxEndpointsPerSlice?: number;
}

export type SliceAction = "create" | "update" | "delete";

/** Why one slice is in the plan; for logs and events, not for applying. */
export interface SliceChange {
  action: SliceAction;
  /** The slice name, or its generateName for a create. */
  slice: string;
  addressType: AddressType;
  reason: string;
}

export interface EndpointSlicePlan {
  create: EndpointSliceObject[];
  /** Full desired objects carrying the existing name and resourceVersion. */
  update: EndpointSliceObject[];
  delete: Array<{ name: string; namespace: string }>;
  changes: SliceChange[];
}
