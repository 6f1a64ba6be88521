import { describe, it, expect } from "@jest/globals";
import { HOUR_MS } from "./budget.js";
import { planReplacements, shouldReplace } from "./replacement.js";
import {
  aBudget,
  aCandidate,
  anEntry,
  anInput,
  aPlanInput,
  aPod,
  aView,
  MIN,
  NOW,
} from "./testing/replacement-builders.js";

describe("shouldReplace: safety steps", () => {
  it.each([
    {
      name: "never while the policy fails open, with its own blocked reason",
      input: anInput({ failOpen: true }),
      step: "FailOpen",
      blockedReason: "FailOpen",
      reason: "the policy is failing open (no target both Healthy and kubelet-Ready): no replacement on mass evidence",
    },
    {
      name: "never while the policy fails closed, with its own blocked reason",
      input: anInput({ failClosed: true }),
      step: "FailClosed",
      blockedReason: "FailClosed",
      reason:
        "the policy is failing closed (no target both Healthy and kubelet-Ready): no replacement on mass evidence",
    },
    {
      name: "not on restored state without any result since probing started",
      input: anInput({ pod: aPod({ probingSince: NOW - MIN, lastResultAt: undefined }) }),
      step: "Evidence",
      reason:
        "waiting for a probe result newer than the start of probing at 2026-11-30T09:59:00Z: restored state is not evidence",
    },
    {
      name: "not on a result older than the last start of probing (the policy Ready again, a leader change)",
      input: anInput({ pod: aPod({ probingSince: NOW - MIN, lastResultAt: NOW - 2 * MIN }) }),
      step: "Evidence",
      reason:
        "waiting for a probe result newer than the start of probing at 2026-11-30T09:59:00Z: restored state is not evidence",
    },
    {
      name: "not on a verdict from before the end of the last fail-open (it drains nothing either)",
      input: anInput({ recoveredAt: NOW - MIN, pod: aPod({ probingSince: NOW - 60 * MIN, lastResultAt: NOW - MIN }) }),
      step: "Evidence",
      reason:
        "waiting for a probe result newer than the end of fail-open at 2026-11-30T09:59:00Z: a verdict from the outage is not evidence",
    },
    {
      name: "never a mirror (static) pod, whose controller is its Node",
      input: anInput({ pod: aPod({ ownerReferences: [{ kind: "Node", name: "node-1", controller: true }] }) }),
      step: "Controller",
      blockedReason: "NoController",
      reason: "pod is a mirror (static) pod of node node-1: deleting it removes only the mirror, kubelet runs it",
    },
    {
      name: "never a bare pod",
      input: anInput({ pod: aPod({ ownerReferences: [{ kind: "ReplicaSet", name: "rs", controller: false }] }) }),
      step: "Controller",
      blockedReason: "NoController",
      reason: "pod has no controller ownerReference: nothing would recreate it",
    },
    {
      name: "never a terminating pod",
      input: anInput({ pod: aPod({ terminating: true }) }),
      step: "Terminating",
      reason: "pod is already terminating",
    },
  ])("$name", ({ input, step, blockedReason, reason }) => {
    const decision = shouldReplace(input);
    expect(decision).toEqual({ eligible: false, step, reason, ...(blockedReason ? { blockedReason } : {}) });
  });

  it("replaces on a result newer than the last start of probing", () => {
    expect(
      shouldReplace(anInput({ pod: aPod({ probingSince: NOW - MIN, lastResultAt: NOW - MIN + 1 }) })).eligible,
    ).toBe(true);
  });

  it.each([
    { name: "a result newer than the recovery", recoveredAt: NOW - 2 * MIN, eligible: true },
    {
      name: "a recovery long before probing started (the start of probing decides)",
      recoveredAt: NOW - 120 * MIN,
      eligible: true,
    },
  ])("replaces on $name", ({ recoveredAt, eligible }) => {
    expect(
      shouldReplace(anInput({ recoveredAt, pod: aPod({ probingSince: NOW - 60 * MIN, lastResultAt: NOW - MIN }) }))
        .eligible,
    ).toBe(eligible);
  });

  it("lets only a policy that is probing the pod veto it", () => {
    const views = [
      aView({ policy: "shop/claimed", probing: false, state: "Unknown" }),
      aView({ policy: "shop/missing-secret", probing: false, state: "Healthy" }),
    ];
    const budgets = [aBudget({ policy: "shop/claimed" }), aBudget({ policy: "shop/missing-secret" })];
    const decision = shouldReplace(anInput({ otherViews: views, otherBudgets: budgets }));
    expect(decision.eligible).toBe(true);
    if (decision.eligible)
      expect(decision.charge.policies).toEqual(["shop/web", "shop/claimed", "shop/missing-secret"]);
  });

  it("still applies the budget of a selecting policy that is not probing", () => {
    const decision = shouldReplace(
      anInput({
        otherViews: [aView({ policy: "shop/claimed", probing: false, state: "Unknown" })],
        otherBudgets: [aBudget({ policy: "shop/claimed", maxPerHour: 1, ledger: [anEntry({ time: NOW - 10 * MIN })] })],
      }),
    );
    expect(decision).toMatchObject({ eligible: false, step: "Budget", blockedReason: "Budget" });
  });

  it("keeps vetoing with a probing policy that sees the pod Healthy", () => {
    const decision = shouldReplace(
      anInput({ otherViews: [aView({ probing: true, state: "Healthy" })], otherBudgets: [aBudget()] }),
    );
    expect(decision).toMatchObject({ eligible: false, step: "Agreement", blockedReason: "Veto" });
  });
});

describe("planReplacements while failing open", () => {
  it("attempts nothing and says so in the condition", () => {
    const plan = planReplacements(
      aPlanInput({
        failOpen: true,
        candidates: [aCandidate(), aCandidate({ uid: "uid-b", name: "web-b", unhealthySince: NOW - 3 * HOUR_MS })],
      }),
    );
    expect(plan.attempts).toEqual([]);
    expect(plan.condition).toMatchObject({ blocked: true, reason: "FailOpen" });
    expect(plan.blocked.map((b) => b.step)).toEqual(["FailOpen", "FailOpen"]);
  });
});

describe("planReplacements while failing closed", () => {
  it("attempts nothing and says so in the condition", () => {
    const plan = planReplacements(
      aPlanInput({
        failClosed: true,
        candidates: [aCandidate(), aCandidate({ uid: "uid-b", name: "web-b", unhealthySince: NOW - 3 * HOUR_MS })],
      }),
    );
    expect(plan.attempts).toEqual([]);
    expect(plan.condition).toMatchObject({ blocked: true, reason: "FailClosed" });
    expect(plan.blocked.map((b) => b.step)).toEqual(["FailClosed", "FailClosed"]);
  });
});
