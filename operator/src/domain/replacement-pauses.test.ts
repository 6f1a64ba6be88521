// The chain's policy-wide pauses: the mass-failure breaker (its share and boundaries) and a
// suspect rollout, and where they stand in the order of checks.
import { describe, it, expect } from "@jest/globals";
import { HOUR_MS } from "./budget.js";
import { formatShare, isAboveShare, OTHER_BREAKER_RECHECK_MS } from "./replacement-checks.js";
import { planReplacements, shouldReplace } from "./replacement.js";
import {
  aBudget,
  aCandidate,
  anInput,
  aPlanInput,
  aPod,
  aPolicy,
  aView,
  MIN,
  NOW,
} from "./testing/replacement-builders.js";

describe("the mass-failure breaker's share: Unhealthy / targets, strictly greater than the threshold", () => {
  it.each([
    { name: "exactly 50% is not above 50", unhealthy: 1, targets: 2, pause: 50, above: false },
    { name: "3 of 6 is not above 50", unhealthy: 3, targets: 6, pause: 50, above: false },
    { name: "3 of 5 (60%) is above 50", unhealthy: 3, targets: 5, pause: 50, above: true },
    { name: "101 of 200 (50.5%) is above 50", unhealthy: 101, targets: 200, pause: 50, above: true },
    { name: "2 of 5 (40%) is not above 50", unhealthy: 2, targets: 5, pause: 50, above: false },
    {
      name: "all of them is never above 100: 100 turns the breaker off",
      unhealthy: 5,
      targets: 5,
      pause: 100,
      above: false,
    },
    { name: "1 of 100 is not above 1", unhealthy: 1, targets: 100, pause: 1, above: false },
    { name: "2 of 100 is above 1", unhealthy: 2, targets: 100, pause: 1, above: true },
    { name: "1 of 3 (33.3%) is above 33", unhealthy: 1, targets: 3, pause: 33, above: true },
    { name: "1 of 3 is not above 34", unhealthy: 1, targets: 3, pause: 34, above: false },
    { name: "no targets is never above", unhealthy: 0, targets: 0, pause: 1, above: false },
  ])("$name", ({ unhealthy, targets, pause, above }) => {
    expect(isAboveShare({ unhealthy, targets }, pause)).toBe(above);
  });

  it.each([
    { unhealthy: 3, targets: 5, text: "60%" },
    { unhealthy: 5, targets: 5, text: "100%" },
    { unhealthy: 2, targets: 3, text: "66.7%" },
    { unhealthy: 1, targets: 3, text: "33.4%" },
    { unhealthy: 5001, targets: 10000, text: "50.1%" },
  ])(
    "shows $unhealthy of $targets as $text (a fraction rounded up to a tenth, never down onto the threshold)",
    ({ unhealthy, targets, text }) => {
      expect(formatShare({ unhealthy, targets })).toBe(text);
    },
  );
});

describe("shouldReplace: the breaker and a suspect rollout in the order of checks", () => {
  const rollout = "ReplicaSet web-new (revision 2) of Deployment web is the newest";
  it.each([
    {
      name: "3 of 5 Unhealthy pauses a due replacement with the share in the reason",
      input: anInput({ share: { unhealthy: 3, targets: 5 } }),
      step: "MassFailure",
      blockedReason: "MassFailure",
      reason: "3 of 5 targets (60%) are Unhealthy, above pauseAboveUnhealthyPercent=50: paused until the share falls",
    },
    {
      name: "the breaker is named before fail-open: all five Unhealthy while failing open",
      input: anInput({ failOpen: true, share: { unhealthy: 5, targets: 5 } }),
      step: "MassFailure",
      blockedReason: "MassFailure",
      reason: "5 of 5 targets (100%) are Unhealthy, above pauseAboveUnhealthyPercent=50: paused until the share falls",
    },
    {
      name: "fail-open still blocks when the breaker is off",
      input: anInput({
        failOpen: true,
        share: { unhealthy: 5, targets: 5 },
        policy: aPolicy({ pauseAboveUnhealthyPercent: 100 }),
      }),
      step: "FailOpen",
      blockedReason: "FailOpen",
      reason: "the policy is failing open (no target both Healthy and kubelet-Ready): no replacement on mass evidence",
    },
    {
      name: "a pod of a suspect rollout is held with the rollout's reason, before the breaker",
      input: anInput({ share: { unhealthy: 3, targets: 5 }, pod: aPod({ rolloutSuspect: rollout }) }),
      step: "Rollout",
      blockedReason: "Rollout",
      reason: rollout,
    },
    {
      name: "the breaker comes before the pod's own checks: a bare pod above the threshold says MassFailure",
      input: anInput({ share: { unhealthy: 3, targets: 5 }, pod: aPod({ ownerReferences: [] }) }),
      step: "MassFailure",
      blockedReason: "MassFailure",
      reason: "3 of 5 targets (60%) are Unhealthy, above pauseAboveUnhealthyPercent=50: paused until the share falls",
    },
  ])("$name", ({ input, step, blockedReason, reason }) => {
    const d = shouldReplace(input);
    expect(d).toEqual({ eligible: false, step, blockedReason, reason });
  });

  it.each([
    { name: "exactly at the threshold (1 of 2, 50%)", share: { unhealthy: 1, targets: 2 }, pause: 50 },
    { name: "below a low threshold (1 of 10 with 10)", share: { unhealthy: 1, targets: 10 }, pause: 10 },
    { name: "all Unhealthy with the breaker off (100)", share: { unhealthy: 4, targets: 4 }, pause: 100 },
  ])("replaces $name", ({ share, pause }) => {
    expect(shouldReplace(anInput({ share, policy: aPolicy({ pauseAboveUnhealthyPercent: pause }) })).eligible).toBe(
      true,
    );
  });

  it("a pod not yet due reports its window, not the pause: the window keeps running during it", () => {
    const d = shouldReplace(
      anInput({ share: { unhealthy: 5, targets: 5 }, pod: aPod({ unhealthySince: NOW - 30 * MIN }) }),
    );
    expect(d).toMatchObject({ eligible: false, step: "Window", waitUntil: NOW + 30 * MIN });
  });
});

