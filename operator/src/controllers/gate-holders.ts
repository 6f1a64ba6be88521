// Which ReadinessGate policy holds a pod's condition healthprobe.io/ready: the oldest live, valid
// policy with drain method ReadinessGate, not in dryRun, that selects it (ties by name). Two such
// policies selecting one pod would otherwise write the one condition in turn; the younger one
// still probes and reports, and writes only the pods no older policy holds. A policy that reports
// it cannot probe (Ready=False, SecretNotFound, SecretNotPermitted or SecretForbidden) holds nothing: its verdicts would be frozen, so
// the pods it kept out are let go (True, NoPolicy) until it probes again.
import { matchesLabelSelector } from "../domain/label-selector.js";
import { timeOf, type ObjectCache, type PodObject, type PolicyObject } from "./kube-objects.js";
import { parsePolicy, type ParsedPolicy } from "./parsed-policy.js";

/** The namespace's holding policies, oldest first. */
export function gateHolders(policies: ObjectCache<PolicyObject>, namespace: string): ParsedPolicy[] {
  const out: ParsedPolicy[] = [];
  for (const obj of policies.list(namespace)) {
    const holder = asHolder(obj);
    if (holder) out.push(holder);
  }
  return out.sort(olderFirst);
}

/** The policy when it can hold pods' conditions now. */
function asHolder(obj: PolicyObject): ParsedPolicy | undefined {
  if (obj.metadata?.deletionTimestamp) return undefined;
  const parsed = parsePolicy(obj);
  if (
    !parsed.ok ||
    parsed.policy.spec.drain.method !== "ReadinessGate" ||
    parsed.policy.spec.dryRun ||
    cannotProbe(obj)
  )
    return undefined;
  return parsed.policy;
}

/**
 * What decides which pods the policy holds (undefined: none). When it changes, the namespace's
 * other ReadinessGate policies may take pods over (or give them up) and must write them.
 */
export function holdingOf(obj: PolicyObject): string | undefined {
  const holder = asHolder(obj);
  return holder && JSON.stringify([holder.spec.selector, holder.obj.metadata.creationTimestamp ?? ""]);
}

/** Whether the policy drains by the readiness gate (holding or not). */
export function isGatePolicy(obj: PolicyObject): boolean {
  const parsed = parsePolicy(obj);
  return parsed.ok && parsed.policy.spec.drain.method === "ReadinessGate";
}

function cannotProbe(obj: PolicyObject): boolean {
  const ready = ((obj.status?.conditions ?? []) as Array<{ type?: string; status?: string; reason?: string }>).find(
    (c) => c.type === "Ready",
  );
  return (
    ready?.status === "False" &&
    (ready.reason === "SecretNotFound" || ready.reason === "SecretNotPermitted" || ready.reason === "SecretForbidden")
  );
}

/** The key of the policy that holds the pod, if any. */
export function holderOf(holders: readonly ParsedPolicy[], pod: PodObject): string | undefined {
  return holders.find((h) => matchesLabelSelector(h.spec.selector, pod.metadata?.labels))?.key;
}

function olderFirst(a: ParsedPolicy, b: ParsedPolicy): number {
  const ta = timeOf(a.obj.metadata.creationTimestamp) ?? 0;
  const tb = timeOf(b.obj.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return a.obj.metadata.name < b.obj.metadata.name ? -1 : a.obj.metadata.name > b.obj.metadata.name ? 1 : 0;
}
