import { describe, it, expect } from "@jest/globals";
import { planDrain, type DrainInput } from "./drain.js";
import { aTarget, someTargets, MINUTE, T0 } from "./testing/builders.js";

const active = (targets: DrainInput["targets"], maxUnhealthyPercent = 50): DrainInput => ({
  targets,
  maxUnhealthyPercent,
  drainEnabled: true,
  dryRun: false,
});

function reasons(input: DrainInput): Record<string, string> {
  const plan = planDrain(input);
  return Object.fromEntries(input.targets.map((t) => [t.name, plan.decisions.get(t.uid)?.reason ?? "none"]));
}

describe("planDrain", () => {
  it("admits Healthy pods and drains an Unhealthy one within the cap", () => {
    const plan = planDrain(active(someTargets("Healthy", "Unhealthy", "Healthy", "Healthy")));
    expect(plan.decisions.get("uid-web-0")).toEqual({ admitted: true, drained: false, reason: "admitted: healthy" });
    expect(plan.decisions.get("uid-web-1")).toEqual({
      admitted: false,
      drained: true,
      reason: "drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
    });
    expect(plan).toMatchObject({ allowed: 2, drainedCount: 1, capped: [], failOpen: false, mode: "active" });
  });

  it("does not admit an Unknown pod while another target is Healthy", () => {
    const plan = planDrain(active(someTargets("Healthy", "Unknown")));
    expect(plan.decisions.get("uid-web-1")).toEqual({ admitted: false, drained: false, reason: "not admitted: unknown, waiting for first success" });
    expect(plan.drainedCount).toBe(0);
  });

  it("drains the longest-unhealthy first and keeps the rest in rotation over the cap", () => {
    const targets = [
      aTarget({ name: "a", state: "Unhealthy", unhealthySince: T0 + 3 * MINUTE }),
      aTarget({ name: "b", state: "Unhealthy", unhealthySince: T0 + 1 * MINUTE }),
      aTarget({ name: "c", state: "Unhealthy", unhealthySince: T0 + 2 * MINUTE }),
      aTarget({ name: "d", state: "Healthy" }),
    ];
    const plan = planDrain(active(targets));
    expect(reasons(active(targets))).toEqual({
      a: "kept: over the cap, 2 of 2 allowed by maxUnhealthyPercent=50 already drained",
      b: "drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
      c: "drained: longest unhealthy, 2 of 2 allowed by maxUnhealthyPercent=50",
      d: "admitted: healthy",
    });
    expect(plan.capped).toEqual(["uid-a"]);
    expect(plan.decisions.get("uid-a")?.admitted).toBe(true);
  });

  it("breaks ties in unhealthySince by name", () => {
    const targets = [
      aTarget({ name: "z", state: "Unhealthy", unhealthySince: T0 }),
      aTarget({ name: "m", state: "Unhealthy", unhealthySince: T0 }),
      aTarget({ name: "h1", state: "Healthy" }),
      aTarget({ name: "h2", state: "Healthy" }),
    ];
    const plan = planDrain(active(targets, 25));
    expect(plan.decisions.get("uid-m")?.drained).toBe(true);
    expect(plan.decisions.get("uid-z")?.drained).toBe(false);
  });

  it.each([
    { name: "keeps the pod already out of rotation drained when a newcomer ties with it (no swap)", zOut: true, mOut: false, drained: "z" },
    { name: "falls back to the name when neither tied pod is out of rotation yet", zOut: false, mOut: false, drained: "m" },
    { name: "falls back to the name when both tied pods are out of rotation", zOut: true, mOut: true, drained: "m" },
  ])("$name", ({ zOut, mOut, drained }) => {
    const targets = [
      aTarget({ name: "z", state: "Unhealthy", unhealthySince: T0, outOfRotation: zOut }),
      aTarget({ name: "m", state: "Unhealthy", unhealthySince: T0, outOfRotation: mOut }),
      aTarget({ name: "h1", state: "Healthy" }),
      aTarget({ name: "h2", state: "Healthy" }),
    ];
    const plan = planDrain(active(targets, 25));
    expect(["z", "m"].filter((n) => plan.decisions.get(`uid-${n}`)?.drained)).toEqual([drained]);
  });

  it("still drains the longer-unhealthy pod first, whatever is out of rotation", () => {
    const targets = [
      aTarget({ name: "a", state: "Unhealthy", unhealthySince: T0 + 1000, outOfRotation: true }),
      aTarget({ name: "b", state: "Unhealthy", unhealthySince: T0, outOfRotation: false }),
      aTarget({ name: "h1", state: "Healthy" }),
      aTarget({ name: "h2", state: "Healthy" }),
    ];
    const plan = planDrain(active(targets, 25));
    expect(["a", "b"].filter((n) => plan.decisions.get(`uid-${n}`)?.drained)).toEqual(["b"]);
  });

  const capCases = [
    { name: "rounds the cap down (3 targets at 50% allow 1)", states: ["Healthy", "Unhealthy", "Unhealthy"] as const, pct: 50, allowed: 1, drained: 1 },
    { name: "allows nothing when the cap rounds to zero", states: ["Healthy", "Unhealthy"] as const, pct: 49, allowed: 0, drained: 0 },
    { name: "counts Unknown pods in the targets but never as Unhealthy", states: ["Healthy", "Unknown", "Unknown", "Unhealthy"] as const, pct: 25, allowed: 1, drained: 1 },
    { name: "drains every Unhealthy pod at 100% while one is Healthy", states: ["Healthy", "Unhealthy", "Unhealthy"] as const, pct: 100, allowed: 3, drained: 2 },
  ];
  it.each(capCases)("$name", ({ states, pct, allowed, drained }) => {
    const plan = planDrain(active(someTargets(...states), pct));
    expect(plan.allowed).toBe(allowed);
    expect(plan.drainedCount).toBe(drained);
  });

  it("says so when the cap allows no drain at all", () => {
    expect(reasons(active(someTargets("Healthy", "Unhealthy"), 49))["web-1"]).toBe(
      "kept: over the cap, maxUnhealthyPercent=49 of 2 targets allows none drained",
    );
  });

  describe("fail open", () => {
    const cases = [
      { name: "admits every target when all are Unhealthy", states: ["Unhealthy", "Unhealthy"] as const },
      { name: "admits every target when all are Unknown (operator start)", states: ["Unknown", "Unknown", "Unknown"] as const },
      { name: "admits a mix of Unknown and Unhealthy", states: ["Unknown", "Unhealthy"] as const },
      { name: "never drains a single-pod Service", states: ["Unhealthy"] as const },
    ];
    it.each(cases)("$name", ({ states }) => {
      const plan = planDrain(active(someTargets(...states), 100));
      expect(plan.failOpen).toBe(true);
      expect(plan.drainedCount).toBe(0);
      expect([...plan.decisions.values()].every((d) => d.admitted && !d.drained)).toBe(true);
    });

    it("says why each target stays", () => {
      expect(reasons(active(someTargets("Unhealthy", "Unknown")))).toEqual({
        "web-0": "kept: fail open, no healthy target",
        "web-1": "admitted: fail open, no healthy target (unknown, waiting for first success)",
      });
    });

    it("is not entered without targets", () => {
      expect(planDrain(active([])).failOpen).toBe(false);
    });
  });

  describe("dryRun and drain disabled", () => {
    const states = ["Healthy", "Unhealthy", "Unhealthy", "Unknown"] as const;

    it("dryRun admits everything and says what would have happened", () => {
      const input = { ...active(someTargets(...states), 25), dryRun: true };
      const plan = planDrain(input);
      expect(reasons(input)).toEqual({
        "web-0": "admitted: healthy",
        "web-1": "kept: dryRun (would be drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=25)",
        "web-2": "kept: dryRun (would be kept: over the cap, 1 of 1 allowed by maxUnhealthyPercent=25 already drained)",
        "web-3": "admitted: dryRun (would not be admitted: unknown, waiting for first success)",
      });
      expect(plan).toMatchObject({ drainedCount: 0, wouldDrain: ["uid-web-1"], capped: ["uid-web-2"], mode: "dryRun" });
    });

    it("drain disabled admits everything and does not evaluate the cap", () => {
      const input = { ...active(someTargets(...states), 25), drainEnabled: false };
      const plan = planDrain(input);
      expect([...plan.decisions.values()].every((d) => d.admitted && !d.drained)).toBe(true);
      expect(plan).toMatchObject({ drainedCount: 0, capped: [], mode: "disabled" });
      expect(reasons(input)["web-1"]).toBe("kept: drain disabled (unhealthy)");
    });
  });

  it("mentions kubelet readiness without overriding the policy's decision", () => {
    const plan = planDrain(active([aTarget({ name: "a", kubeletReady: false })]));
    expect(plan.decisions.get("uid-a")).toEqual({ admitted: true, drained: false, reason: "admitted: healthy (kubelet: not ready)" });
  });
});
