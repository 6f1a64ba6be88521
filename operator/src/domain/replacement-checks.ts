// Steps of the replacement chain that look at one pod's evidence, ownership and the other
// policies' views. The chain itself, its order and the budgets are in replacement.ts.
import { formatInstant } from "./budget.js";
import type { BlockedReason, OtherPolicyView, ReplacementDecision, ReplacementPod, ReplacementStep } from "./replacement.js";

export type Blocked = Extract<ReplacementDecision, { eligible: false }>;

/** "1h30m", "45s": durations in reasons, the way the spec writes them. */
export function formatDuration(ms: number): string {
  let rest = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const s = rest - m * 60;
  const text = `${h > 0 ? `${h}h` : ""}${m > 0 ? `${m}m` : ""}${s > 0 ? `${s}s` : ""}`;
  return text === "" ? "0s" : text;
}

export function blocked(step: ReplacementStep, reason: string, blockedReason?: BlockedReason, waitUntil?: number): Blocked {
  const decision: Blocked = { eligible: false, step, reason };
  if (blockedReason !== undefined) decision.blockedReason = blockedReason;
  if (waitUntil !== undefined) decision.waitUntil = waitUntil;
  return decision;
}

/** Fail-open or fail-closed of the deciding policy: its drain plan's, or True in its last status. */
export interface OutageInput {
  /** FailOpen=True: mass evidence, nothing is replaced. */
  failOpen: boolean;
  /** FailClosed=True (no target Healthy, every Unhealthy one drained): mass evidence too. */
  failClosed?: boolean;
  /** When the last fail-open (or fail-closed) ended, or ends now: evidence must be newer. */
  recoveredAt?: number;
}

/** While the policy fails open or closed nothing is replaced: the cause is shared, not the pods'. */
export function checkOutage(input: OutageInput): Blocked | undefined {
  if (input.failOpen) return blocked("FailOpen", "the policy is failing open (no target both Healthy and kubelet-Ready): no replacement on mass evidence", "FailOpen");
  if (input.failClosed) return blocked("FailClosed", "the policy is failing closed (no target both Healthy and kubelet-Ready): no replacement on mass evidence", "FailClosed");
  return undefined;
}

/**
 * Another policy selecting the pod fails open or closed: its probes saw no target both Healthy
 * and kubelet-Ready, a shared cause, so the pod is not replaced on this policy's evidence either.
 * A dryRun policy or one that does not replace counts too: it only watches, but what it saw is
 * evidence of an outage all the same.
 */
export function checkOtherOutages(now: number, self: string, views: readonly OtherPolicyView[]): Blocked | undefined {
  const view = views.find((v) => v.policy !== self && v.outage !== undefined);
  if (!view?.outage) return undefined;
  const how = view.outage === "FailOpen" ? "open" : "closed";
  // Its outage can end with no change to this policy's pods: looked at again, as for its breaker.
  return blocked(view.outage, `policy ${view.policy}, which also selects the pod, is failing ${how} (no target both Healthy and kubelet-Ready): no replacement on mass evidence`, view.outage, now + OTHER_BREAKER_RECHECK_MS);
}

/** Step 3: the other policies' views. Unknown means "no agreement yet": a veto without a time. */
export function checkAgreement(now: number, self: string, views: readonly OtherPolicyView[]): Blocked | undefined {
  const timeless: string[] = [];
  const waiting: Array<{ text: string; until: number }> = [];
  for (const view of views) {
    // A policy that is not probing the pod has no say (its budget still applies).
    if (view.policy === self || !view.replacementEnabled || !view.probing) continue;
    if (view.state === "Healthy") timeless.push(`policy ${view.policy} sees the pod Healthy`);
    else if (view.state === "Unknown") timeless.push(`policy ${view.policy} has no verdict on the pod yet (Unknown)`);
    else if (view.unhealthySince === undefined) timeless.push(`policy ${view.policy} sees the pod Unhealthy since an unknown time`);
    else {
      const until = view.unhealthySince + view.afterMs;
      if (until > now) {
        waiting.push({
          until,
          text: `policy ${view.policy} sees the pod Unhealthy only since ${formatInstant(view.unhealthySince)}, its window of ${formatDuration(view.afterMs)} ends ${formatInstant(until)}`,
        });
      }
    }
  }
  if (timeless.length === 0 && waiting.length === 0) return undefined;
  const reason = `vetoed: ${[...timeless, ...waiting.map((w) => w.text)].join("; ")}`;
  // One requeue suffices: wait for the last of the windows, unless something only a transition can lift.
  const until = timeless.length === 0 ? Math.max(...waiting.map((w) => w.until)) : undefined;
  return blocked("Agreement", reason, "Veto", until);
}

