import { formatInstant } from "./budget.js";
import { holdQuarantined } from "./drain-quarantine.js";
import type { QuarantineVerdict } from "./flap-quarantine.js";
import { currentOutage } from "./outage.js";
import { fromRfc3339 } from "./status-time.js";
import type { Condition, DrainMode, EpochMs, HealthStateName } from "./types.js";

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
  /**
   * The pod is in rotation now (see isServing). An Unknown pod that is serving stays in
   * rotation (adoption is free); one that is not is in warm-up until its first success.
   */
  serving: boolean;
  /** When the latest probe result for the pod arrived (none yet: undefined). Seeds are not results. */
  lastResultAt?: EpochMs;
  /** Why the pod cannot be probed (e.g. its named probe port does not resolve); it is routed as Unknown. */
  notProbed?: string;
  /** The pod flapped: held out of rotation until then, within the cap (spec.evaluation.flapQuarantine). */
  quarantine?: QuarantineVerdict;
}

/** spec.drain.whenAllUnhealthy. */
export type WhenAllUnhealthy = "FailOpen" | "FailClosed";

export interface DrainInput {
  /** Selected pods that are Running, have a pod IP and are not terminating. */
  targets: readonly DrainTarget[];
  maxUnhealthyPercent: number;
  drainEnabled: boolean;
  dryRun: boolean;
  /**
   * When fail-open last ended (the recovery). A serving Unhealthy pod whose latest result, and
   * whose turn to Unhealthy, are not newer than this stays in rotation and is probed again at
   * once (`recheck`).
   */
  recoveredAt?: EpochMs;
  /** What happens when no target is both kubelet-Ready and Healthy; FailOpen when absent. */
  whenAllUnhealthy?: WhenAllUnhealthy;
}

export interface DrainDecision {
  /** The policy lets the endpoint be ready (kubelet readiness still applies). */
  admitted: boolean;
  /** A kubelet-Ready Unhealthy pod taken out of rotation by this policy (counted in the cap). */
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
  /** Unknown pods never in rotation, waiting for their first success (not counted in the cap). */
  warmUp: string[];
  /** Unhealthy pods kept in rotation after a recovery until a newer result: probe them now. */
  recheck: string[];
  /** Quarantined (flapping) pods held out of rotation, or that would be in dryRun; counted in the cap. */
  quarantined: string[];
  /** Quarantined pods kept in rotation: by the cap, or as the last Healthy ones. */
  quarantineKept: string[];
  failOpen: boolean;
  /** No target is both kubelet-Ready and Healthy and the policy fails closed: every kubelet-Ready Unhealthy pod is drained. */
  failClosed: boolean;
  whenAllUnhealthy: WhenAllUnhealthy;
  mode: DrainMode;
  maxUnhealthyPercent: number;
  targets: number;
}

/** What tells whether a pod is in rotation now. */
export interface ServingInput {
  kubeletReady: boolean;
  /** The pod's endpoint `ready` in the Service's current slices; undefined when not listed. */
  readyInSlices: boolean | undefined;
  /** The policy has written slices for the Service. */
  slicesWritten: boolean;
  /**
   * The operator has state for the pod: its health store held the policy before this
   * reconcile, or the persisted status lists the pod. False for a new policy and after a restart.
   */
  known: boolean;
}

/**
 * Adoption: a pod is serving when it is ready in the Service's current slices, or
 * kubelet-Ready when the policy has written no slices yet or the operator has no state for it.
 */
export function isServing(input: ServingInput): boolean {
  if (input.readyInSlices === true) return true;
  return input.kubeletReady && (!input.slicesWritten || !input.known);
}

/**
 * The `recoveredAt` for planDrain (and replacement), from the FailOpen condition as last
 * written: while it is not True, when it stopped being True (its lastTransitionTime, which
 * status keeps in whole seconds: taken as the end of that second, so never before the real
 * recovery, and the same instant on every later reconcile); while True (or not yet
 * evaluated), now, which is when fail-open ends if this plan does not fail open.
 */
export function computeRecoveredAt(
  previousFailOpen: Pick<Condition, "status" | "lastTransitionTime"> | undefined,
  now: EpochMs,
): EpochMs {
  const at = previousFailOpen?.status === "False" ? fromRfc3339(previousFailOpen.lastTransitionTime) : undefined;
  return at === undefined ? now : Math.floor(at / 1000) * 1000 + 999;
}

