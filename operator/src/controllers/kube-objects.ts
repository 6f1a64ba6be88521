// The parts of Kubernetes objects the controllers read, as plain structural types: the
// caches hold the JSON the API server sent, and nothing here depends on the client library.
import { READINESS_GATE_CONDITION } from "../api/group.js";
import { PROBE_HOST_NETWORK_ANNOTATION } from "../domain/probe-access.js";

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean }>;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface PodObject extends KubeObject {
  spec?: {
    nodeName?: string;
    hostname?: string;
    subdomain?: string;
    containers?: Array<{ name?: string; ports?: Array<{ name?: string; containerPort: number; protocol?: string }> }>;
    readinessGates?: Array<{ conditionType: string }>;
    hostNetwork?: boolean;
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: Array<{ ip: string }>;
    startTime?: string | Date;
    conditions?: PodCondition[];
  };
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  /** Kept for Ready and ContainersReady: when the shadow report's disagreement began. */
  lastTransitionTime?: string | Date;
}

export interface ServiceObject extends KubeObject {
  spec?: {
    selector?: Record<string, string>;
    ports?: Array<{
      name?: string;
      port: number;
      targetPort?: number | string;
      protocol?: string;
      appProtocol?: string;
    }>;
    ipFamilies?: string[];
  };
}

export type NodeObject = KubeObject;

/** A ReplicaSet as rollout awareness reads it: only metadata (owner Deployment, revision annotation, creation time). */
export type ReplicaSetObject = KubeObject;

export interface PolicyObject extends KubeObject {
  spec?: unknown;
  status?: Record<string, unknown>;
}

export interface ObjectCache<T> {
  get(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string): T[];
}

export function timeOf(t: string | Date | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

export function keyOf(obj: KubeObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

export function isKubeletReady(pod: PodObject): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** The pod lists the readiness gate healthprobe.io/ready (fixed when the pod is created). */
export function hasReadinessGate(pod: PodObject): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === READINESS_GATE_CONDITION);
}

/** The pod's healthprobe.io/ready condition, if it has one. */
export function gateConditionOf(pod: PodObject): PodCondition | undefined {
  return (pod.status?.conditions ?? []).find((c) => c.type === READINESS_GATE_CONDITION);
}

/**
 * Ready but for the operator's gate: ContainersReady, and every other readiness gate True.
 * The kubelet's Ready is this AND the gate condition True.
 */
export function isReadyBesidesGate(pod: PodObject): boolean {
  const conditions = pod.status?.conditions ?? [];
  const isTrue = (type: string) => conditions.some((c) => c.type === type && c.status === "True");
  const others = (pod.spec?.readinessGates ?? []).filter((g) => g.conditionType !== READINESS_GATE_CONDITION);
  return isTrue("ContainersReady") && others.every((g) => isTrue(g.conditionType));
}

/**
 * When the pod's readiness as the shadow report reads it last changed: Ready's transition time, or
 * ContainersReady's for a pod with the operator's gate (its Ready also follows the operator's own verdict).
 */
export function kubeletReadySince(pod: PodObject): number | undefined {
  const type = hasReadinessGate(pod) ? "ContainersReady" : "Ready";
  return timeOf(pod.status?.conditions?.find((c) => c.type === type)?.lastTransitionTime);
}

export function podIPsOf(pod: PodObject): string[] {
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip).filter((ip) => !!ip);
  if (ips.length === 0 && pod.status?.podIP) ips.push(pod.status.podIP);
  return ips;
}

export function uidOf(o: KubeObject): string {
  return o.metadata?.uid ?? "";
}

export function nameOf(o: KubeObject): string {
  return o.metadata?.name ?? "";
}

/** Splits a `namespace/name` key. */
export function splitKey(key: string): [string, string] {
  const i = key.indexOf("/");
  return [key.slice(0, i), key.slice(i + 1)];
}