/**
 * Fresh, individual evidence: a result newer than the last start of probing, and newer than the
 * end of the last fail-open (`recoveredAt`). State restored from status after a restart, a leader
 * change or the policy becoming Ready again is not evidence, nor is a verdict from the outage:
 * a pod drained only on a result newer than the recovery is replaced only on one too.
 * No time to wait for: the first fresh result enqueues the policy.
 */
export function checkEvidence(pod: ReplacementPod, recoveredAt?: number): Blocked | undefined {
  const afterRecovery = recoveredAt !== undefined && recoveredAt >= pod.probingSince;
  const since = afterRecovery ? recoveredAt : pod.probingSince;
  if (pod.lastResultAt !== undefined && pod.lastResultAt > since) return undefined;
  const why = afterRecovery
    ? `waiting for a probe result newer than the end of fail-open at ${formatInstant(since)}: a verdict from the outage is not evidence`
    : `waiting for a probe result newer than the start of probing at ${formatInstant(since)}: restored state is not evidence`;
  return blocked("Evidence", why);
}

/** A controller ownerReference other than a Node: bare and mirror (static) pods would not come back. */
export function checkController(pod: ReplacementPod): Blocked | undefined {
  const controller = (pod.ownerReferences ?? []).find((ref) => ref.controller === true);
  if (!controller) return blocked("Controller", "pod has no controller ownerReference: nothing would recreate it", "NoController");
  if (controller.kind === "Node") {
    return blocked("Controller", `pod is a mirror (static) pod of node ${controller.name ?? ""}: deleting it removes only the mirror, kubelet runs it`, "NoController");
  }
  return undefined;
}

/** The deciding policy's targets and how many of them it sees Unhealthy. */
export interface UnhealthyShare {
  unhealthy: number;
  targets: number;
}

/**
 * The breaker trips when Unhealthy / targets is strictly greater than pauseAbove percent,
 * compared in integers (unhealthy × 100 > pauseAbove × targets): 3 of 6 is not above 50.
 */
export function isAboveShare(share: UnhealthyShare, pauseAbove: number): boolean {
  return share.targets > 0 && share.unhealthy * 100 > pauseAbove * share.targets;
}

/** "60%", "66.7%": a share that is not a whole percentage is shown rounded up to a tenth, so it never reads as the threshold itself. */
export function formatShare(share: UnhealthyShare): string {
  const tenths = (share.unhealthy * 1000) / share.targets;
  return Number.isInteger(tenths / 10) ? `${tenths / 10}%` : `${Math.ceil(tenths) / 10}%`;
}

/**
 * Mass-failure breaker: more than pauseAbove percent of the policy's targets Unhealthy is a
 * correlated failure, not the pods' fault, and replaces nobody. No time to wait for: the share
 * changes only with a health transition or a target change, which enqueue the policy.
 */
export function checkMassFailure(share: UnhealthyShare, pauseAbove: number): Blocked | undefined {
  if (!isAboveShare(share, pauseAbove)) return undefined;
  return blocked(
    "MassFailure",
    `${share.unhealthy} of ${share.targets} targets (${formatShare(share)}) are Unhealthy, above pauseAboveUnhealthyPercent=${pauseAbove}: paused until the share falls`,
    "MassFailure",
  );
}

/** A pod of a suspect rollout: replacing it would only recreate the failure (see rollout.ts). */
export function checkRollout(pod: ReplacementPod): Blocked | undefined {
  return pod.rolloutSuspect === undefined ? undefined : blocked("Rollout", pod.rolloutSuspect, "Rollout");
}

/**
 * The pod's replacement stays correlated-failure-safe across overlapping policies: another
 * selecting policy that probes the pod and replaces (enabled, not dryRun) with more than its own
 * pauseAboveUnhealthyPercent Unhealthy pauses it too, as its budget would. That share can fall
 * without any change to this policy's pods, so the block is looked at again after
 * OTHER_BREAKER_RECHECK_MS.
 */
export const OTHER_BREAKER_RECHECK_MS = 15_000;

export function checkOtherBreakers(now: number, self: string, views: readonly OtherPolicyView[]): Blocked | undefined {
  const tripped = views
    .filter((v) => v.policy !== self && v.probing && v.replacementEnabled && v.breaker && isAboveShare(v.breaker.share, v.breaker.pauseAboveUnhealthyPercent))
    .sort((a, b) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0));
  const first = tripped[0];
  if (!first?.breaker) return undefined;
  const { share, pauseAboveUnhealthyPercent: pause } = first.breaker;
  return blocked(
    "MassFailure",
    `policy ${first.policy}, which also selects the pod, has ${share.unhealthy} of ${share.targets} targets (${formatShare(share)}) Unhealthy, above its pauseAboveUnhealthyPercent=${pause}: paused until that share falls`,
    "MassFailure",
    now + OTHER_BREAKER_RECHECK_MS,
  );
}
