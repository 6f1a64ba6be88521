// The replacement decision for one pod and the per-policy replacement plan. What can hold a
// replacement back, and in which order, is the chain of checks in replacement-checks.ts.

import { DAY_MS, formatInstant, namespaceOfKey, type LedgerEntry, type ReplacementMethod } from "./budget.js";
import { chargeLedger, isCharged } from "./ledger.js";
import {
  firstBlock,
  formatDuration,
  selectingBudgets,
  type BlockedReason,
  type OutageInput,
  type ReplacementStep,
} from "./replacement-checks.js";
import type { UnhealthyShare } from "./replacement-checks.js";

export { formatDuration, type BlockedReason, type ReplacementStep, type UnhealthyShare };

export type ReplacementHealthState = "Unknown" | "Healthy" | "Unhealthy";

/** How another policy that selects the pod sees it. */
export interface OtherPolicyView {
  policy: string;
  /**
   * The policy is probing the pod (Ready, and the pod one of its probed targets). A policy
   * that is not (ServiceClaimed, ServiceNotFound, SecretNotFound, SecretNotPermitted, invalid) has no say.
   */
  probing: boolean;
  replacementEnabled: boolean;
  state: ReplacementHealthState;
  unhealthySince?: number;
  afterMs: number;
  /** That policy's mass-failure breaker: its own share and threshold (see checkOtherBreakers). */
  breaker?: { share: UnhealthyShare; pauseAboveUnhealthyPercent: number };
  /** That policy is failing open or closed (see checkOtherOutages): whatever its dryRun or probing. */
  outage?: "FailOpen" | "FailClosed";
}

/** A policy's limits and ledger. `ledger: null` means it could not be read. */
export interface PolicyBudget {
  policy: string;
  maxPerHour: number;
  maxPerDay: number;
  ledger: readonly LedgerEntry[] | null;
}

/** The policy deciding, with its replacement spec. */
export interface ReplacingPolicy extends PolicyBudget {
  replacementEnabled: boolean;
  dryRun: boolean;
  afterMs: number;
  method: ReplacementMethod;
  /** The mass-failure breaker: no replacement while more than this percentage of the targets is Unhealthy. */
  pauseAboveUnhealthyPercent: number;
}

export interface PodOwnerReference {
  kind?: string;
  name?: string;
  controller?: boolean;
}

/** The pod as this policy sees it. */
export interface ReplacementPod {
  uid: string;
  name: string;
  state: ReplacementHealthState;
  unhealthySince?: number;
  ownerReferences?: readonly PodOwnerReference[];
  /** The pod has a deletionTimestamp. */
  terminating: boolean;
  /** When probing last started for the pod (operator start, leader change, the policy Ready again). */
  probingSince: number;
  /** When the latest probe result arrived; only one newer than `probingSince` is fresh evidence. */
  lastResultAt?: number;
  /** Why the pod belongs to a suspect rollout (see rollout.ts): replacing it would only recreate the failure. */
  rolloutSuspect?: string;
}

export interface ShouldReplaceInput extends OutageInput {
  now: number;
  /** The deciding policy's targets and how many it sees Unhealthy (the mass-failure breaker's share). */
  share: UnhealthyShare;
  policy: ReplacingPolicy;
  pod: ReplacementPod;
  /** Every other policy that selects the pod. */
  otherViews: readonly OtherPolicyView[];
  /** Limits and ledgers of the other policies; one missing for a policy in `otherViews` counts as unreadable. */
  otherBudgets: readonly PolicyBudget[];
  /** `null`: the operator-wide ledger could not be read. */
  operatorLedger: readonly LedgerEntry[] | null;
  max12h: number;
  /**
   * One namespace's share of `max12h` (--max-replacements-per-12h-per-namespace), counted over
   * the operator-wide ledger's entries of the deciding policy's namespace; absent: no share.
   */
  maxPerNamespace12h?: number;
  /** Until when a recent PodDisruptionBudget refusal holds this pod back. */
  pdbBlockedUntil?: number;
}

/**
 * What the controller persists before it calls the API: `chargeLedger(ledger, entry)` on
 * each named policy's ledger and, when `operator`, on the operator-wide ledger.
 */
