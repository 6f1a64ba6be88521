// The parts of Kubernetes objects the controllers read, as plain structural types: the
// caches hold the JSON the API server sent, and nothing here depends on the client library.

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
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: Array<{ ip: string }>;
    startTime?: string | Date;
    conditions?: Array<{ type: string; status: string }>;
  };
}

export interface ServiceObject extends KubeObject {
  spec?: {
    selector?: Record<string, string>;
    ports?: Array<{ name?: string; port: number; targetPort?: number | string; protocol?: string; appProtocol?: string }>;
    ipFamilies?: string[];
  };
}

export type NodeObject = KubeObject;

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
