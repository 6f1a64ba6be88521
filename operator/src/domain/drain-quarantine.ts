// The quarantine step of the drain plan: flapping pods that are not Unhealthy right now are held
// out of rotation with the cap slots the Unhealthy pods left. Called by planDrain only.
import { compareStrings, DRY_RUN_KEPT, routedState, type DrainPlan, type DrainTarget } from "./drain.js";

/**
 * Holds the quarantined, kubelet-Ready, Healthy (or Unknown and serving) targets out of rotation,
 * after the Unhealthy ones took `used` cap slots: the one already out of rotation first, then by
 * name and uid. A pod is kept in rotation, with the reason, when the cap is full or when no
 * kubelet-Ready Healthy target without quarantine is left to serve. Updates the plan's decisions,
 * `quarantined` and `quarantineKept`.
 */
export function holdQuarantined(targets: readonly DrainTarget[], plan: DrainPlan, used: number): void {
  const candidates = targets.filter(isHoldable).sort(alreadyOutFirst);
  if (candidates.length === 0) return;
  const { allowed, maxUnhealthyPercent: pct } = plan;
  const anotherServes = targets.some(
    (t) => t.kubeletReady && routedState(t) === "Healthy" && t.quarantine === undefined,
  );
  let rank = used;
  for (const t of candidates) {
    const q = t.quarantine!.reason;
    let verdict: string;
    let hold = false;
    if (!anotherServes) verdict = `kept: ${q}, but no other Healthy target is in rotation`;
    else if (rank >= allowed)
      verdict =
        allowed === 0
          ? `kept: ${q}, but maxUnhealthyPercent=${pct} of ${plan.targets} targets allows none drained`
          : `kept: ${q}, but over the cap: ${allowed} of ${allowed} allowed by maxUnhealthyPercent=${pct} already drained`;
    else {
      rank++;
      hold = true;
      verdict = `${q} (${rank} of ${allowed} allowed by maxUnhealthyPercent=${pct})`;
    }
    (hold ? plan.quarantined : plan.quarantineKept).push(t.uid);
    if (!hold) plan.decisions.set(t.uid, { admitted: true, drained: false, reason: verdict });
    else if (plan.mode === "active") plan.decisions.set(t.uid, { admitted: false, drained: true, reason: verdict });
    else plan.decisions.set(t.uid, { admitted: true, drained: false, reason: `${DRY_RUN_KEPT}${verdict})` });
  }
}

/** A pod that is in rotation now or would be: quarantine is what would take it out. */
function isHoldable(t: DrainTarget): boolean {
  if (t.quarantine === undefined || !t.kubeletReady) return false;
  const state = routedState(t);
  return state === "Healthy" || (state === "Unknown" && t.serving && t.notProbed === undefined);
}

function alreadyOutFirst(a: DrainTarget, b: DrainTarget): number {
  const out = Number(b.outOfRotation === true) - Number(a.outOfRotation === true);
  return out || compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid);
}