/** A policy object whose metadata names it: what the parts write through. */
export type NamedPolicy = PolicyObject & { metadata: { name: string; namespace: string } };

/** The Service a policy names, without parsing the rest of its spec. */
export function serviceNameOf(policy: PolicyObject): string | undefined {
  return (policy.spec as { serviceName?: string } | undefined)?.serviceName;
}

/** The policy's drain method, without parsing the rest of its spec (absent: EndpointSlice). */
export function drainMethodOf(policy: PolicyObject): string {
  return (policy.spec as { drain?: { method?: string } } | undefined)?.drain?.method ?? "EndpointSlice";
}

// Cache transforms: what the informers keep of each object, as controller-runtime's cache
// transforms strip managedFields. Anything a controller reads must survive here; the tests in
// kube-objects.test.ts pin each kind's fields.

function slimMeta(
  m: ObjectMeta | undefined,
  keep: { annotations?: boolean; ownerReferences?: boolean; generation?: boolean } = {},
): ObjectMeta {
  const out: ObjectMeta = {};
  if (!m) return out;
  if (m.name !== undefined) out.name = m.name;
  if (m.namespace !== undefined) out.namespace = m.namespace;
  if (m.uid !== undefined) out.uid = m.uid;
  if (m.resourceVersion !== undefined) out.resourceVersion = m.resourceVersion;
  if (keep.generation && m.generation !== undefined) out.generation = m.generation;
  if (m.creationTimestamp !== undefined) out.creationTimestamp = m.creationTimestamp;
  if (m.deletionTimestamp !== undefined) out.deletionTimestamp = m.deletionTimestamp;
  if (m.labels !== undefined) out.labels = m.labels;
  if (keep.annotations && m.annotations !== undefined) out.annotations = m.annotations;
  if (keep.ownerReferences && m.ownerReferences !== undefined) {
    out.ownerReferences = m.ownerReferences.map((r) => {
      const o: NonNullable<ObjectMeta["ownerReferences"]>[number] = {};
      if (r.apiVersion !== undefined) o.apiVersion = r.apiVersion;
      if (r.kind !== undefined) o.kind = r.kind;
      if (r.name !== undefined) o.name = r.name;
      if (r.uid !== undefined) o.uid = r.uid;
      if (r.controller !== undefined) o.controller = r.controller;
      return o;
    });
  }
  return out;
}

/** A pod as the policy controller reads it: identity, labels, owners, ports, phase, addresses, readiness. */
export function slimPod(pod: PodObject): PodObject {
  const out: PodObject = { metadata: slimMeta(pod.metadata, { ownerReferences: true }) };
  // Of the annotations only the hostNetwork opt-in is read (probe-access.ts).
  const optIn = pod.metadata?.annotations?.[PROBE_HOST_NETWORK_ANNOTATION];
  if (optIn !== undefined) out.metadata!.annotations = { [PROBE_HOST_NETWORK_ANNOTATION]: optIn };
  const spec = pod.spec;
  if (spec) {
    const s: NonNullable<PodObject["spec"]> = {};
    if (spec.hostNetwork === true) s.hostNetwork = true;
    if (spec.nodeName !== undefined) s.nodeName = spec.nodeName;
    if (spec.hostname !== undefined) s.hostname = spec.hostname;
    if (spec.subdomain !== undefined) s.subdomain = spec.subdomain;
    if (spec.containers !== undefined) {
      s.containers = spec.containers.map((c) => {
        const container: NonNullable<NonNullable<PodObject["spec"]>["containers"]>[number] = {};
        if (c.name !== undefined) container.name = c.name;
        if (c.ports !== undefined) {
          container.ports = c.ports.map((p) => {
            const port: { name?: string; containerPort: number; protocol?: string } = {
              containerPort: p.containerPort,
            };
            if (p.name !== undefined) port.name = p.name;
            if (p.protocol !== undefined) port.protocol = p.protocol;
            return port;
          });
        }
        return container;
      });
    }
    if (spec.readinessGates !== undefined)
      s.readinessGates = spec.readinessGates.map((g) => ({ conditionType: g.conditionType }));
    out.spec = s;
  }
  const status = pod.status;
  if (status) {
    const st: NonNullable<PodObject["status"]> = {};
    if (status.phase !== undefined) st.phase = status.phase;
    if (status.podIP !== undefined) st.podIP = status.podIP;
    if (status.podIPs !== undefined) st.podIPs = status.podIPs.map((p) => ({ ip: p.ip }));
    if (status.startTime !== undefined) st.startTime = status.startTime;
    if (status.conditions !== undefined) st.conditions = slimConditions(status.conditions, spec?.readinessGates);
    out.status = st;
  }
  return out;
}

