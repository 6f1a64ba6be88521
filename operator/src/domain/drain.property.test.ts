import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { planDrain, type DrainInput, type DrainPlan, type DrainTarget } from "./drain.js";
import { T0 } from "./testing/builders.js";

const aTargetArb: fc.Arbitrary<Omit<DrainTarget, "uid" | "name">> = fc.record({
  state: fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const),
  // A small range so ties in unhealthySince happen often.
  unhealthySince: fc.integer({ min: T0, max: T0 + 5 }),
  kubeletReady: fc.boolean(),
});

const inputArb: fc.Arbitrary<DrainInput> = fc
  .record({
    targets: fc.array(aTargetArb, { maxLength: 40 }),
    // Names may repeat (different namespaces never mix, but the code must not rely on it).
    names: fc.array(fc.constantFrom("a", "b", "c", "d", "e"), { minLength: 40, maxLength: 40 }),
    maxUnhealthyPercent: fc.integer({ min: 1, max: 100 }),
    drainEnabled: fc.boolean(),
    dryRun: fc.boolean(),
  })
  .map(({ targets, names, ...rest }) => ({
    ...rest,
    targets: targets.map((t, i) => ({
      ...t,
      uid: `uid-${i}`,
      name: names[i]!,
      ...(t.state === "Unhealthy" ? {} : { unhealthySince: undefined }),
    })),
  }));

const drained = (plan: DrainPlan) => [...plan.decisions.values()].filter((d) => d.drained).length;

describe("planDrain safety invariants", () => {
  it("never drains more than floor(targets × maxUnhealthyPercent / 100)", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain(input);
        expect(drained(plan)).toBe(plan.drainedCount);
        expect(plan.drainedCount).toBeLessThanOrEqual(Math.floor((input.targets.length * input.maxUnhealthyPercent) / 100));
      }),
      { numRuns: 500 },
    );
  });

  it("drains nothing when no target is Healthy", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(!input.targets.some((t) => t.state === "Healthy"));
        const plan = planDrain(input);
        expect(plan.drainedCount).toBe(0);
        expect([...plan.decisions.values()].every((d) => d.admitted)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("never drains a single-target policy", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain({ ...input, targets: input.targets.slice(0, 1) });
        expect(plan.drainedCount).toBe(0);
        expect([...plan.decisions.values()].every((d) => d.admitted)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("drains nothing and admits everything in dryRun or with drain disabled", () => {
    fc.assert(
      fc.property(inputArb, fc.boolean(), (input, viaDryRun) => {
        const plan = planDrain(viaDryRun ? { ...input, dryRun: true } : { ...input, dryRun: false, drainEnabled: false });
        expect(plan.drainedCount).toBe(0);
        expect([...plan.decisions.values()].every((d) => d.admitted && !d.drained)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("only drains Unhealthy pods, and keeps every undrained Unhealthy pod in rotation", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain(input);
        for (const t of input.targets) {
          const d = plan.decisions.get(t.uid)!;
          if (d.drained) expect(t.state).toBe("Unhealthy");
          if (t.state === "Healthy") expect(d.admitted).toBe(true);
          if (plan.mode === "active" && !plan.failOpen && t.state === "Unknown") expect(d.admitted).toBe(false);
          // An Unhealthy pod is either drained or kept in rotation, never left half-way.
          if (t.state === "Unhealthy") expect(d.admitted).toBe(!d.drained);
          expect(d.admitted && d.drained).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("drains as many as the cap allows when a Healthy target exists and drain is active", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(input.targets.some((t) => t.state === "Healthy"));
        const plan = planDrain({ ...input, dryRun: false, drainEnabled: true });
        const unhealthy = input.targets.filter((t) => t.state === "Unhealthy").length;
        expect(plan.drainedCount).toBe(Math.min(unhealthy, plan.allowed));
        expect(plan.capped.length).toBe(unhealthy - plan.drainedCount);
      }),
      { numRuns: 300 },
    );
  });

  it("is deterministic and independent of the order of its input", () => {
    fc.assert(
      fc.property(
        inputArb.chain((input) => fc.tuple(fc.constant(input), fc.shuffledSubarray([...input.targets], { minLength: input.targets.length }))),
        ([input, shuffled]) => {
          const a = planDrain(input);
          const b = planDrain({ ...input, targets: shuffled });
          expect([...b.decisions.entries()]).toEqual([...a.decisions.entries()]);
          expect(b).toEqual(a);
          expect(planDrain(input)).toEqual(a);
        },
      ),
      { numRuns: 300 },
    );
  });
});
