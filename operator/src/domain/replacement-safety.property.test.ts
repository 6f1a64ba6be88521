// Safety properties of the replacement plan over random pods and policies: never during
// fail-open, never above the mass-failure breaker's threshold, never without fresh evidence, never a bare, mirror or terminating pod, and
// only a probing policy has a say.
import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { HOUR_MS } from "./budget.js";
import {
  planReplacements,
  type OtherPolicyView,
  type PlanReplacementsInput,
  type ReplacementCandidate,
} from "./replacement.js";
import { aPolicy, MIN, NOW } from "./testing/replacement-builders.js";

const OTHERS = ["shop/a", "shop/b"];

const viewArb = (policy: string): fc.Arbitrary<OtherPolicyView> =>
  fc.record({
    policy: fc.constant(policy),
    probing: fc.boolean(),
    replacementEnabled: fc.boolean(),
    state: fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const),
    unhealthySince: fc.integer({ min: NOW - 3 * HOUR_MS, max: NOW }),
    afterMs: fc.constantFrom(MIN, HOUR_MS),
  });

const ownerArb = fc.constantFrom(
  [{ kind: "ReplicaSet", name: "web", controller: true }],
  [{ kind: "ReplicaSet", name: "web", controller: true }],
  [{ kind: "StatefulSet", name: "db", controller: true }],
  [{ kind: "Node", name: "node-1", controller: true }],
  [{ kind: "ReplicaSet", name: "web", controller: false }],
  [],
);

const candidateArb = (i: number): fc.Arbitrary<ReplacementCandidate> =>
  fc
    .record(
      {
        state: fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const, "Unhealthy" as const),
        unhealthySince: fc.integer({ min: NOW - 3 * HOUR_MS, max: NOW }),
        ownerReferences: ownerArb,
        terminating: fc.oneof(
          { weight: 4, arbitrary: fc.constant(false) },
          { weight: 1, arbitrary: fc.constant(true) },
        ),
        probingSince: fc.integer({ min: NOW - 2 * HOUR_MS, max: NOW }),
        lastResultAt: fc.integer({ min: NOW - 2 * HOUR_MS, max: NOW }),
        otherViews: fc.tuple(...OTHERS.map(viewArb)).chain((views) => fc.subarray(views)),
      },
      { requiredKeys: ["state", "ownerReferences", "terminating", "probingSince", "otherViews"] },
    )
    .map((c) => ({ ...c, uid: `uid-${i}`, name: `web-${i}` }));

const inputArb: fc.Arbitrary<PlanReplacementsInput> = fc
  .record({
    count: fc.integer({ min: 1, max: 6 }),
    // Targets that are not candidates (Healthy or Unknown pods), and Unhealthy ones the policy cannot replace.
    others: fc.integer({ min: 0, max: 12 }),
    failOpen: fc.boolean(),
    afterMs: fc.constantFrom(MIN, HOUR_MS),
    pauseAbove: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom(33, 50, 100, 100)),
  })
  .chain(({ count, others, failOpen, afterMs, pauseAbove }) =>
    fc.tuple(...Array.from({ length: count }, (_, i) => candidateArb(i))).map((candidates) => ({
      now: NOW,
      failOpen,
      share: { unhealthy: candidates.filter((c) => c.state === "Unhealthy").length, targets: count + others },
      policy: aPolicy({ afterMs, maxPerHour: 100, maxPerDay: 1000, pauseAboveUnhealthyPercent: pauseAbove }),
      candidates,
      otherPolicies: OTHERS.map((policy) => ({ policy, maxPerHour: 100, maxPerDay: 1000, ledger: [] })),
      operatorLedger: [],
      max12h: 100,
    })),
  );

const RUNS = { numRuns: 500 };

describe("planReplacements safety", () => {
  it("never replaces while the policy fails open", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        expect(planReplacements({ ...input, failOpen: true }).attempts).toEqual([]);
      }),
      RUNS,
    );
  });

  it("never replaces while more than pauseAboveUnhealthyPercent of the targets is Unhealthy", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const { unhealthy, targets } = input.share;
        const plan = planReplacements(input);
        if (unhealthy * 100 > input.policy.pauseAboveUnhealthyPercent * targets) {
          expect(plan.attempts).toEqual([]);
          for (const b of plan.blocked.filter((x) => x.blockedReason !== undefined))
            expect(["Rollout", "MassFailure"]).toContain(b.blockedReason);
        }
      }),
      RUNS,
    );
  });

  it("at or below the threshold the breaker changes nothing", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const { unhealthy, targets } = input.share;
        fc.pre(unhealthy * 100 <= input.policy.pauseAboveUnhealthyPercent * targets);
        const off = { ...input, policy: { ...input.policy, pauseAboveUnhealthyPercent: 100 } };
        expect(planReplacements(input)).toEqual(planReplacements(off));
      }),
      RUNS,
    );
  });

  it("never replaces without a result newer than the last start of probing", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const byUid = new Map(input.candidates.map((c) => [c.uid, c]));
        for (const a of planReplacements(input).attempts) {
          const c = byUid.get(a.podUid)!;
          expect(c.lastResultAt).toBeDefined();
          expect(c.lastResultAt!).toBeGreaterThan(c.probingSince);
        }
      }),
      RUNS,
    );
  });

  it("never replaces a bare, mirror or terminating pod", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const byUid = new Map(input.candidates.map((c) => [c.uid, c]));
        for (const a of planReplacements(input).attempts) {
          const c = byUid.get(a.podUid)!;
          const controller = (c.ownerReferences ?? []).find((r) => r.controller === true);
          expect(controller).toBeDefined();
          expect(controller!.kind).not.toBe("Node");
          expect(c.terminating).toBe(false);
        }
      }),
      RUNS,
    );
  });

  it("gives a policy that is not probing the pod no say: its view changes nothing", () => {
    fc.assert(
      fc.property(
        inputArb,
        fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const),
        (input, state) => {
          const rewritten = {
            ...input,
            candidates: input.candidates.map((c) => ({
              ...c,
              otherViews: c.otherViews.map((v) => (v.probing ? v : { ...v, state, replacementEnabled: true })),
            })),
          };
          expect(planReplacements(rewritten).attempts).toEqual(planReplacements(input).attempts);
        },
      ),
      RUNS,
    );
  });
});

it("the random plans above do replace pods, so the properties are not vacuous", () => {
  const attempts = fc
    .sample(inputArb, { numRuns: 1000, seed: 1 })
    .map((input) => planReplacements(input).attempts.length);
  expect(attempts.filter((n) => n > 0).length).toBeGreaterThan(10);
});

it("the breaker holds plans that would otherwise replace pods, so its property is not vacuous", () => {
  const held = fc.sample(inputArb, { numRuns: 1000, seed: 2 }).filter((input) => {
    const above = input.share.unhealthy * 100 > input.policy.pauseAboveUnhealthyPercent * input.share.targets;
    const off = { ...input, policy: { ...input.policy, pauseAboveUnhealthyPercent: 100 } };
    return above && planReplacements(off).attempts.length > 0;
  });
  expect(held.length).toBeGreaterThan(10);
});
