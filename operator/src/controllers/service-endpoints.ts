// A Service's endpoints as Kubernetes' own EndpointSlice controller writes them: what a
// ReadinessGate policy with a serviceName reports, since its verdicts reach clients through them.
import type { ServiceEndpoints } from "../domain/status.js";
import type { KubeObject, ObjectCache } from "./kube-objects.js";

export const BUILT_IN_MANAGED_BY = "endpointslice-controller.k8s.io";
const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";

/** What the cache keeps of a built-in slice: its identity, labels, and each endpoint's pod and readiness. */
export interface BuiltInSlice extends KubeObject {
  endpoints?: Array<{
    addresses?: string[];
    conditions?: { ready?: boolean };
    targetRef?: { uid?: string; name?: string };
  }>;
}

/** The cache transform for built-in slices. */
export function slimBuiltInSlice(slice: BuiltInSlice): BuiltInSlice {
  const m = slice.metadata ?? {};
  const metadata: NonNullable<KubeObject["metadata"]> = {};
  if (m.name !== undefined) metadata.name = m.name;
  if (m.namespace !== undefined) metadata.namespace = m.namespace;
  if (m.resourceVersion !== undefined) metadata.resourceVersion = m.resourceVersion;
  if (m.labels !== undefined) metadata.labels = m.labels;
  const endpoints = (slice.endpoints ?? []).map((e) => {
    const out: NonNullable<BuiltInSlice["endpoints"]>[number] = { conditions: { ready: e.conditions?.ready === true } };
    if (e.addresses !== undefined) out.addresses = [...e.addresses];
    if (e.targetRef?.uid !== undefined || e.targetRef?.name !== undefined)
      out.targetRef = {
        ...(e.targetRef.uid !== undefined ? { uid: e.targetRef.uid } : {}),
        ...(e.targetRef.name !== undefined ? { name: e.targetRef.name } : {}),
      };
    return out;
  });
  return { metadata, endpoints };
}

/**
 * The Service's endpoints in the built-in controller's slices, one per pod (a dual-stack pod is
 * listed once per address family): ready when any of its listings is.
 */
export function serviceEndpointsOf(
  slices: ObjectCache<KubeObject>,
  namespace: string,
  service: string,
): ServiceEndpoints {
  const ready = new Map<string, boolean>();
  for (const s of slices.list(namespace) as BuiltInSlice[]) {
    const labels = s.metadata?.labels ?? {};
    if (labels[SERVICE_NAME_LABEL] !== service || labels[MANAGED_BY_LABEL] !== BUILT_IN_MANAGED_BY) continue;
    for (const e of s.endpoints ?? []) {
      const id = e.targetRef?.uid ?? e.addresses?.[0] ?? "";
      ready.set(id, (ready.get(id) ?? false) || e.conditions?.ready === true);
    }
  }
  return { name: service, ready: [...ready.values()].filter(Boolean).length, total: ready.size };
}
