import { describe, it, expect } from "@jest/globals";
import { computeRecoveredAt, isServing, planDrain, type DrainInput } from "./drain.js";
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

  it("does not admit an Unknown pod never in rotation while another target is Healthy (warm-up)", () => {
    const plan = planDrain(active(someTargets("Healthy", "Unknown")));
    expect(plan.decisions.get("uid-web-1")).toEqual({
      admitted: false,
      drained: false,
      reason: "not admitted: unknown, waiting for first success",
    });
    expect(plan.drainedCount).toBe(0);
    expect(plan.warmUp).toEqual(["uid-web-1"]);
  });

  it("keeps every serving Unknown pod in rotation when a policy adopts a Service (adoption is free)", () => {
    const targets = [
      aTarget({ name: "web-0" }),
      ...[1, 2, 3, 4, 5, 6].map((i) => aTarget({ name: `web-${i}`, state: "Unknown", serving: true })),
    ];
    const plan = planDrain(active(targets, 40));
    expect([...plan.decisions.values()].every((d) => d.admitted && !d.drained)).toBe(true);
    expect(plan.decisions.get("uid-web-1")?.reason).toBe(
      "admitted: unknown, serving: stays in rotation until probes say otherwise",
    );
    expect(plan.warmUp).toEqual([]);
  });

  it("does not count warm-up pods in the cap", () => {
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0 }),
      aTarget({ name: "w1", state: "Unknown", serving: false }),
      aTarget({ name: "w2", state: "Unknown", serving: false }),
    ];
    const plan = planDrain(active(targets, 25));
    expect(plan.decisions.get("uid-u")?.drained).toBe(true);
    expect(plan.capped).toEqual([]);
  });

  it("does not count an Unhealthy pod kubelet already keeps out in the cap", () => {
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "a", state: "Unhealthy", unhealthySince: T0, kubeletReady: false }),
      aTarget({ name: "b", state: "Unhealthy", unhealthySince: T0 + MINUTE }),
      aTarget({ name: "c" }),
    ];
    expect(reasons(active(targets, 25))).toEqual({
      h: "admitted: healthy",
      a: "not admitted: unhealthy, kubelet: not ready (not counted in maxUnhealthyPercent)",
      b: "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=25",
      c: "admitted: healthy",
    });
  });

  it("says in dryRun that an Unhealthy pod kubelet keeps out would not be admitted", () => {
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "a", state: "Unhealthy", unhealthySince: T0, kubeletReady: false }),
    ];
    expect(reasons({ ...active(targets), dryRun: true }).a).toBe(
      "admitted: dryRun (would not be admitted: unhealthy, kubelet: not ready (not counted in maxUnhealthyPercent))",
    );
  });

  it("routes a pod whose probe port does not resolve like an Unknown pod, with the reason", () => {
    const notProbed = 'no TCP container port named "http" in the pod';
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "serving", state: "Unknown", notProbed }),
      aTarget({ name: "new", state: "Unknown", serving: false, notProbed }),
    ];
    expect(reasons(active(targets))).toEqual({
      h: "admitted: healthy",
      serving: `admitted: not probed: ${notProbed}, serving: stays in rotation until probes say otherwise`,
      new: `not admitted: not probed: ${notProbed}, never in rotation`,
    });
  });

  describe("recovery sweep", () => {
    const recoveredAt = T0 + 10 * MINUTE;
    const targets = [
      aTarget({ name: "h", lastResultAt: recoveredAt }),
      aTarget({ name: "h2" }),
      aTarget({ name: "stale", state: "Unhealthy", unhealthySince: T0, lastResultAt: recoveredAt - 1 }),
      aTarget({ name: "fresh", state: "Unhealthy", unhealthySince: T0, lastResultAt: recoveredAt + 1 }),
      aTarget({ name: "out", state: "Unhealthy", unhealthySince: T0, serving: false, outOfRotation: true }),
    ];

    it("keeps a serving Unhealthy pod without a newer result in rotation and asks to probe it now", () => {
      const plan = planDrain({ ...active(targets, 50), recoveredAt });
      expect(plan.decisions.get("uid-stale")).toEqual({
        admitted: true,
        drained: false,
        reason:
          "kept: Unhealthy from before the recovery at 2026-01-01T00:10:00Z, probing again: drained only on a newer result",
      });
      expect(plan.recheck).toEqual(["uid-stale"]);
      expect(plan.decisions.get("uid-fresh")?.drained).toBe(true);
      expect(plan.decisions.get("uid-out")?.drained).toBe(true);
    });

    it("sweeps no pod that turned Unhealthy after the recovery, even before any result of its own (a restart)", () => {
      const restored = aTarget({ name: "later", state: "Unhealthy", unhealthySince: recoveredAt + 1_000 });
      const plan = planDrain({ ...active([...targets, restored], 50), recoveredAt });
      expect(plan.recheck).toEqual(["uid-stale"]);
      expect(plan.decisions.get("uid-later")?.reason).not.toMatch(/before the recovery/);
    });

    it("drains it on a result newer than the recovery", () => {
      const later = targets.map((t) => (t.name === "stale" ? { ...t, lastResultAt: recoveredAt + 5 } : t));
      const plan = planDrain({ ...active(later, 60), recoveredAt });
      expect(plan.decisions.get("uid-stale")?.drained).toBe(true);
      expect(plan.recheck).toEqual([]);
    });
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
    {
      name: "keeps the pod already out of rotation drained when a newcomer ties with it (no swap)",
      zOut: true,
      mOut: false,
      drained: "z",
    },
    {
      name: "falls back to the name when neither tied pod is out of rotation yet",
      zOut: false,
      mOut: false,
      drained: "m",
    },
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

  it("ranks by whole second, so the numbering agrees with the drain order within one second", () => {
    const targets = [
      aTarget({ name: "z", state: "Unhealthy", unhealthySince: T0 + 900, outOfRotation: true }),
      aTarget({ name: "m", state: "Unhealthy", unhealthySince: T0 + 500 }),
      aTarget({ name: "a", state: "Unhealthy", unhealthySince: T0 + 100 }),
      aTarget({ name: "h1" }),
      aTarget({ name: "h2" }),
    ];
    const r = reasons(active(targets, 40));
    expect(r.z).toBe("drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=40");
    expect(r.a).toBe("drained: longest unhealthy, 2 of 2 allowed by maxUnhealthyPercent=40");
    expect(r.m).toBe("kept: over the cap, 2 of 2 allowed by maxUnhealthyPercent=40 already drained");
  });

  const capCases = [
    {
      name: "rounds the cap down (3 targets at 50% allow 1)",
      states: ["Healthy", "Unhealthy", "Unhealthy"] as const,
      pct: 50,
      allowed: 1,
      drained: 1,
    },
    {
      name: "allows nothing when the cap rounds to zero",
      states: ["Healthy", "Unhealthy"] as const,
      pct: 49,
      allowed: 0,
      drained: 0,
    },
    {
      name: "counts Unknown pods in the targets but never as Unhealthy",
      states: ["Healthy", "Unknown", "Unknown", "Unhealthy"] as const,
      pct: 25,
      allowed: 1,
      drained: 1,
    },
    {
      name: "drains every Unhealthy pod at 100% while one is Healthy",
      states: ["Healthy", "Unhealthy", "Unhealthy"] as const,
      pct: 100,
      allowed: 3,
      drained: 2,
    },
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
      {
        name: "admits every target when all are Unknown (operator start)",
        states: ["Unknown", "Unknown", "Unknown"] as const,
      },
      { name: "admits a mix of Unknown and Unhealthy", states: ["Unknown", "Unhealthy"] as const },
      { name: "never drains a single-pod Service", states: ["Unhealthy"] as const },
    ];

    it("is entered when the only Healthy pod is not kubelet-Ready", () => {
      const targets = [
        aTarget({ name: "h", kubeletReady: false }),
        aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0 }),
      ];
      const plan = planDrain(active(targets, 50));
      expect(plan.failOpen).toBe(true);
      expect(plan.decisions.get("uid-u")).toEqual({
        admitted: true,
        drained: false,
        reason: "kept: fail open, no healthy target",
      });
    });

    it("admits warm-up pods too", () => {
      const plan = planDrain(
        active([
          aTarget({ name: "w", state: "Unknown", serving: false }),
          aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0 }),
        ]),
      );
      expect(plan.decisions.get("uid-w")?.admitted).toBe(true);
    });
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

  describe("computeRecoveredAt", () => {
    const now = T0 + 10 * MINUTE + 700;
    it.each([
      {
        name: "is the end of the second FailOpen turned False in, as status kept it",
        previous: { status: "False" as const, lastTransitionTime: "2026-01-01T00:03:00Z" },
        at: T0 + 3 * MINUTE + 999,
      },
      {
        name: "is now while FailOpen is True",
        previous: { status: "True" as const, lastTransitionTime: "2026-01-01T00:01:00Z" },
        at: now,
      },
      { name: "is now before FailOpen was evaluated", previous: undefined, at: now },
      {
        name: "is now when the transition time does not parse",
        previous: { status: "False" as const, lastTransitionTime: "garbage" },
        at: now,
      },
    ])("$name", ({ previous, at }) => {
      expect(computeRecoveredAt(previous, now)).toBe(at);
    });
  });

  describe("isServing", () => {
    it.each([
      {
        name: "ready in the current slices",
        readyInSlices: true,
        kubeletReady: false,
        slicesWritten: true,
        known: true,
        serving: true,
      },
      {
        name: "listed not ready in the slices, state known",
        readyInSlices: false,
        kubeletReady: true,
        slicesWritten: true,
        known: true,
        serving: false,
      },
      {
        name: "absent from the slices, state known (a new pod)",
        readyInSlices: undefined,
        kubeletReady: true,
        slicesWritten: true,
        known: true,
        serving: false,
      },
      {
        name: "kubelet-Ready, no slices written yet",
        readyInSlices: undefined,
        kubeletReady: true,
        slicesWritten: false,
        known: true,
        serving: true,
      },
      {
        name: "kubelet-Ready, no state for it (restart)",
        readyInSlices: false,
        kubeletReady: true,
        slicesWritten: true,
        known: false,
        serving: true,
      },
      {
        name: "kubelet-NotReady, no slices written yet",
        readyInSlices: undefined,
        kubeletReady: false,
        slicesWritten: false,
        known: false,
        serving: false,
      },
    ])("$name: $serving", ({ serving, ...input }) => {
      expect(isServing(input)).toBe(serving);
    });
  });

  it("mentions kubelet readiness without overriding the policy's decision", () => {
    const plan = planDrain(active([aTarget({ name: "a", kubeletReady: false })]));
    expect(plan.decisions.get("uid-a")).toEqual({
      admitted: true,
      drained: false,
      reason: "admitted: healthy (kubelet: not ready)",
    });
  });
});
