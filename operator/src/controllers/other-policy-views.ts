// What the other policies that select a pod say of it, for the replacement core's vetoes: their
// verdict, whether they probe it, and their outage (now, or as their status last reported it).
import { matchesLabelSelector } from "../domain/label-selector.js";
import { OUTAGES, currentOutage, reportedOutage, standingOutage, type Outage } from "../domain/outage.js";
import type { Condition } from "../domain/types.js";
import type { OtherPolicyView } from "../domain/replacement.js";
import type { HealthStore } from "../runtime/health-store.js";
import { hasReadinessGate, isKubeletReady, isReadyBesidesGate, uidOf, type PodObject } from "./kube-objects.js";
import type { ParsedPolicy } from "./parsed-policy.js";
import type { ReplacerOptions } from "./replacer.js";

type ViewDeps = Pick<ReplacerOptions, "isProbing" | "versions" | "targetsOf"> & { health: Pick<HealthStore, "get"> };

/** Each other policy selecting the pod, as it sees it; `outages` memoises their current outages for one run. */
export function otherViewsOf(
  d: ViewDeps,
  others: readonly ParsedPolicy[],
  pod: PodObject,
  outages: Map<string, Outage | undefined>,
): OtherPolicyView[] {
  const uid = uidOf(pod);
  return others
    .filter((o) => matchesLabelSelector(o.spec.selector, pod.metadata?.labels))
    .map((o) => {
      const view = d.health.get(o.key, uid);
      const probing = d.isProbing(o.key, uid);
      const v: OtherPolicyView = {
        policy: o.key,
        probing,
        replacementEnabled: o.spec.replacement.enabled && !o.spec.dryRun,
        state: view?.state ?? "Unknown",
        afterMs: o.afterMs,
      };
      if (view?.unhealthySince !== undefined) v.unhealthySince = view.unhealthySince;
      const conditions = d.versions.read(o.obj).status?.conditions;
      const outage = standingOutage(
        probing ? currentOutageOf(d, o, outages) : undefined,
        reportedOutage(conditions) ?? unreportedOutage(o, conditions),
      );
      if (outage !== undefined) v.outage = outage;
      return v;
    });
}

/**
 * A policy whose status reports neither FailOpen nor FailClosed has not written its first status
 * yet (every status write reports one of them), and a new policy's first one says FailOpen=True
 * (NoTargetProbedYet): until its status says otherwise, its outage is presumed, so no eviction
 * meets the status it is about to write.
 */
function unreportedOutage(policy: ParsedPolicy, conditions: readonly Condition[] | undefined): Outage | undefined {
  const reported = conditions?.some((c) => (OUTAGES as readonly string[]).includes(c.type));
  return reported ? undefined : policy.spec.drain.whenAllUnhealthy;
}

/**
 * A policy's outage now, as its own drain plan computes it (currentOutage), from what every
 * reconcile shares: its targets in the cache, judged by the health store (a pod it does not
 * probe counts as Unknown), never from what that policy's last run left behind, so the answer
 * does not depend on which policy reconciled first. Once per policy and run.
 */
export function currentOutageOf(
  d: ViewDeps,
  policy: ParsedPolicy,
  outages: Map<string, Outage | undefined>,
): Outage | undefined {
  if (outages.has(policy.key)) return outages.get(policy.key);
  const gated = policy.spec.drain.method === "ReadinessGate";
  const targets = d.targetsOf(policy).map((p) => {
    const uid = uidOf(p);
    const state = d.isProbing(policy.key, uid) ? (d.health.get(policy.key, uid)?.state ?? "Unknown") : "Unknown";
    // As planGateDrain counts a gated pod: Ready but for the operator's own condition.
    return { kubeletReady: gated && hasReadinessGate(p) ? isReadyBesidesGate(p) : isKubeletReady(p), state };
  });
  const outage = currentOutage(targets, policy.spec.drain.whenAllUnhealthy);
  outages.set(policy.key, outage);
  return outage;
}
