// Reads the API test server's own objects (in-process, no operator involved) into the plain
// World the invariants judge, and records every eviction or pod delete an operator replica
// sends, with the objects as they were just before the API served it.
import type { RequestLogEntry, StoreReader } from "../../hack/apiserver/index.js";
import {
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_OPERATOR,
} from "../../operator/src/domain/endpoint-slice-types.js";
import type { EvictionRecord, HealthState, OwnerKind, PodView, PolicyView, World } from "./snapshot.js";

type Obj = Record<string, any>;

const PODS = { group: "", version: "v1", resource: "pods" };
const SERVICES = { group: "", version: "v1", resource: "services" };
const SLICES = { group: "discovery.k8s.io", version: "v1", resource: "endpointslices" };
const POLICIES = { group: "healthprobe.io", version: "v1alpha1", resource: "healthprobepolicies" };

const ms = (t: unknown): number => (typeof t === "string" ? Date.parse(t) : 0);

function ownerOf(pod: Obj): OwnerKind {
  const ctrl = (pod.metadata?.ownerReferences ?? []).find((r: Obj) => r.controller === true);
  if (!ctrl) return "bare";
  return ctrl.kind === "Node" ? "mirror" : "controller";
}

function gateOf(pod: Obj): { gate?: { status: string; reason: string } } {
  const c = (pod.status?.conditions ?? []).find((x: Obj) => x.type === "healthprobe.io/ready");
  return c ? { gate: { status: c.status, reason: c.reason ?? "" } } : {};
}

function podView(pod: Obj): PodView {
  return {
    name: pod.metadata.name,
    uid: pod.metadata.uid,
    created: ms(pod.metadata.creationTimestamp),
    ip: pod.status?.podIP || undefined,
    labels: { ...(pod.metadata.labels ?? {}) },
    ready: (pod.status?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True"),
    containersReady: (pod.status?.conditions ?? []).some(
      (c: Obj) => c.type === "ContainersReady" && c.status === "True",
    ),
    ...gateOf(pod),
    terminating: Boolean(pod.metadata.deletionTimestamp),
    owner: ownerOf(pod),
  };
}

function policyView(p: Obj): PolicyView {
  const conditions: PolicyView["status"]["conditions"] = {};
  for (const c of p.status?.conditions ?? []) {
    conditions[c.type] = {
      status: c.status,
      reason: c.reason ?? "",
      observedGeneration: c.observedGeneration,
      since: ms(c.lastTransitionTime),
    };
  }
  const pods: Record<string, HealthState> = {};
  const routedOut: Record<string, boolean> = {};
  const quarantinedOut: string[] = [];
  for (const e of p.status?.pods ?? []) {
    pods[e.name] = e.state;
    routedOut[e.name] = e.drained === true || String(e.reason ?? "").startsWith("not admitted");
    if (e.quarantinedUntil !== undefined && e.drained === true) quarantinedOut.push(e.name);
  }
  const r = p.spec?.replacement ?? {};
  return {
    name: p.metadata.name,
    uid: p.metadata.uid,
    generation: p.metadata.generation ?? 1,
    serviceName: p.spec?.serviceName ?? "",
    selector: { ...(p.spec?.selector?.matchLabels ?? {}) },
    dryRun: p.spec?.dryRun === true,
    method: p.spec?.drain?.method ?? "EndpointSlice",
    created: ms(p.metadata.creationTimestamp),
    maxUnhealthyPercent: p.spec?.drain?.maxUnhealthyPercent ?? 50,
    whenAllUnhealthy: p.spec?.drain?.whenAllUnhealthy === "FailClosed" ? "FailClosed" : "FailOpen",
    replacement: {
      enabled: r.enabled !== false,
      maxPerHour: r.maxPerHour ?? 1,
      maxPerDay: r.maxPerDay ?? 3,
      pauseAboveUnhealthyPercent: r.pauseAboveUnhealthyPercent ?? 50,
    },
    status: {
      observedGeneration: p.status?.observedGeneration,
      conditions,
      pods,
      routedOut,
      targets: p.status?.targets,
      drained: p.status?.drained,
      quarantinedOut,
    },
  };
}

export function readWorld(store: StoreReader, namespace: string, at: number): World {
  const slices = store
    .list(SLICES, namespace)
    .filter((s: Obj) => s.metadata?.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_OPERATOR)
    .map((s: Obj) => ({
      name: s.metadata.name,
      service: s.metadata.labels?.[LABEL_SERVICE_NAME] ?? "",
      endpoints: (s.endpoints ?? []).map((e: Obj) => ({
        pod: e.targetRef?.name ?? e.addresses?.[0] ?? "",
        ready: e.conditions?.ready === true,
      })),
    }));
  return {
    at,
    pods: store.list(PODS, namespace).map(podView),
    services: store
      .list(SERVICES, namespace)
      .map((s: Obj) => ({ name: s.metadata.name, hasSelector: Object.keys(s.spec?.selector ?? {}).length > 0 })),
    slices,
    policies: store.list(POLICIES, namespace).map(policyView),
  };
}

/**
 * Wraps the server's request log: each operator eviction or pod delete is recorded with the
 * objects as they were before it (read at the previous request, since the API serves one
 * request's mutation and its log entry in one synchronous run).
 */
export function recordEvictions(
  log: RequestLogEntry[],
  store: StoreReader,
  namespace: string,
  isOperator: (user: string) => boolean,
): EvictionRecord[] {
  const records: EvictionRecord[] = [];
  let before = readWorld(store, namespace, Date.now());
  let signature = worldSignature(before);
  let stableSince = before.at;
  const push = log.push.bind(log);
  log.push = (...entries: RequestLogEntry[]): number => {
    for (const e of entries) {
      const evict = e.resource === "pods" && e.subresource === "eviction" && e.verb === "create";
      const del = e.resource === "pods" && e.subresource === "" && e.verb === "delete";
      if ((evict || del) && isOperator(e.user) && e.namespace === namespace) {
        // In-process changes (the kubelet stand-in, the ReplicaSet controller) since the last logged
        // write are caught here, the evicted pod aside (the request has already been served).
        const unseen =
          worldSignature(readWorld(store, namespace, Date.now()), e.name) !== worldSignature(before, e.name);
        records.push({
          at: Date.parse(e.time),
          user: e.user,
          namespace: e.namespace,
          pod: e.name,
          code: e.code,
          verb: evict ? "evict" : "delete",
          before,
          stableSince: unseen ? Date.parse(e.time) : stableSince,
        });
      }
    }
    const n = push(...entries);
    if (entries.some((e) => e.verb !== "get" && e.verb !== "list" && e.verb !== "watch")) {
      before = readWorld(store, namespace, Date.now());
      const next = worldSignature(before);
      if (next !== signature) [signature, stableSince] = [next, before.at];
    }
    return n;
  };
  return records;
}

/** What changes a policy's targets or its reading of them: pods and policy generations (not status, slices or Events). */
function worldSignature(w: World, except?: string): string {
  const pods = w.pods
    .filter((p) => p.name !== except)
    .map((p) => `${p.name}/${p.uid}/${p.ip ?? ""}/${p.terminating}/${JSON.stringify(p.labels)}`)
    .sort();
  const policies = w.policies.map((p) => `${p.name}/${p.uid}/${p.generation}`).sort();
  return JSON.stringify([pods, policies]);
}
