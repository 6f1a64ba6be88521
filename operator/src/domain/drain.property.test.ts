import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { planDrain, type DrainInput, type DrainPlan, type DrainTarget } from "./drain.js";
import { T0 } from "./testing/builders.js";

const aTargetArb: fc.Arbitrary<Omit<DrainTarget, "uid" | "name">> = fc.record(
  {
    state: fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const),
    // A small range over two seconds, so ties in the unhealthy second happen often.
    unhealthySince: fc.integer({ min: T0, max: T0 + 1500 }),
    kubeletReady: fc.boolean(),
    serving: fc.boolean(),
    outOfRotation: fc.boolean(),
    lastResultAt: fc.integer({ min: T0, max: T0 + 10_000 }),
    notProbed: fc.constant('no TCP container port named "http" in the pod'),
    quarantine: fc.constant({
      until: T0 + 60_000,
      flaps: 3,
      reason: "quarantined: 3 flaps in 10m, back at 2026-01-01T00:01:00Z",
    }),
  },
  { requiredKeys: ["state", "unhealthySince", "kubeletReady", "serving"] },
);

const inputArb: fc.Arbitrary<DrainInput> = fc
  .record({
    targets: fc.array(aTargetArb, { maxLength: 40 }),
    // Names may repeat (different namespaces never mix, but the code must not rely on it).
    names: fc.array(fc.constantFrom("a", "b", "c", "d", "e"), { minLength: 40, maxLength: 40 }),
    maxUnhealthyPercent: fc.integer({ min: 1, max: 100 }),
    drainEnabled: fc.boolean(),
    dryRun: fc.boolean(),
    recoveredAt: fc.option(fc.integer({ min: T0, max: T0 + 10_000 }), { nil: undefined }),
    whenAllUnhealthy: fc.option(fc.constantFrom("FailOpen" as const, "FailClosed" as const), { nil: undefined }),
  })
  .map(({ targets, names, recoveredAt, whenAllUnhealthy, ...rest }) => ({
    ...rest,
    ...(recoveredAt === undefined ? {} : { recoveredAt }),
    ...(whenAllUnhealthy === undefined ? {} : { whenAllUnhealthy }),
    targets: targets.map((t, i) => ({
      ...t,
      uid: `uid-${i}`,
      name: names[i]!,
      ...(t.state === "Unhealthy" ? {} : { unhealthySince: undefined }),
    })),
  }));

const activeArb = inputArb.map((input) => ({ ...input, dryRun: false, drainEnabled: true }));

const drained = (plan: DrainPlan) => [...plan.decisions.values()].filter((d) => d.drained).length;
const routed = (t: DrainTarget) => (t.notProbed !== undefined ? "Unknown" : t.state);
const isWarmUp = (t: DrainTarget) => routed(t) === "Unknown" && !t.serving;
/** The verdict is from before the recovery: neither its latest result nor its turn to Unhealthy is newer. */
const awaitsFresh = (t: DrainTarget, input: DrainInput) =>
  input.recoveredAt !== undefined &&
  t.serving &&
  Math.max(t.lastResultAt ?? -Infinity, t.unhealthySince ?? -Infinity) <= input.recoveredAt;
const RUNS = { numRuns: 500 };
const failsClosed = (input: DrainInput) => input.whenAllUnhealthy === "FailClosed";
const healthyServes = (input: DrainInput) => input.targets.some((t) => t.kubeletReady && routed(t) === "Healthy");