/**
 * Chooses which targets the policy admits to rotation.
 *
 * - Healthy: admitted. Unknown (or not probed, see `notProbed`): admitted while serving
 *   (adoption is free); a pod never in rotation waits for its first success (warm-up).
 * - Unhealthy and kubelet-Ready: drained within the cap. The cap allows at most
 *   floor(targets * maxUnhealthyPercent / 100) kubelet-Ready pods kept out of rotation,
 *   warm-up pods aside; longest-unhealthy first by whole second (status keeps seconds), ties:
 *   the one already out of rotation, then by name, then uid — so a newcomer never swaps
 *   places with a pod drained a moment ago, and the "n of m" in the reasons follows that order.
 *   An Unhealthy pod without unhealthySince ranks as the most recent.
 * - Unhealthy and kubelet-NotReady: not admitted, not counted (kubelet keeps it out anyway).
 * - Recovery sweep: after fail-open ends (`recoveredAt`), a serving Unhealthy pod with neither a
 *   result nor its turn to Unhealthy newer than the recovery stays in rotation and is listed in
 *   `recheck`.
 * - Quarantine (a flapping pod, `quarantine`): a kubelet-Ready pod that is Healthy, or Unknown
 *   and serving, is held out of rotation (drained) while quarantined, counted in the cap after the
 *   Unhealthy pods (they are failing; a quarantined pod is only suspect): the one already out first,
 *   then by name. It stays in rotation when the cap is full, and while no other kubelet-Ready
 *   Healthy target is unquarantined (quarantine never takes the last Healthy pods out). An
 *   Unhealthy quarantined pod is drained as Unhealthy; its reason also says it is quarantined.
 * - When no target is both kubelet-Ready and Healthy (currentOutage, outage.ts; zero targets aside: nothing to keep in rotation):
 *   - FailOpen (default): every target is admitted (fail open).
 *   - FailClosed: every kubelet-Ready Unhealthy pod is drained whatever the cap says, with no
 *     recovery sweep; Unknown pods are routed as always (serving ones stay, warm-up ones wait for
 *     their first success). The only way the plan admits no kubelet-Ready pod.
 * - dryRun / drain disabled: every target is admitted; reasons say what would have
 *   happened. In dryRun the cap is still evaluated (reported in `capped`); with drain
 *   disabled it is not.
 *
 * Never dark follows, FailClosed aside: a kubelet-Ready Healthy pod is always admitted (one
 * unquarantined at least), and without one every kubelet-Ready pod is.
 */
export function planDrain(input: DrainInput): DrainPlan {
  const mode: DrainMode = input.dryRun ? "dryRun" : input.drainEnabled ? "active" : "disabled";
  const pct = input.maxUnhealthyPercent;
  const total = input.targets.length;
  const allowed = Math.floor((total * pct) / 100);
  const whenAllUnhealthy = input.whenAllUnhealthy ?? "FailOpen";
  const outage = currentOutage(
    input.targets.map((t) => ({ kubeletReady: t.kubeletReady, state: routedState(t) })),
    whenAllUnhealthy,
  );
  const noHealthy = outage !== undefined;
  const failOpen = outage === "FailOpen";
  const failClosed = outage === "FailClosed";
  const plan: DrainPlan = {
    decisions: new Map(),
    allowed,
    drainedCount: 0,
    capped: [],
    wouldDrain: [],
    warmUp: [],
    recheck: [],
    quarantined: [],
    quarantineKept: [],
    failOpen,
    failClosed,
    whenAllUnhealthy,
    mode,
    maxUnhealthyPercent: pct,
    targets: total,
  };

  const rank = decideUnhealthy(input, plan);

  for (const t of input.targets) {
    if (routedState(t) === "Unhealthy") continue;
    if (routedState(t) === "Unknown" && !t.serving) plan.warmUp.push(t.uid);
    plan.decisions.set(t.uid, admitNonUnhealthy(t, failOpen, mode));
  }
  if (mode !== "disabled" && !noHealthy) holdQuarantined(input.targets, plan, rank);

  // Same contents whatever the input order; iteration order too.
  plan.decisions = new Map([...plan.decisions].sort(([a], [b]) => compareStrings(a, b)));
  plan.drainedCount = mode === "active" ? plan.wouldDrain.length + plan.quarantined.length : 0;
  for (const list of [plan.capped, plan.wouldDrain, plan.warmUp, plan.recheck, plan.quarantined, plan.quarantineKept])
    list.sort(compareStrings);
  return plan;
}

