// One read of everything the demo shows and the tour checks: the policy, the pods, the
// Service's EndpointSlices and the Events from the API, and the operator's live per-target
// figures from its /debug/targets. Kept raw (plain objects) so the view and the tour stay pure.
import type { KubernetesObjectApi } from "@kubernetes/client-node";
import type { DebugTarget } from "../../operator/src/runtime/health-store.js";
import type { Obj } from "../../test/support/kube-objects.js";

export interface Snapshot {
  /** When it was read (epoch ms). */
  at: number;
  namespace: string;
  policy: Obj | undefined;
  pods: Obj[];
  slices: Obj[];
  events: Obj[];
  /** The operator's live figures, or undefined when /debug/targets did not answer. */
  targets: DebugTarget[] | undefined;
  /** Pods whose demo server answers 503 (the demo switched them). */
  broken: ReadonlySet<string>;
}

export interface SnapshotSource {
  api: KubernetesObjectApi;
  namespace: string;
  policyName: string;
  serviceName: string;
  healthPort: number;
  broken(): ReadonlySet<string>;
}

export async function readSnapshot(src: SnapshotSource, now: () => number = Date.now): Promise<Snapshot> {
  const ns = src.namespace;
  const list = async (apiVersion: string, kind: string, labelSelector?: string) =>
    ((await src.api.list(apiVersion, kind, ns, undefined, undefined, undefined, undefined, labelSelector)).items ??
      []) as Obj[];
  const [policy, pods, slices, events, targets] = await Promise.all([
    src.api
      .read({
        apiVersion: "healthprobe.io/v1alpha1",
        kind: "HealthProbePolicy",
        metadata: { name: src.policyName, namespace: ns },
      })
      .then(
        (o) => o as Obj,
        (err: { code?: number }) => {
          if (err.code === 404) return undefined;
          throw err;
        },
      ),
    list("v1", "Pod"),
    list("discovery.k8s.io/v1", "EndpointSlice", `kubernetes.io/service-name=${src.serviceName}`),
    list("events.k8s.io/v1", "Event"),
    readTargets(src.healthPort),
  ]);
  const policyKey = `${ns}/${src.policyName}`;
  return {
    at: now(),
    namespace: ns,
    policy,
    pods,
    slices,
    events,
    targets: targets?.filter((t) => t.policy === policyKey),
    broken: new Set(src.broken()),
  };
}

async function readTargets(port: number): Promise<DebugTarget[] | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/debug/targets`, { signal: AbortSignal.timeout(2000) });
    if (res.status !== 200) return undefined;
    return ((await res.json()) as { targets: DebugTarget[] }).targets;
  } catch {
    return undefined;
  }
}
