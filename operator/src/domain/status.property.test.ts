import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { computeStatus, statusEqual, MAX_STATUS_PODS, type StatusInput } from "./status.js";
import { planDrain } from "./drain.js";
import { HOUR, T0 } from "./testing/builders.js";

const inputArb: fc.Arbitrary<StatusInput> = fc
  .record({
    pods: fc.array(
      fc.record({
        state: fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const),
        since: fc.integer({ min: T0, max: T0 + HOUR }),
        replaceAfter: fc.option(fc.integer({ min: T0, max: T0 + 2 * HOUR }), { nil: undefined }),
      }),
      { maxLength: 1300, size: "max" },
    ),
    maxUnhealthyPercent: fc.integer({ min: 1, max: 100 }),
    dryRun: fc.boolean(),
    now: fc.integer({ min: T0 + HOUR, max: T0 + 3 * HOUR }),
    ready: fc.constantFrom("Reconciled" as const, "InvalidSpec" as const, "NotSynced" as const),
    blocked: fc.boolean(),
  })
  .map(({ pods, maxUnhealthyPercent, dryRun, now, ready, blocked }) => {
    const targets = pods.map((p, i) => ({
      uid: `uid-${i}`,
      name: `web-${i % 97}`,
      state: p.state,
      kubeletReady: true,
      serving: p.state !== "Unknown",
      ...(p.state === "Unhealthy" ? { unhealthySince: p.since } : {}),
    }));
    const drain = planDrain({ targets, maxUnhealthyPercent, drainEnabled: true, dryRun });
    return {
      generation: 2,
      now,
      readiness: { reason: ready },
      drain,
      replacementBlocked: { blocked, reason: "Budget" as const },
      pods: pods.map((p, i) => ({
        name: targets[i]!.name,
        uid: targets[i]!.uid,
        ip: `10.0.${i >> 8}.${i & 255}`,
        health: { state: p.state, since: p.since, ...(p.state === "Unhealthy" ? { unhealthySince: p.since } : {}) },
        decision: drain.decisions.get(targets[i]!.uid)!,
        ...(p.replaceAfter !== undefined ? { replaceAfter: p.replaceAfter } : {}),
      })),
    };
  });

// Inputs reach past 1000 pods, where shrinking a counterexample would take minutes:
// a failure is reported as found (endOnFailure).
describe("computeStatus invariants", () => {
  it("is idempotent, bounded to 1000 pods and counts every target once", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const a = computeStatus(input);
        expect(computeStatus(input)).toEqual(a);
        expect(a.pods.length).toBeLessThanOrEqual(MAX_STATUS_PODS);
        expect(a.pods.length).toBe(Math.min(input.pods.length, MAX_STATUS_PODS));
        expect(a.healthy + a.unhealthy + a.unknown).toBe(a.targets);
        expect(a.targets).toBe(input.pods.length);
        // Non-Healthy pods are never pushed out by Healthy ones.
        const shownNonHealthy = a.pods.filter((p) => p.state !== "Healthy").length;
        expect(shownNonHealthy).toBe(Math.min(a.unhealthy + a.unknown, MAX_STATUS_PODS));
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });

  it("needs no write when recomputed later from unchanged inputs and its own previous status", () => {
    fc.assert(
      fc.property(inputArb, fc.integer({ min: 1, max: HOUR }), (input, later) => {
        const written = JSON.parse(JSON.stringify(computeStatus(input)));
        const again = computeStatus({ ...input, previous: written, now: input.now + later });
        // Only replacedInLastDay depends on now; the inputs here carry no ledger.
        expect(statusEqual(written, again)).toBe(true);
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });
});