export interface ReplacementCharge {
  /** Every policy that selects the pod, the deciding one first. */
  policies: string[];
  operator: boolean;
  entry: LedgerEntry;
  /** An earlier attempt on this pod uid is on some ledger; this charge moves it forward. */
  reattempt: boolean;
}

export type ReplacementDecision =
  | { eligible: true; charge: ReplacementCharge; reason: string }
  | {
      eligible: false;
      step: ReplacementStep;
      /** Human-readable, with RFC 3339 times. */
      reason: string;
      blockedReason?: BlockedReason;
      /** The instant this block may pass; always later than `now`. */
      waitUntil?: number;
    };

/** When the replacement window of a pod ends. */
export function computeReplaceAfter(unhealthySince: number | undefined, afterMs: number): number | undefined {
  return unhealthySince === undefined ? undefined : unhealthySince + afterMs;
}

/** The eligibility chain for one pod: the first check that blocks, else the charge to persist before the API call. */
export function shouldReplace(input: ShouldReplaceInput): ReplacementDecision {
  const { now, policy, pod } = input;
  const block = firstBlock(input);
  if (block !== undefined) return block;

  // Past every check: Window saw unhealthySince set.
  const budgets = selectingBudgets(input);
  const since = now - DAY_MS;
  const ledgers = [...budgets.map((b) => b.ledger ?? []), input.operatorLedger ?? []];
  const reattempt = ledgers.some((ledger) => isCharged(ledger, pod.uid, since));
  const namespace = namespaceOfKey(policy.policy);
  return {
    eligible: true,
    reason: `Unhealthy since ${formatInstant(pod.unhealthySince!)}, past its window of ${formatDuration(policy.afterMs)}: ${policy.method === "Evict" ? "evicting" : "deleting"}`,
    charge: {
      policies: budgets.map((b) => b.policy),
      operator: true,
      entry: {
        pod: pod.name,
        uid: pod.uid,
        time: now,
        method: policy.method,
        policy: policy.policy,
        ...(namespace !== undefined ? { namespace } : {}),
      },
      reattempt,
    },
  };
}

/** A pod the policy selects, with how the other selecting policies see it. */
export interface ReplacementCandidate extends ReplacementPod {
  otherViews: readonly OtherPolicyView[];
  pdbBlockedUntil?: number;
}

/** The outage fields come from the drain plan (failOpen, failClosed, recoveredAt) and the last status. */
export interface PlanReplacementsInput extends OutageInput {
  now: number;
  /** All the policy's targets (not only the candidates) and how many are Unhealthy. */
  share: UnhealthyShare;
  policy: ReplacingPolicy;
  candidates: readonly ReplacementCandidate[];
  /** Limits and ledgers of the other policies (at least those selecting a candidate). */
  otherPolicies: readonly PolicyBudget[];
  operatorLedger: readonly LedgerEntry[] | null;
  max12h: number;
  /** The per-namespace share of `max12h`; absent: no share. */
  maxPerNamespace12h?: number;
}

export interface ReplacementAttempt {
  podUid: string;
  podName: string;
  method: ReplacementMethod;
  charge: ReplacementCharge;
}

export interface BlockedReplacement {
  podUid: string;
  podName: string;
  step: ReplacementStep;
  reason: string;
  blockedReason?: BlockedReason;
  waitUntil?: number;
}

/** The ReplacementBlocked condition: True with the first blocked pod's reason, else False. */
export interface ReplacementConditionPlan {
  blocked: boolean;
  reason: string;
  message: string;
}

export interface ReplacementPlan {
  /** In order; each to be charged (persisted) before its API call. */
  attempts: ReplacementAttempt[];
  /** Every Unhealthy candidate not attempted, with the step that held it back. */
  blocked: BlockedReplacement[];
  /** The earliest `waitUntil`: when to reconcile again. */
  requeueAt?: number;
  condition: ReplacementConditionPlan;
}

const MESSAGE_PODS = 3;