/**
 * Ready, ContainersReady and the readiness gates' conditions are read; the others are dropped,
 * with timestamps. Only the operator's own gate condition keeps its reason and message (to
 * write it only when it differs).
 */
function slimConditions(
  conditions: readonly PodCondition[],
  gates: ReadonlyArray<{ conditionType: string }> | undefined,
): PodCondition[] {
  const read = new Set(["Ready", "ContainersReady", ...(gates ?? []).map((g) => g.conditionType)]);
  return conditions
    .filter((c) => read.has(c.type) || c.type === READINESS_GATE_CONDITION)
    .map((c) => {
      const out: PodCondition = { type: c.type, status: c.status };
      if (c.type === READINESS_GATE_CONDITION && c.reason !== undefined) out.reason = c.reason;
      if (c.type === READINESS_GATE_CONDITION && c.message !== undefined) out.message = c.message;
      if ((c.type === "Ready" || c.type === "ContainersReady") && c.lastTransitionTime !== undefined)
        out.lastTransitionTime = c.lastTransitionTime;
      return out;
    });
}

/** A Service: identity, its selector (to refuse one that has it) and its ports and IP families. */
export function slimService(svc: ServiceObject): ServiceObject {
  const out: ServiceObject = { metadata: slimMeta(svc.metadata) };
  if (svc.spec) {
    const s: NonNullable<ServiceObject["spec"]> = {};
    if (svc.spec.selector !== undefined) s.selector = svc.spec.selector;
    if (svc.spec.ports !== undefined) s.ports = svc.spec.ports;
    if (svc.spec.ipFamilies !== undefined) s.ipFamilies = svc.spec.ipFamilies;
    out.spec = s;
  }
  return out;
}

/** A node: its name and labels (the zone); nothing of its status, which changes with every heartbeat. */
export function slimNode(node: NodeObject): NodeObject {
  return { metadata: slimMeta(node.metadata) };
}

/**
 * A ReplicaSet: identity (with the resourceVersion the cache needs), its ownerReferences (the
 * Deployment), creationTimestamp and the deployment.kubernetes.io/revision annotation; nothing of
 * its spec or status, which change on every scaling step of a rollout.
 */
export function slimReplicaSet(rs: ReplicaSetObject): ReplicaSetObject {
  const m = rs.metadata;
  const meta = slimMeta(m, { ownerReferences: true });
  delete meta.labels;
  delete meta.deletionTimestamp;
  const revision = m?.annotations?.["deployment.kubernetes.io/revision"];
  if (revision !== undefined) meta.annotations = { "deployment.kubernetes.io/revision": revision };
  return { metadata: meta };
}

/** Whole but for managedFields: the controllers write slices and policy status back from these. */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  const m = obj.metadata as (ObjectMeta & { managedFields?: unknown }) | undefined;
  if (!m || m.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = m;
  return { ...obj, metadata };
}

/** A diagnostics ConfigMap: its identity, labels, annotations (when it was captured, of which pod) and owner; never its data. */
export function slimDiagnosticsConfigMap(cm: KubeObject): KubeObject {
  return { metadata: slimMeta(cm.metadata, { annotations: true, ownerReferences: true }) };
}
