// Builders for the replacement chain's plain data: an ordinary, due, replaceable pod under
// one policy; a test states only what differs.
import { HOUR_MS, type LedgerEntry } from "../budget.js";
import type {
  OtherPolicyView,
  PlanReplacementsInput,
  PolicyBudget,
  ReplacementCandidate,
  ReplacementPod,
  ReplacingPolicy,
  ShouldReplaceInput,
} from "../replacement.js";

/** The decision instant of replacement tests. */
export const NOW = Date.parse("2026-11-30T10:00:00Z");
export const MIN = 60 * 1000;
const T0 = NOW;

export function aPolicy(over: Partial<ReplacingPolicy> = {}): ReplacingPolicy {
  return {
    policy: "shop/web",
    replacementEnabled: true,
    dryRun: false,
    afterMs: HOUR_MS,
    maxPerHour: 1,
    maxPerDay: 3,
    method: "Evict",
    ledger: [],
    pauseAboveUnhealthyPercent: 50,
    ...over,
  };
}
export function aPod(over: Partial<ReplacementPod> = {}): ReplacementPod {
  return {
    uid: "uid-a",
    name: "web-a",
    state: "Unhealthy",
    unhealthySince: T0 - 2 * HOUR_MS,
    ownerReferences: [{ kind: "ReplicaSet", name: "web-7d9f", controller: true }],
    terminating: false,
    probingSince: T0 - 3 * HOUR_MS,
    lastResultAt: T0 - MIN,
    ...over,
  };
}
export function aView(over: Partial<OtherPolicyView> = {}): OtherPolicyView {
  return {
    policy: "shop/canary",
    probing: true,
    replacementEnabled: true,
    state: "Unhealthy",
    unhealthySince: T0 - 2 * HOUR_MS,
    afterMs: HOUR_MS,
    ...over,
  };
}
export function aBudget(over: Partial<PolicyBudget> = {}): PolicyBudget {
  return { policy: "shop/canary", maxPerHour: 1, maxPerDay: 3, ledger: [], ...over };
}
export function anEntry(over: Partial<LedgerEntry> = {}): LedgerEntry {
  return { pod: "web-x", uid: "uid-x", time: T0 - 10 * MIN, method: "Evict", ...over };
}
export function anInput(over: Partial<ShouldReplaceInput> = {}): ShouldReplaceInput {
  return {
    now: T0,
    failOpen: false,
    share: { unhealthy: 1, targets: 5 },
    policy: aPolicy(),
    pod: aPod(),
    otherViews: [],
    otherBudgets: [],
    operatorLedger: [],
    max12h: 10,
    ...over,
  };
}

export function aCandidate(over: Partial<ReplacementCandidate> = {}): ReplacementCandidate {
  return { ...aPod(), otherViews: [], ...over };
}
export function aPlanInput(over: Partial<PlanReplacementsInput> = {}): PlanReplacementsInput {
  return {
    now: T0,
    failOpen: false,
    share: { unhealthy: 1, targets: 5 },
    policy: aPolicy(),
    candidates: [],
    otherPolicies: [],
    operatorLedger: [],
    max12h: 10,
    ...over,
  };
}
