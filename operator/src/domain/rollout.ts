// Rollout awareness: a bad release fails on every new pod, and replacing those pods only
// recreates the failure. Over plain data (the policy's targets with their controller
// ReplicaSet and state, and the ReplicaSets with their Deployment and revision) this finds
// the ReplicaSets whose Unhealthy pods must not be replaced, and says why.
//
// A ReplicaSet N is suspect when all of these hold:
//   1. N is controlled by a Deployment D and is D's newest ReplicaSet: the highest
//      `deployment.kubernetes.io/revision` when every ReplicaSet of D has one, else the latest
//      creationTimestamp; ties by name (the greater). Every ReplicaSet of D counts, with or
//      without targets, so a pod of a superseded ReplicaSet is never suspect;
//   2. at least one of the policy's targets in N is Unhealthy and none is Healthy (one Healthy
//      new pod shows the template can work: the others are judged one by one);
//   3. at least one target in an older ReplicaSet of D is Healthy, with a different
//      `pod-template-hash` (when both are known): the old template works, the new one does not.
// Unknown pods count for neither side. Only N's Unhealthy pods are held; older pods are not.
import type { ReplacementHealthState } from "./replacement.js";

export const REVISION_ANNOTATION = "deployment.kubernetes.io/revision";
export const TEMPLATE_HASH_LABEL = "pod-template-hash";

export interface RolloutPod {
  uid: string;
  name: string;
  state: ReplacementHealthState;
  /** The pod's controller ownerReference, when it is a ReplicaSet. */
  replicaSet?: { name: string; uid?: string };
  /** The pod's pod-template-hash label. */
  templateHash?: string;
}

export interface RolloutReplicaSet {
  name: string;
  uid: string;
  /** The ReplicaSet's controller ownerReference, when it is a Deployment. */
  deployment?: { name: string; uid?: string };
  /** The deployment.kubernetes.io/revision annotation, when it is a whole number. */
  revision?: number;
  createdAt?: number;
}

export interface RolloutSuspect {
  deployment: { name: string; uid?: string };
  replicaSet: string;
  revision?: number;
  /** N's Unhealthy targets: not replaced. */
  pods: Array<{ uid: string; name: string }>;
  /** Older ReplicaSets of the Deployment with Healthy targets, by name. */
  older: Array<{ replicaSet: string; healthy: number }>;
}