describe("planReplacements under the breaker", () => {
  const due = (i: number) =>
    aCandidate({ uid: `uid-${i}`, name: `web-${i}`, unhealthySince: NOW - 2 * HOUR_MS - i * MIN });
  it("holds every due pod with one MassFailure sentence, and no requeue: the share changes only with a transition", () => {
    const plan = planReplacements(
      aPlanInput({
        share: { unhealthy: 3, targets: 5 },
        candidates: [due(1), due(2), due(3)],
        policy: aPolicy({ maxPerHour: 10, maxPerDay: 10 }),
      }),
    );
    expect(plan.attempts).toEqual([]);
    expect(plan.requeueAt).toBeUndefined();
    expect(plan.condition).toEqual({
      blocked: true,
      reason: "MassFailure",
      message:
        "3 due replacements are waiting. web-3, web-2, web-1: 3 of 5 targets (60%) are Unhealthy, above pauseAboveUnhealthyPercent=50: paused until the share falls",
    });
  });

  it("resumes by itself: the same pods at 2 of 5 are replaced within the budget", () => {
    const plan = planReplacements(
      aPlanInput({
        share: { unhealthy: 2, targets: 5 },
        candidates: [due(1), due(2)],
        policy: aPolicy({ maxPerHour: 10, maxPerDay: 10 }),
      }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-2", "web-1"]);
  });
});

describe("another selecting policy's breaker pauses the pod too, as its budget would", () => {
  const tripped = { share: { unhealthy: 3, targets: 5 }, pauseAboveUnhealthyPercent: 50 };
  const input = (view: Parameters<typeof aView>[0]) =>
    anInput({
      otherViews: [aView({ policy: "ns/other", probing: true, replacementEnabled: true, state: "Unhealthy", ...view })],
      otherBudgets: [aBudget({ policy: "ns/other" })],
    });
  it.each([
    { name: "a probing, replacing policy above its threshold pauses it", view: { breaker: tripped }, paused: true },
    {
      name: "at its threshold it does not",
      view: { breaker: { share: { unhealthy: 1, targets: 2 }, pauseAboveUnhealthyPercent: 50 } },
      paused: false,
    },
    { name: "a policy not probing the pod has no say", view: { probing: false, breaker: tripped }, paused: false },
    {
      name: "a policy that does not replace (disabled or dryRun) has no say",
      view: { replacementEnabled: false, breaker: tripped },
      paused: false,
    },
    { name: "a policy whose share was not computed has no say", view: {}, paused: false },
  ])("$name", ({ view, paused }) => {
    const d = shouldReplace(input(view));
    if (!paused) return expect(d.eligible).toBe(true);
    expect(d).toEqual({
      eligible: false,
      step: "MassFailure",
      blockedReason: "MassFailure",
      reason:
        "policy ns/other, which also selects the pod, has 3 of 5 targets (60%) Unhealthy, above its pauseAboveUnhealthyPercent=50: paused until that share falls",
      // Its share can fall with no change to this policy's pods: looked at again.
      waitUntil: NOW + OTHER_BREAKER_RECHECK_MS,
    });
  });

  it("this policy's own breaker is named first", () => {
    const d = shouldReplace({ ...input({ breaker: tripped }), share: { unhealthy: 4, targets: 5 } });
    expect(d).toMatchObject({ step: "MassFailure", reason: expect.stringMatching(/^4 of 5 targets/) });
  });
});

describe("another selecting policy failing open or closed holds the pod back, whatever its dryRun or probing", () => {
  const input = (view: Parameters<typeof aView>[0]) =>
    anInput({
      otherViews: [aView({ policy: "ns/other", probing: true, replacementEnabled: true, state: "Unhealthy", ...view })],
      otherBudgets: [aBudget({ policy: "ns/other" })],
    });
  it.each([
    { name: "a replacing policy failing open", view: { outage: "FailOpen" as const }, step: "FailOpen", how: "open" },
    {
      name: "a replacing policy failing closed",
      view: { outage: "FailClosed" as const },
      step: "FailClosed",
      how: "closed",
    },
    {
      name: "a dryRun policy failing open (it only watches, but saw the outage)",
      view: { outage: "FailOpen" as const, replacementEnabled: false },
      step: "FailOpen",
      how: "open",
    },
    {
      name: "a policy failing open that does not probe the pod (its status says so)",
      view: { outage: "FailOpen" as const, probing: false },
      step: "FailOpen",
      how: "open",
    },
    { name: "a policy that is not failing open has nothing to hold", view: {}, step: undefined, how: "" },
  ])("$name", ({ view, step, how }) => {
    const d = shouldReplace(input(view));
    if (step === undefined) return expect(d.eligible).toBe(true);
    expect(d).toEqual({
      eligible: false,
      step,
      blockedReason: step,
      reason: `policy ns/other, which also selects the pod, is failing ${how} (no target both Healthy and kubelet-Ready): no replacement on mass evidence`,
      // Its outage can end with no change to this policy's pods: looked at again.
      waitUntil: NOW + OTHER_BREAKER_RECHECK_MS,
    });
  });

  it("this policy's own fail-open is named first", () => {
    const d = shouldReplace({ ...input({ outage: "FailClosed" }), failOpen: true });
    expect(d).toMatchObject({ step: "FailOpen", reason: expect.stringMatching(/^the policy is failing open/) });
  });
});