describe("planDrain safety invariants", () => {
  it("never dark: when a target is kubelet-Ready, some kubelet-Ready target is admitted, unless the policy fails closed with no Healthy target", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(input.targets.some((t) => t.kubeletReady));
        fc.pre(!failsClosed(input) || healthyServes(input));
        const plan = planDrain(input);
        expect(input.targets.some((t) => t.kubeletReady && plan.decisions.get(t.uid)!.admitted)).toBe(true);
      }),
      RUNS,
    );
  });

  it("FailClosed is the only way to go dark, and only when no kubelet-Ready target is Healthy", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain(input);
        const dark =
          input.targets.some((t) => t.kubeletReady) &&
          !input.targets.some((t) => t.kubeletReady && plan.decisions.get(t.uid)!.admitted);
        if (dark) {
          expect(failsClosed(input)).toBe(true);
          expect(healthyServes(input)).toBe(false);
          expect(plan.failClosed).toBe(true);
        }
        expect(plan.failClosed).toBe(failsClosed(input) && input.targets.length > 0 && !healthyServes(input));
        expect(plan.failOpen && plan.failClosed).toBe(false);
      }),
      RUNS,
    );
  });

  it("FailClosed drains every kubelet-Ready Unhealthy pod when no target is Healthy, and nothing else", () => {
    fc.assert(
      fc.property(activeArb, (input) => {
        const plan = planDrain({ ...input, whenAllUnhealthy: "FailClosed" });
        fc.pre(plan.failClosed);
        for (const t of input.targets)
          expect(plan.decisions.get(t.uid)!.drained).toBe(t.kubeletReady && routed(t) === "Unhealthy");
        expect(plan.capped).toEqual([]);
        expect(plan.recheck).toEqual([]);
        expect(plan.quarantined).toEqual([]);
      }),
      RUNS,
    );
  });

  it("the cap: at most floor(targets × maxUnhealthyPercent / 100) kubelet-Ready pods kept out, warm-up aside, quarantined ones included, unless failing closed", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain(input);
        fc.pre(!plan.failClosed);
        const keptOut = input.targets.filter(
          (t) => t.kubeletReady && !isWarmUp(t) && !plan.decisions.get(t.uid)!.admitted,
        );
        expect(keptOut.length).toBeLessThanOrEqual(
          Math.floor((input.targets.length * input.maxUnhealthyPercent) / 100),
        );
        expect(drained(plan)).toBe(plan.drainedCount);
        expect(plan.drainedCount).toBe(plan.mode === "active" ? keptOut.length : 0);
      }),
      RUNS,
    );
  });

  it("adoption is free: a serving pod that is Unknown or not probed is never taken out, unless it is in flap quarantine", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain(input);
        // A quarantined pod is not one the operator knows nothing of: its flaps are on record, and
        // quarantine holds it out within the cap (the quarantine property below pins that).
        for (const t of input.targets)
          if (t.serving && routed(t) === "Unknown" && t.quarantine === undefined)
            expect(plan.decisions.get(t.uid)!.admitted).toBe(true);
      }),
      RUNS,
    );
  });

  it("warm-up pods are never counted in the cap: their kubelet readiness changes no other decision", () => {
    fc.assert(
      fc.property(activeArb, (input) => {
        const flipped = {
          ...input,
          targets: input.targets.map((t) => (isWarmUp(t) ? { ...t, kubeletReady: !t.kubeletReady } : t)),
        };
        const a = planDrain(input);
        const b = planDrain(flipped);
        expect(b.wouldDrain).toEqual(a.wouldDrain);
        expect(b.capped).toEqual(a.capped);
        expect(a.warmUp).toEqual(
          input.targets
            .filter(isWarmUp)
            .map((t) => t.uid)
            .sort(),
        );
        for (const uid of a.warmUp) expect(a.decisions.get(uid)!.drained).toBe(false);
      }),
      RUNS,
    );
  });

  it("fail open: when no target is both kubelet-Ready and Healthy, every target is admitted", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(!healthyServes(input) && !failsClosed(input));
        const plan = planDrain(input);
        expect(plan.failOpen).toBe(input.targets.length > 0);
        expect(plan.drainedCount).toBe(0);
        expect([...plan.decisions.values()].every((d) => d.admitted && !d.drained)).toBe(true);
      }),
      RUNS,
    );
  });

  it("never drains a single-target policy that fails open", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain({ ...input, targets: input.targets.slice(0, 1), whenAllUnhealthy: "FailOpen" });
        expect(plan.drainedCount).toBe(0);
        expect([...plan.decisions.values()].every((d) => d.admitted)).toBe(true);
      }),
      RUNS,
    );
  });

  it("drains nothing and admits everything in dryRun or with drain disabled", () => {
    fc.assert(
      fc.property(inputArb, fc.boolean(), (input, viaDryRun) => {
        const plan = planDrain(
          viaDryRun ? { ...input, dryRun: true } : { ...input, dryRun: false, drainEnabled: false },
        );
        expect(plan.drainedCount).toBe(0);
        expect([...plan.decisions.values()].every((d) => d.admitted && !d.drained)).toBe(true);
      }),
      RUNS,
    );
  });

  it("only drains kubelet-Ready Unhealthy pods with a result newer than the recovery", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const plan = planDrain(input);
        for (const t of input.targets) {
          const d = plan.decisions.get(t.uid)!;
          if (d.drained && routed(t) !== "Unhealthy") {
            // Held out by quarantine: a Healthy pod, or an Unknown one in rotation.
            expect(t.quarantine).toBeDefined();
            expect(routed(t) === "Healthy" || t.serving).toBe(true);
            expect(plan.quarantined).toContain(t.uid);
          }
          if (d.drained) {
            expect(t.kubeletReady).toBe(true);
            if (routed(t) === "Unhealthy" && !plan.failClosed) expect(awaitsFresh(t, input)).toBe(false);
          }
          if (t.kubeletReady && routed(t) === "Healthy" && t.quarantine === undefined) expect(d.admitted).toBe(true);
          if (plan.mode === "active" && !plan.failOpen && isWarmUp(t)) expect(d.admitted).toBe(false);
          if (t.kubeletReady && routed(t) === "Unhealthy") expect(d.admitted).toBe(!d.drained);
          expect(d.admitted && d.drained).toBe(false);
        }
        if (!plan.failOpen && !plan.failClosed && plan.mode !== "disabled") {
          const rechecked = input.targets.filter(
            (t) => routed(t) === "Unhealthy" && t.kubeletReady && awaitsFresh(t, input),
          );
          expect(plan.recheck).toEqual(rechecked.map((t) => t.uid).sort());
        }
      }),
      RUNS,
    );
  });

  it("drains as many as the cap allows when a kubelet-Ready Healthy target exists", () => {
    fc.assert(
      fc.property(activeArb, (input) => {
        fc.pre(input.targets.some((t) => t.kubeletReady && routed(t) === "Healthy"));
        const plan = planDrain(input);
        const eligible = input.targets.filter(
          (t) => routed(t) === "Unhealthy" && t.kubeletReady && !awaitsFresh(t, input),
        ).length;
        expect(plan.wouldDrain.length).toBe(Math.min(eligible, plan.allowed));
        expect(plan.capped.length).toBe(eligible - plan.wouldDrain.length);
        expect(plan.drainedCount).toBe(plan.wouldDrain.length + plan.quarantined.length);
      }),
      RUNS,
    );
  });

  it("numbers the drained pods in drain order, no capped pod unhealthy since an earlier second", () => {
    fc.assert(
      fc.property(activeArb, (input) => {
        const plan = planDrain(input);
        fc.pre(!plan.failClosed);
        const byUid = new Map(input.targets.map((t) => [t.uid, t]));
        const second = (uid: string) => Math.floor(byUid.get(uid)!.unhealthySince! / 1000);
        const numbered = plan.wouldDrain
          .map((uid) => ({ uid, n: Number(/, (\d+) of /.exec(plan.decisions.get(uid)!.reason)![1]) }))
          .sort((a, b) => a.n - b.n);
        expect(numbered.map((x) => x.n)).toEqual(numbered.map((_, i) => i + 1));
        for (let i = 1; i < numbered.length; i++)
          expect(second(numbered[i - 1]!.uid)).toBeLessThanOrEqual(second(numbered[i]!.uid));
        const last = numbered.at(-1);
        if (last) for (const uid of plan.capped) expect(second(uid)).toBeGreaterThanOrEqual(second(last.uid));
      }),
      RUNS,
    );
  });

  it("quarantine holds a pod out only within the cap left by the Unhealthy pods, and while an unquarantined Healthy pod serves", () => {
    fc.assert(
      fc.property(activeArb, (input) => {
        const plan = planDrain(input);
        fc.pre(!plan.failClosed);
        expect(plan.wouldDrain.length + plan.quarantined.length).toBeLessThanOrEqual(plan.allowed);
        if (plan.quarantined.length > 0) {
          expect(
            input.targets.some(
              (t) =>
                t.kubeletReady &&
                routed(t) === "Healthy" &&
                t.quarantine === undefined &&
                plan.decisions.get(t.uid)!.admitted,
            ),
          ).toBe(true);
        }
        // A quarantined pod is kept only when the cap is full or no other Healthy pod serves.
        if (
          plan.quarantineKept.length > 0 &&
          input.targets.some((t) => t.kubeletReady && routed(t) === "Healthy" && !t.quarantine)
        ) {
          expect(plan.wouldDrain.length + plan.quarantined.length).toBe(plan.allowed);
        }
      }),
      RUNS,
    );
  });

  it("is deterministic and independent of the order of its input", () => {
    fc.assert(
      fc.property(
        inputArb.chain((input) =>
          fc.tuple(fc.constant(input), fc.shuffledSubarray([...input.targets], { minLength: input.targets.length })),
        ),
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
