import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { planGateDrain, type GateDrainInput, type GateDrainPod } from "./gate-plan.js";
import { T0 } from "./testing/builders.js";

const podArb = fc.record({
  state: fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const),
  unhealthySince: fc.integer({ min: T0, max: T0 + 1500 }),
  gated: fc.boolean(),
  readyBesidesGate: fc.boolean(),
  known: fc.boolean(),
  gateStatus: fc.constantFrom(undefined, "True", "False"),
  lastResultAt: fc.option(fc.integer({ min: T0, max: T0 + 10_000 }), { nil: undefined }),
});

const inputArb: fc.Arbitrary<GateDrainInput> = fc
  .record({
    pods: fc.array(podArb, { maxLength: 30 }),
    maxUnhealthyPercent: fc.integer({ min: 1, max: 100 }),
    drainEnabled: fc.boolean(),
    dryRun: fc.boolean(),
    recoveredAt: fc.option(fc.integer({ min: T0, max: T0 + 10_000 }), { nil: undefined }),
  })
  .map(({ pods, recoveredAt, ...rest }) => ({
    ...rest,
    ...(recoveredAt === undefined ? {} : { recoveredAt }),
    pods: pods.map((p, i): GateDrainPod => {
      const out: GateDrainPod = {
        uid: `uid-${i}`,
        name: `pod-${i % 7}`,
        state: p.state,
        gated: p.gated,
        readyBesidesGate: p.readyBesidesGate,
        // The kubelet's Ready: ready but for the gate, and the gate True when the pod has it.
        podReady: p.readyBesidesGate && (!p.gated || p.gateStatus === "True"),
        known: p.known,
      };
      if (p.gated && p.gateStatus !== undefined) out.condition = { status: p.gateStatus };
      if (p.state === "Unhealthy") out.unhealthySince = p.unhealthySince;
      if (p.lastResultAt !== undefined) out.lastResultAt = p.lastResultAt;
      return out;
    }),
  }));

/** Each pod's Ready once the planned conditions are written (the kubelet's rule with the gate). */
function readyAfter(input: GateDrainInput): Map<string, boolean> {
  const { gate } = planGateDrain(input);
  const written = new Map(gate.patches.map((p) => [p.uid, p.condition.status]));
  return new Map(
    input.pods.map((p) => [
      p.uid,
      p.readyBesidesGate && (!p.gated || (written.get(p.uid) ?? p.condition?.status) === "True"),
    ]),
  );
}

const RUNS = { numRuns: 500 };

describe("the ReadinessGate method keeps the contract's safety rules over the selected pods", () => {
  it("never dark: when a pod is ready but for the gate, some pod is Ready once the conditions are written", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        // dryRun writes nothing: what was dark before stays as it was.
        fc.pre(!input.dryRun && input.pods.some((p) => p.readyBesidesGate));
        expect([...readyAfter(input).values()].some(Boolean)).toBe(true);
      }),
      RUNS,
    );
  });

  it("the cap: at most floor(pods × maxUnhealthyPercent / 100) pods ready but for the gate are held out by it, warm-up aside", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        // dryRun writes nothing: pods stay as they were.
        fc.pre(!input.dryRun);
        const { drain } = planGateDrain(input);
        const ready = readyAfter(input);
        const warmUp = new Set(drain.warmUp);
        const heldOut = input.pods.filter(
          (p) => p.gated && p.readyBesidesGate && !ready.get(p.uid) && !warmUp.has(p.uid),
        );
        expect(heldOut.length).toBeLessThanOrEqual(Math.floor((input.pods.length * input.maxUnhealthyPercent) / 100));
        expect(drain.drainedCount).toBe([...drain.decisions.values()].filter((d) => d.drained).length);
      }),
      RUNS,
    );
  });

  it("fail open: when no pod is Healthy and ready but for the gate, no pod is held out", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(!input.dryRun && !input.pods.some((p) => p.state === "Healthy" && p.readyBesidesGate));
        const ready = readyAfter(input);
        expect(input.pods.filter((p) => p.readyBesidesGate && !ready.get(p.uid))).toEqual([]);
      }),
      RUNS,
    );
  });

  it("adoption is free: a serving pod that is Unknown is never held out", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        fc.pre(!input.dryRun);
        const ready = readyAfter(input);
        for (const p of input.pods) {
          const serving = p.gated
            ? p.condition?.status === "True" || (p.condition === undefined && p.readyBesidesGate && !p.known)
            : p.podReady;
          if (serving && p.state === "Unknown" && p.readyBesidesGate) expect(ready.get(p.uid)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it("writes only conditions that change, and never on a pod without the gate", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const { gate } = planGateDrain(input);
        const byUid = new Map(input.pods.map((p) => [p.uid, p]));
        for (const patch of gate.patches) {
          const pod = byUid.get(patch.uid)!;
          expect(pod.gated).toBe(true);
          expect(
            pod.condition?.status === patch.condition.status &&
              pod.condition.reason === patch.condition.reason &&
              pod.condition.message === patch.condition.message,
          ).toBe(false);
        }
        if (input.dryRun) expect(gate.patches).toEqual([]);
      }),
      RUNS,
    );
  });
});
