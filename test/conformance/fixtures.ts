// Builders and repository files the conformance scenarios share.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { Obj } from "../../hack/apiserver/test-kit.js";
import { repoRoot } from "../support/paths.js";

export const crdsDir = join(repoRoot, "crds");
export const crdName = "healthprobepolicies.healthprobe.io";
export const examplesDir = join(repoRoot, "examples");
export const exampleFiles = readdirSync(examplesDir)
  .filter((f) => f.endsWith(".yaml"))
  .sort();

export function documentsOf(path: string): Obj[] {
  return parseAllDocuments(readFileSync(path, "utf8"))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter++;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 6)}`;
}

export function aNamespace(name: string): Obj {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } };
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

function merge(base: any, over: any): any {
  if (over === undefined) return base;
  if (
    typeof base !== "object" ||
    base === null ||
    Array.isArray(base) ||
    typeof over !== "object" ||
    over === null ||
    Array.isArray(over)
  )
    return over;
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

export interface PolicySpec {
  serviceName: string;
  selector: { matchLabels: Record<string, string> };
  probe: {
    type?: string;
    port: number | string;
    path: string;
    method?: string;
    grpc?: { service?: string };
    periodSeconds?: number;
    timeoutSeconds?: number;
    match?: { statusCodes?: string[]; bodyContains?: string; maxLatencyMilliseconds?: number };
  };
  replacement?: { maxPerHour?: number; maxPerDay?: number };
}

/** A valid policy; `spec` overrides merge into it field by field. */
export function aPolicy(opts: { name?: string; spec?: DeepPartial<PolicySpec> } = {}): Obj {
  const base: PolicySpec = {
    serviceName: "web",
    selector: { matchLabels: { app: "web" } },
    probe: { port: 8080, path: "/healthz", periodSeconds: 10, timeoutSeconds: 5 },
  };
  return {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name: opts.name ?? uniqueName("policy") },
    spec: merge(base, opts.spec),
  };
}

/** A pod without a controller, as a user would start one next to a policy. */
export function aBarePod(opts: { name?: string; labels: Record<string, string> }): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: opts.name ?? uniqueName("pod"), labels: opts.labels },
    spec: { containers: [{ name: "app", image: "nginx:1.27", ports: [{ name: "http", containerPort: 8080 }] }] },
  };
}

export function aConfigMap(opts: { name: string; ownerReferences?: any[] }): Obj {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: opts.name, ...(opts.ownerReferences ? { ownerReferences: opts.ownerReferences } : {}) },
    data: { key: "value" },
  };
}

export function aReplicaSet(opts: { name: string; replicas: number; labels: Record<string, string> }): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: opts.name },
    spec: {
      replicas: opts.replicas,
      selector: { matchLabels: opts.labels },
      template: { metadata: { labels: opts.labels }, spec: { containers: [{ name: "app", image: "nginx:1.27" }] } },
    },
  };
}

export function ownerRef(owner: Obj): Record<string, unknown> {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata!.name, uid: owner.metadata!.uid };
}

/** Policies the server must refuse, each with the field its message must name. */
/** `cel`: refused by the CRD's CEL rules, which only the real API server runs (not the API test server). */
export const invalidPolicies: Array<{ what: string; spec: DeepPartial<PolicySpec>; field: string; cel?: true }> = [
  {
    what: "a timeout longer than the period",
    spec: { probe: { periodSeconds: 10, timeoutSeconds: 30 } },
    field: "spec.probe.timeoutSeconds",
    cel: true,
  },
  { what: "a path without a leading slash", spec: { probe: { path: "healthz" } }, field: "spec.probe.path" },
  {
    what: "status code 600",
    spec: { probe: { match: { statusCodes: ["600"] } } },
    field: "spec.probe.match.statusCodes[0]",
  },
  {
    what: "fewer replacements per day than per hour",
    spec: { replacement: { maxPerHour: 5, maxPerDay: 2 } },
    field: "spec.replacement.maxPerDay",
    cel: true,
  },
  {
    what: "bodyContains with method HEAD",
    spec: { probe: { method: "HEAD", match: { bodyContains: "ok" } } },
    field: "spec.probe.match.bodyContains",
    cel: true,
  },
  { what: "a path on a TCP probe", spec: { probe: { type: "TCP" } }, field: "spec.probe.path", cel: true },
  {
    what: "gRPC settings on an HTTP probe",
    spec: { probe: { grpc: { service: "shop.Cart" } } },
    field: "spec.probe.grpc",
    cel: true,
  },
  {
    what: "a latency threshold not below the timeout",
    spec: { probe: { periodSeconds: 10, timeoutSeconds: 1, match: { maxLatencyMilliseconds: 1000 } } },
    field: "spec.probe.match.maxLatencyMilliseconds",
    cel: true,
  },
];