/** Decides the Unhealthy targets, longest unhealthy first; returns how many of them the cap counts. */
function decideUnhealthy(input: DrainInput, plan: DrainPlan): number {
  const { mode, allowed, maxUnhealthyPercent: pct, targets: total, failOpen, failClosed } = plan;
  const unhealthy = input.targets.filter((t) => routedState(t) === "Unhealthy").sort(longestUnhealthyFirst);
  let rank = 0;
  for (const t of unhealthy) {
    const decide = (verdict: string, drain: boolean): DrainDecision => {
      const why = t.quarantine ? `${verdict}; ${t.quarantine.reason}` : verdict;
      return mode === "dryRun"
        ? { admitted: true, drained: false, reason: `${DRY_RUN_KEPT}${why})` }
        : { admitted: !drain, drained: drain, reason: why };
    };
    if (failOpen)
      plan.decisions.set(t.uid, { admitted: true, drained: false, reason: "kept: fail open, no healthy target" });
    else if (mode === "disabled")
      plan.decisions.set(t.uid, { admitted: true, drained: false, reason: "kept: drain disabled (unhealthy)" });
    else if (!t.kubeletReady) {
      const why = "unhealthy, kubelet: not ready (not counted in maxUnhealthyPercent)";
      plan.decisions.set(
        t.uid,
        mode === "dryRun"
          ? { admitted: true, drained: false, reason: `admitted: dryRun (would not be admitted: ${why})` }
          : { admitted: false, drained: false, reason: `not admitted: ${why}` },
      );
    } else if (failClosed) {
      plan.wouldDrain.push(t.uid);
      plan.decisions.set(
        t.uid,
        decide(
          "drained: fail closed, no healthy target (whenAllUnhealthy=FailClosed: maxUnhealthyPercent not applied)",
          true,
        ),
      );
    } else if (awaitsFreshResult(t, input.recoveredAt)) {
      plan.recheck.push(t.uid);
      plan.decisions.set(
        t.uid,
        decide(
          `kept: Unhealthy from before the recovery at ${formatInstant(input.recoveredAt!)}, probing again: drained only on a newer result`,
          false,
        ),
      );
    } else {
      const overCap = rank >= allowed;
      rank++;
      (overCap ? plan.capped : plan.wouldDrain).push(t.uid);
      plan.decisions.set(
        t.uid,
        decide(
          overCap
            ? overCapVerdict(allowed, pct, total)
            : `drained: longest unhealthy, ${rank} of ${allowed} allowed by maxUnhealthyPercent=${pct}`,
          !overCap,
        ),
      );
    }
  }
  return rank;
}

/** The verdict of an Unhealthy pod over the cap. */
export function overCapVerdict(allowed: number, pct: number, total: number): string {
  return allowed === 0
    ? `kept: over the cap, maxUnhealthyPercent=${pct} of ${total} targets allows none drained`
    : `kept: over the cap, ${allowed} of ${allowed} allowed by maxUnhealthyPercent=${pct} already drained`;
}

/** A pod that cannot be probed is routed as Unknown, whatever its record says. */
export function routedState(t: DrainTarget): HealthStateName {
  return t.notProbed !== undefined ? "Unknown" : t.state;
}

/**
 * The verdict is from before the recovery: neither its latest result nor its turn to Unhealthy
 * (restored from status after a restart, before any new result) is newer than the recovery.
 */
function awaitsFreshResult(t: DrainTarget, recoveredAt: EpochMs | undefined): boolean {
  if (recoveredAt === undefined || !t.serving) return false;
  const evidenceAt = Math.max(t.lastResultAt ?? Number.NEGATIVE_INFINITY, t.unhealthySince ?? Number.NEGATIVE_INFINITY);
  return evidenceAt <= recoveredAt;
}

function admitNonUnhealthy(t: DrainTarget, failOpen: boolean, mode: DrainMode): DrainDecision {
  const kubelet = t.kubeletReady ? "" : " (kubelet: not ready)";
  if (routedState(t) === "Healthy") return { admitted: true, drained: false, reason: `admitted: healthy${kubelet}` };
  const what = t.notProbed !== undefined ? `not probed: ${t.notProbed}` : "unknown";
  if (t.serving)
    return {
      admitted: true,
      drained: false,
      reason: `admitted: ${what}, serving: stays in rotation until probes say otherwise${kubelet}`,
    };
  const waiting = t.notProbed !== undefined ? `${what}, never in rotation` : "unknown, waiting for first success";
  if (failOpen)
    return { admitted: true, drained: false, reason: `admitted: fail open, no healthy target (${waiting})${kubelet}` };
  if (mode === "dryRun")
    return { admitted: true, drained: false, reason: `admitted: dryRun (would not be admitted: ${waiting})${kubelet}` };
  if (mode === "disabled")
    return { admitted: true, drained: false, reason: `admitted: drain disabled (${waiting})${kubelet}` };
  return { admitted: false, drained: false, reason: `not admitted: ${waiting}` };
}

/** Whole seconds: status keeps unhealthySince in seconds, so a restarted replica ranks alike. */
function unhealthySecond(t: DrainTarget): number {
  return t.unhealthySince === undefined ? Number.POSITIVE_INFINITY : Math.floor(t.unhealthySince / 1000);
}

function longestUnhealthyFirst(a: DrainTarget, b: DrainTarget): number {
  const sa = unhealthySecond(a);
  const sb = unhealthySecond(b);
  if (sa !== sb) return sa < sb ? -1 : 1;
  const out = Number(b.outOfRotation === true) - Number(a.outOfRotation === true);
  return out || compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid);
}

/** Code-unit order: stable across locales, unlike localeCompare. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
