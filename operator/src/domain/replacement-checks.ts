// The replacement eligibility chain: every reason to hold a replacement back, as named checks
// in the contract's order (REPLACEMENT_CHECKS), each returning a block or nothing. The planner
// (replacement.ts) runs the chain and charges the ledgers when nothing blocks.
//
// Every block that only time can lift carries `waitUntil` (always later than `now`), so the
// controller requeues at that instant instead of polling; blocks that wait for some other
// change (a state transition, a spec edit, a readable ledger) carry no time: the events that
// bring that change enqueue the policy anyway.
import {
  computeBudget,
  computeNamespaceBudget,
  computeOperatorBudget,
  formatInstant,
  namespaceOfKey,
} from "./budget.js";
import { withoutPod } from "./ledger.js";
import type {
  OtherPolicyView,
  PolicyBudget,
  ReplacementDecision,
  ReplacementPod,
  ShouldReplaceInput,
} from "./replacement.js";

/** The condition reasons of ReplacementBlocked (status.ts takes them from here: a new one is added here only). */
export const BLOCKED_REASONS = [
  "Budget",
  "PodDisruptionBudget",
  "Veto",
  "NoController",
  "FailOpen",
  "FailClosed",
  "MassFailure",
  "Rollout",
] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

/** The steps a block names (a check may name more than one: Outage says FailOpen or FailClosed). */
export type ReplacementStep =
  | "Enabled"
  | "Window"
  | "Rollout"
  | "MassFailure"
  | "FailOpen"
  | "FailClosed"
  | "Evidence"
  | "Agreement"
  | "Controller"
  | "Terminating"
  | "Budget"
  | "PodDisruptionBudget";

export interface ReplacementCheck {
  name: string;
  check: (input: ShouldReplaceInput) => Blocked | undefined;
}

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

