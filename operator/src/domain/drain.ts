import type { DrainMode, EpochMs, HealthStateName } from "./types.js";

/** Reasons of dryRun pods start with this; the events planner reads "would be drained" from it. */
export const DRY_RUN_KEPT = "kept: dryRun (would be ";

export interface DrainTarget {
  uid: string;
  name: string;
  state: HealthStateName;
  unhealthySince?: EpochMs;
  /** Kubelet's Ready condition; the slice planner ANDs it with `admitted`. */
  kubeletReady: boolean;
  /**
   * The pod's endpoint is not ready in the Service's slices as they stand. Among pods
   * Unhealthy since the same second, the one already out stays out: no swap, no churn.
   */
  outOfRotation?: boolean;
}

export interface DrainInput {
  /** Selected pods that are Running, have a pod IP and are not terminating. */
  targets: readonly DrainTarget[];
  maxUnhealthyPercent: number;
  drainEnabled: boolean;
  dryRun: boolean;
}

export interface DrainDecision {
  /** The policy lets the endpoint be ready (kubelet readiness still applies). */
  admitted: boolean;
  /** An Unhealthy pod taken out of rotation by this policy. */
  drained: boolean;
  reason: string;
}

export interface DrainPlan {
  decisions: Map<string, DrainDecision>;
  /** floor(targets * maxUnhealthyPercent / 100). */
  allowed: number;
  drainedCount: number;
  /** Unhealthy pods kept in rotation by the cap (also computed in dryRun: what would happen). */
  capped: string[];
  /** Unhealthy pods that would be drained if drain were active (equals the drained ones when it is). */
  wouldDrain: string[];
  failOpen: boolean;
  mode: DrainMode;
  maxUnhealthyPercent: number;
  targets: number;
}

/**
 * Chooses which targets the policy admits to rotation.
 *
 * - Healthy: admitted. Unknown: not admitted until its first success. Unhealthy: drained.
 * - Cap: at most floor(targets * maxUnhealthyPercent / 100) Unhealthy pods are drained,
 *   longest-unhealthy first (ties: the one already out of rotation, then by name, then uid;
 *   status keeps whole seconds, so ties are common and a newcomer must not swap places with a
 *   pod drained a moment ago). Unknown pods count in `targets`
 *   (they are targets) but never as Unhealthy. An Unhealthy pod without unhealthySince
 *   ranks as the most recent, so pods known to be unhealthy longer go first.
 * - Fail open: when at least one target exists and none is Healthy, every target is
 *   admitted. Zero targets is not fail-open: there is nothing to keep in rotation.
 * - dryRun / drain disabled: every target is admitted; reasons say what would have
 *   happened. In dryRun the cap is still evaluated (reported in `capped`); with drain
 *   disabled it is not.
 */
export function planDrain(input: DrainInput): DrainPlan {
  const mode: DrainMode = input.dryRun ? "dryRun" : input.drainEnabled ? "active" : "disabled";
  const pct = input.maxUnhealthyPercent;
  const total = input.targets.length;
  const allowed = Math.floor((total * pct) / 100);
  const failOpen = total > 0 && !input.targets.some((t) => t.state === "Healthy");
  const unhealthy = input.targets.filter((t) => t.state === "Unhealthy").sort(longestUnhealthyFirst);

  const decisions = new Map<string, DrainDecision>();
  const capped: string[] = [];
  const wouldDrain: string[] = [];
  unhealthy.forEach((t, i) => {
    if (failOpen) {
      decisions.set(t.uid, { admitted: true, drained: false, reason: "kept: fail open, no healthy target" });
      return;
    }
    if (mode === "disabled") {
      decisions.set(t.uid, { admitted: true, drained: false, reason: "kept: drain disabled (unhealthy)" });
      return;
    }
    const overCap = i >= allowed;
    const verdict = !overCap
      ? `drained: longest unhealthy, ${i + 1} of ${allowed} allowed by maxUnhealthyPercent=${pct}`
      : allowed === 0
        ? `kept: over the cap, maxUnhealthyPercent=${pct} of ${total} targets allows none drained`
        : `kept: over the cap, ${allowed} of ${allowed} allowed by maxUnhealthyPercent=${pct} already drained`;
    if (overCap) capped.push(t.uid);
    else wouldDrain.push(t.uid);
    if (mode === "dryRun") {
      decisions.set(t.uid, { admitted: true, drained: false, reason: `${DRY_RUN_KEPT}${verdict})` });
    } else {
      decisions.set(t.uid, { admitted: overCap, drained: !overCap, reason: verdict });
    }
  });

  for (const t of input.targets) {
    if (t.state === "Unhealthy") continue;
    decisions.set(t.uid, admitNonUnhealthy(t, failOpen, mode));
  }

  // Same contents whatever the input order; iteration order too.
  const sorted = new Map([...decisions].sort(([a], [b]) => compareStrings(a, b)));
  return {
    decisions: sorted,
    allowed,
    drainedCount: mode === "active" ? wouldDrain.length : 0,
    capped: [...capped].sort(),
    wouldDrain: [...wouldDrain].sort(),
    failOpen,
    mode,
    maxUnhealthyPercent: pct,
    targets: total,
  };
}

function admitNonUnhealthy(t: DrainTarget, failOpen: boolean, mode: DrainMode): DrainDecision {
  const kubelet = t.kubeletReady ? "" : " (kubelet: not ready)";
  if (t.state === "Healthy") return { admitted: true, drained: false, reason: `admitted: healthy${kubelet}` };
  const waiting = "unknown, waiting for first success";
  if (failOpen) return { admitted: true, drained: false, reason: `admitted: fail open, no healthy target (${waiting})${kubelet}` };
  if (mode === "dryRun") return { admitted: true, drained: false, reason: `admitted: dryRun (would not be admitted: ${waiting})${kubelet}` };
  if (mode === "disabled") return { admitted: true, drained: false, reason: `admitted: drain disabled (${waiting})${kubelet}` };
  return { admitted: false, drained: false, reason: `not admitted: ${waiting}` };
}

function longestUnhealthyFirst(a: DrainTarget, b: DrainTarget): number {
  const sa = a.unhealthySince ?? Number.POSITIVE_INFINITY;
  const sb = b.unhealthySince ?? Number.POSITIVE_INFINITY;
  if (sa !== sb) return sa < sb ? -1 : 1;
  const out = Number(b.outOfRotation === true) - Number(a.outOfRotation === true);
  return out || compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid);
}

/** Code-unit order: stable across locales, unlike localeCompare. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
