// Rollout awareness from the caches: the policy's targets with their controller ReplicaSet and
// the policy's verdicts, and the namespace's ReplicaSets with their Deployment and revision,
// handed to the pure core (domain/rollout.ts), which says which ReplicaSet is suspect and why.
import {
  findRolloutSuspects,
  parseRevision,
  REVISION_ANNOTATION,
  TEMPLATE_HASH_LABEL,
  type RolloutPod,
  type RolloutReplicaSet,
  type RolloutSuspect,
} from "../domain/rollout.js";
import type { HealthStore } from "../runtime/health-store.js";
import {
  nameOf,
  timeOf,
  uidOf,
  type KubeObject,
  type ObjectCache,
  type PodObject,
  type ReplicaSetObject,
} from "./kube-objects.js";

export interface RolloutsOptions {
  replicaSets: ObjectCache<ReplicaSetObject>;
  health: Pick<HealthStore, "get">;
}

/** The object's controller ownerReference when it is of `kind`. */
function controllerOf(obj: KubeObject, kind: string): { name: string; uid?: string } | undefined {
  const ref = (obj.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
  if (ref?.kind !== kind || ref.name === undefined) return undefined;
  return ref.uid !== undefined ? { name: ref.name, uid: ref.uid } : { name: ref.name };
}

export class Rollouts {
  constructor(private readonly o: RolloutsOptions) {}

  /** The suspect rollouts among the policy's targets, as the policy sees them. */
  suspects(policyKey: string, namespace: string, targets: readonly PodObject[]): RolloutSuspect[] {
    const pods = targets.map((pod) => this.podOf(policyKey, pod));
    // Nothing to look up unless some pod of a ReplicaSet is Unhealthy.
    if (!pods.some((p) => p.replicaSet !== undefined && p.state === "Unhealthy")) return [];
    return findRolloutSuspects(pods, this.o.replicaSets.list(namespace).map(replicaSetOf));
  }

  private podOf(policyKey: string, pod: PodObject): RolloutPod {
    const uid = uidOf(pod);
    const out: RolloutPod = { uid, name: nameOf(pod), state: this.o.health.get(policyKey, uid)?.state ?? "Unknown" };
    const rs = controllerOf(pod, "ReplicaSet");
    if (rs) out.replicaSet = rs;
    const hash = pod.metadata?.labels?.[TEMPLATE_HASH_LABEL];
    if (hash !== undefined) out.templateHash = hash;
    return out;
  }
}

function replicaSetOf(rs: ReplicaSetObject): RolloutReplicaSet {
  const out: RolloutReplicaSet = { name: nameOf(rs), uid: uidOf(rs) };
  const deployment = controllerOf(rs, "Deployment");
  if (deployment) out.deployment = deployment;
  const revision = parseRevision(rs.metadata?.annotations?.[REVISION_ANNOTATION]);
  if (revision !== undefined) out.revision = revision;
  const createdAt = timeOf(rs.metadata?.creationTimestamp);
  if (createdAt !== undefined) out.createdAt = createdAt;
  return out;
}