export function blocked(
  step: ReplacementStep,
  reason: string,
  blockedReason?: BlockedReason,
  waitUntil?: number,
): Blocked {
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
  if (input.failOpen)
    return blocked(
      "FailOpen",
      "the policy is failing open (no target both Healthy and kubelet-Ready): no replacement on mass evidence",
      "FailOpen",
    );
  if (input.failClosed)
    return blocked(
      "FailClosed",
      "the policy is failing closed (no target both Healthy and kubelet-Ready): no replacement on mass evidence",
      "FailClosed",
    );
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
  return blocked(
    view.outage,
    `policy ${view.policy}, which also selects the pod, is failing ${how} (no target both Healthy and kubelet-Ready): no replacement on mass evidence`,
    view.outage,
    now + OTHER_BREAKER_RECHECK_MS,
  );
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
    else if (view.unhealthySince === undefined)
      timeless.push(`policy ${view.policy} sees the pod Unhealthy since an unknown time`);
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
  if (!controller)
    return blocked("Controller", "pod has no controller ownerReference: nothing would recreate it", "NoController");
  if (controller.kind === "Node") {
    return blocked(
      "Controller",
      `pod is a mirror (static) pod of node ${controller.name ?? ""}: deleting it removes only the mirror, kubelet runs it`,
      "NoController",
    );
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
    .filter(
      (v) =>
        v.policy !== self &&
        v.probing &&
        v.replacementEnabled &&
        v.breaker &&
        isAboveShare(v.breaker.share, v.breaker.pauseAboveUnhealthyPercent),
    )
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

/** Step 1: replacement is enabled and not dryRun. */
export function checkEnabled({ policy }: ShouldReplaceInput): Blocked | undefined {
  if (!policy.replacementEnabled) return blocked("Enabled", "replacement is disabled");
  if (policy.dryRun) return blocked("Enabled", "dryRun: replacements are decided and reported, never made");
  return undefined;
}

/** Step 2: Unhealthy continuously for `after`; only a due pod goes on to report a block (its window runs through every pause). */
export function checkWindow({ now, policy, pod }: ShouldReplaceInput): Blocked | undefined {
  if (pod.state !== "Unhealthy") return blocked("Window", `pod is ${pod.state}, not Unhealthy`);
  if (pod.unhealthySince === undefined) return blocked("Window", "pod is Unhealthy since an unknown time");
  const replaceAfter = pod.unhealthySince + policy.afterMs;
  if (now >= replaceAfter) return undefined;
  return blocked(
    "Window",
    `Unhealthy since ${formatInstant(pod.unhealthySince)}, replacement window of ${formatDuration(policy.afterMs)} ends ${formatInstant(replaceAfter)}`,
    undefined,
    replaceAfter,
  );
}

export function checkTerminating({ pod }: ShouldReplaceInput): Blocked | undefined {
  return pod.terminating ? blocked("Terminating", "pod is already terminating") : undefined;
}

/** Step 6: every selecting policy's budget and the operator-wide cap, with the pod's own earlier charge left out. */
export function checkBudgets(
  input: ShouldReplaceInput,
  policies: readonly PolicyBudget[] = selectingBudgets(input),
): Blocked | undefined {
  const { now, pod } = input;
  const reasons: string[] = [];
  const frees: Array<number | undefined> = [];
  const over = (result: { fits: boolean; reason: string; nextSlotAt?: number }) => {
    if (result.fits) return;
    reasons.push(result.reason);
    frees.push(result.nextSlotAt);
  };
  for (const budget of policies) {
    if (budget.ledger === null) {
      reasons.push(`ledger of policy ${budget.policy} cannot be read`);
      frees.push(undefined);
      continue;
    }
    over(
      computeBudget(withoutPod(budget.ledger, pod.uid), now, {
        maxPerHour: budget.maxPerHour,
        maxPerDay: budget.maxPerDay,
        policy: budget.policy,
      }),
    );
  }
  if (input.operatorLedger === null) {
    reasons.push("operator-wide ledger cannot be read");
    frees.push(undefined);
  } else {
    const ledger = withoutPod(input.operatorLedger, pod.uid);
    over(computeOperatorBudget(ledger, now, input.max12h));
    const namespace = namespaceOfKey(input.policy.policy);
    if (input.maxPerNamespace12h !== undefined && namespace !== undefined) {
      over(
        computeNamespaceBudget(ledger, now, {
          namespace,
          max12h: input.maxPerNamespace12h,
          operatorMax12h: input.max12h,
        }),
      );
    }
  }
  if (reasons.length === 0) return undefined;
  const until = frees.some((t) => t === undefined) ? undefined : Math.max(...(frees as number[]));
  return blocked("Budget", reasons.join("; "), "Budget", until);
}

/** The budgets that apply to the pod: the deciding policy's, then every other selecting policy's, by name. */
export function selectingBudgets(input: ShouldReplaceInput): PolicyBudget[] {
  const byName = new Map(input.otherBudgets.map((b) => [b.policy, b]));
  const names = [
    ...new Set(input.otherViews.map((v) => v.policy).filter((name) => name !== input.policy.policy)),
  ].sort();
  // A selecting policy whose ledger was not supplied is as good as unreadable.
  const others = names.map((name) => byName.get(name) ?? { policy: name, maxPerHour: 0, maxPerDay: 0, ledger: null });
  return [input.policy, ...others];
}

/** Step 7: a recent PodDisruptionBudget refusal holds the pod back until its backoff ends. */
export function checkPodDisruptionBudget({ now, pdbBlockedUntil }: ShouldReplaceInput): Blocked | undefined {
  if (pdbBlockedUntil === undefined || pdbBlockedUntil <= now) return undefined;
  return blocked(
    "PodDisruptionBudget",
    `a PodDisruptionBudget refused the eviction, retry at ${formatInstant(pdbBlockedUntil)}`,
    "PodDisruptionBudget",
    pdbBlockedUntil,
  );
}

/**
 * The chain, in order; the first block is the one reported. A new reason to hold a replacement
 * back is one entry here, its check above (its step in ReplacementStep, a new condition reason in
 * BLOCKED_REASONS), and a row in replacement-checks.test.ts: nothing outside this file. A check
 * that needs a fact the input does not carry yet also adds it to ReplacementPod (replacement.ts)
 * and where the replacement part gathers it (replacer.ts). A suspect
 * rollout is the more precise diagnosis, so it comes before the breaker.
 */
export const REPLACEMENT_CHECKS: readonly ReplacementCheck[] = [
  { name: "Enabled", check: checkEnabled },
  { name: "Window", check: checkWindow },
  { name: "Rollout", check: (i) => checkRollout(i.pod) },
  {
    name: "MassFailure",
    check: (i) =>
      checkMassFailure(i.share, i.policy.pauseAboveUnhealthyPercent) ??
      checkOtherBreakers(i.now, i.policy.policy, i.otherViews),
  },
  { name: "Outage", check: (i) => checkOutage(i) ?? checkOtherOutages(i.now, i.policy.policy, i.otherViews) },
  { name: "Evidence", check: (i) => checkEvidence(i.pod, i.recoveredAt) },
  { name: "Agreement", check: (i) => checkAgreement(i.now, i.policy.policy, i.otherViews) },
  { name: "Controller", check: (i) => checkController(i.pod) },
  { name: "Terminating", check: checkTerminating },
  { name: "Budget", check: (i) => checkBudgets(i) },
  { name: "PodDisruptionBudget", check: checkPodDisruptionBudget },
];

/** The first block of the chain, or none: the pod may be replaced. */
export function firstBlock(
  input: ShouldReplaceInput,
  checks: readonly ReplacementCheck[] = REPLACEMENT_CHECKS,
): Blocked | undefined {
  for (const { check } of checks) {
    const block = check(input);
    if (block !== undefined) return block;
  }
  return undefined;
}