function compareCandidates(a: ReplacementCandidate, b: ReplacementCandidate): number {
  const sa = a.unhealthySince ?? Number.POSITIVE_INFINITY;
  const sb = b.unhealthySince ?? Number.POSITIVE_INFINITY;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

function planCondition(policy: ReplacingPolicy, blockedList: readonly BlockedReplacement[]): ReplacementConditionPlan {
  const due = blockedList.filter((b) => b.blockedReason !== undefined);
  if (due.length === 0) {
    if (!policy.replacementEnabled)
      return { blocked: false, reason: "ReplacementDisabled", message: "replacement is disabled" };
    if (policy.dryRun) return { blocked: false, reason: "DryRun", message: "dryRun: nothing is replaced" };
    return { blocked: false, reason: "NoneWaiting", message: "no due replacement is waiting" };
  }
  // Pods held by the same sentence (one spent budget holds them all) share it: said once.
  const groups = new Map<string, string[]>();
  for (const b of due) groups.set(b.reason, [...(groups.get(b.reason) ?? []), b.podName]);
  const names = (pods: string[]) =>
    pods.length > MESSAGE_PODS
      ? `${pods.slice(0, MESSAGE_PODS).join(", ")} and ${pods.length - MESSAGE_PODS} more`
      : pods.join(", ");
  const shown = [...groups].slice(0, MESSAGE_PODS).map(([reason, pods]) => `${names(pods)}: ${reason}`);
  const more = groups.size > MESSAGE_PODS ? `; and ${groups.size - MESSAGE_PODS} more reasons` : "";
  const noun = due.length === 1 ? "replacement is" : "replacements are";
  return {
    blocked: true,
    reason: due[0]!.blockedReason as BlockedReason,
    message: `${due.length} due ${noun} waiting. ${shown.join("; ")}${more}`,
  };
}

/**
 * Applies the chain to every Unhealthy candidate, longest unhealthy first (ties by name),
 * charging the working ledgers as it goes, so that two pods never share one slot.
 */
export function planReplacements(input: PlanReplacementsInput): ReplacementPlan {
  const { now, policy } = input;
  const ledgers = new Map<string, readonly LedgerEntry[] | null>(input.otherPolicies.map((p) => [p.policy, p.ledger]));
  ledgers.set(policy.policy, policy.ledger);
  let operatorLedger = input.operatorLedger;

  const attempts: ReplacementAttempt[] = [];
  const blockedList: BlockedReplacement[] = [];
  const candidates = input.candidates.filter((c) => c.state === "Unhealthy").sort(compareCandidates);

  for (const candidate of candidates) {
    const otherBudgets = input.otherPolicies
      .filter((p) => p.policy !== policy.policy)
      .map((p) => ({ ...p, ledger: ledgers.get(p.policy) ?? null }));
    const decisionInput: ShouldReplaceInput = {
      now,
      failOpen: input.failOpen,
      ...(input.failClosed ? { failClosed: true } : {}),
      ...(input.recoveredAt !== undefined ? { recoveredAt: input.recoveredAt } : {}),
      share: input.share,
      policy: { ...policy, ledger: ledgers.get(policy.policy) ?? null },
      pod: candidate,
      otherViews: candidate.otherViews,
      otherBudgets,
      operatorLedger,
      max12h: input.max12h,
      ...(input.maxPerNamespace12h !== undefined ? { maxPerNamespace12h: input.maxPerNamespace12h } : {}),
    };
    if (candidate.pdbBlockedUntil !== undefined) decisionInput.pdbBlockedUntil = candidate.pdbBlockedUntil;
    const decision = shouldReplace(decisionInput);

    if (decision.eligible) {
      const { charge } = decision;
      attempts.push({ podUid: candidate.uid, podName: candidate.name, method: charge.entry.method, charge });
      // Eligibility implies every named ledger was readable.
      for (const name of charge.policies) ledgers.set(name, chargeLedger(ledgers.get(name) ?? [], charge.entry));
      if (charge.operator) operatorLedger = chargeLedger(operatorLedger ?? [], charge.entry);
      continue;
    }
    const entry: BlockedReplacement = {
      podUid: candidate.uid,
      podName: candidate.name,
      step: decision.step,
      reason: decision.reason,
    };
    if (decision.blockedReason !== undefined) entry.blockedReason = decision.blockedReason;
    if (decision.waitUntil !== undefined) entry.waitUntil = decision.waitUntil;
    blockedList.push(entry);
  }

  const waits = blockedList.map((b) => b.waitUntil).filter((t): t is number => t !== undefined);
  const plan: ReplacementPlan = { attempts, blocked: blockedList, condition: planCondition(policy, blockedList) };
  if (waits.length > 0) plan.requeueAt = Math.min(...waits);
  return plan;
}