/** Parses the revision annotation: a whole number, else undefined. */
export function parseRevision(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

function compareAge(a: RolloutReplicaSet, b: RolloutReplicaSet, byRevision: boolean): number {
  if (byRevision && a.revision !== b.revision) return a.revision! - b.revision!;
  const ca = a.createdAt ?? Number.NEGATIVE_INFINITY;
  const cb = b.createdAt ?? Number.NEGATIVE_INFINITY;
  if (!byRevision && ca !== cb) return ca < cb ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** D's newest ReplicaSet among `sets` (all of D's). */
export function newestReplicaSet(sets: readonly RolloutReplicaSet[]): RolloutReplicaSet | undefined {
  const byRevision = sets.every((s) => s.revision !== undefined);
  return [...sets].sort((a, b) => compareAge(a, b, byRevision)).at(-1);
}

const deploymentKey = (d: { name: string; uid?: string }) => d.uid ?? `name:${d.name}`;

/** The suspect ReplicaSets among the policy's targets, by Deployment name then ReplicaSet name. */
export function findRolloutSuspects(
  pods: readonly RolloutPod[],
  replicaSets: readonly RolloutReplicaSet[],
): RolloutSuspect[] {
  const byUid = new Map(replicaSets.map((rs) => [rs.uid, rs]));
  const byName = new Map(replicaSets.map((rs) => [rs.name, rs]));
  const podsOf = new Map<string, RolloutPod[]>();
  for (const pod of pods) {
    if (!pod.replicaSet) continue;
    const rs = pod.replicaSet.uid !== undefined ? byUid.get(pod.replicaSet.uid) : byName.get(pod.replicaSet.name);
    if (!rs?.deployment) continue;
    podsOf.set(rs.uid, [...(podsOf.get(rs.uid) ?? []), pod]);
  }
  const deployments = new Map<string, RolloutReplicaSet[]>();
  for (const rs of replicaSets) {
    if (rs.deployment)
      deployments.set(deploymentKey(rs.deployment), [...(deployments.get(deploymentKey(rs.deployment)) ?? []), rs]);
  }
  const suspects: RolloutSuspect[] = [];
  for (const sets of deployments.values()) {
    const suspect = suspectOf(sets, podsOf);
    if (suspect) suspects.push(suspect);
  }
  return suspects.sort((a, b) =>
    a.deployment.name < b.deployment.name ? -1 : a.deployment.name > b.deployment.name ? 1 : 0,
  );
}

function suspectOf(
  sets: readonly RolloutReplicaSet[],
  podsOf: ReadonlyMap<string, RolloutPod[]>,
): RolloutSuspect | undefined {
  const newest = newestReplicaSet(sets);
  if (!newest) return undefined;
  const fresh = podsOf.get(newest.uid) ?? [];
  const unhealthy = fresh.filter((p) => p.state === "Unhealthy");
  if (unhealthy.length === 0 || fresh.some((p) => p.state === "Healthy")) return undefined;
  const newHashes = new Set(fresh.map((p) => p.templateHash).filter((h) => h !== undefined));
  const older: RolloutSuspect["older"] = [];
  for (const rs of sets) {
    if (rs.uid === newest.uid) continue;
    // The same template under another ReplicaSet is no evidence against the new one.
    const healthy = (podsOf.get(rs.uid) ?? []).filter(
      (p) => p.state === "Healthy" && (p.templateHash === undefined || !newHashes.has(p.templateHash)),
    );
    if (healthy.length > 0) older.push({ replicaSet: rs.name, healthy: healthy.length });
  }
  if (older.length === 0) return undefined;
  older.sort((a, b) => (a.replicaSet < b.replicaSet ? -1 : 1));
  const suspect: RolloutSuspect = {
    deployment: newest.deployment!,
    replicaSet: newest.name,
    pods: unhealthy
      .map((p) => ({ uid: p.uid, name: p.name }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    older,
  };
  if (newest.revision !== undefined) suspect.revision = newest.revision;
  return suspect;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "ReplicaSet web-5c8d (revision 2) of Deployment web": how every text names a suspect. */
export function suspectName(s: RolloutSuspect): string {
  return `ReplicaSet ${s.replicaSet}${s.revision !== undefined ? ` (revision ${s.revision})` : ""} of Deployment ${s.deployment.name}`;
}

function olderClause(s: RolloutSuspect): string {
  return s.older
    .map(
      (o) =>
        `${plural(o.healthy, "pod", "pods")} of older ReplicaSet ${o.replicaSet} ${o.healthy === 1 ? "is" : "are"} Healthy`,
    )
    .join(", ");
}

/** Why one of the suspect's pods is not replaced (the replacement chain's Rollout step). */
export function rolloutBlockReason(s: RolloutSuspect): string {
  return `suspect rollout: ${suspectName(s)} is the newest and none of its pods is Healthy while ${olderClause(s)}: replacing would only recreate the failure`;
}

/** The RolloutSuspect condition's message: each suspect once. */
export function rolloutConditionMessage(suspects: readonly RolloutSuspect[]): string {
  return suspects
    .map(
      (s) =>
        `${suspectName(s)}: ${plural(s.pods.length, "pod", "pods")} Unhealthy, none Healthy, while ${olderClause(s)}; its Unhealthy pods are not replaced`,
    )
    .join("; ");
}

/** The note of the RolloutSuspect Warning, on the Deployment and on the policy. */
export function rolloutEventNote(s: RolloutSuspect, policy: string): string {
  return `${suspectName(s)} looks like a failing rollout: policy ${policy} sees ${s.pods.length} of its pods Unhealthy and none Healthy while ${olderClause(s)}; its pods are not replaced`;
}

/**
 * The suspects to announce: those not named in the RolloutSuspect condition as last written
 * (level-based: the same suspects after a restart announce nothing).
 */
export function newSuspects(
  previousMessage: string | undefined,
  suspects: readonly RolloutSuspect[],
): RolloutSuspect[] {
  return suspects.filter((s) => previousMessage === undefined || !previousMessage.includes(`${suspectName(s)}:`));
}
