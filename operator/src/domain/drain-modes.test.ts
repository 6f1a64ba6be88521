// planDrain with spec.drain.whenAllUnhealthy FailClosed and with quarantined (flapping) pods.
import { describe, it, expect } from "@jest/globals";
import { planDrain, type DrainInput, type DrainTarget } from "./drain.js";
import type { QuarantineVerdict } from "./flap-quarantine.js";
import { aTarget, someTargets, MINUTE, T0 } from "./testing/builders.js";

const closed = (targets: DrainTarget[], maxUnhealthyPercent = 50): DrainInput => ({
  targets,
  maxUnhealthyPercent,
  drainEnabled: true,
  dryRun: false,
  whenAllUnhealthy: "FailClosed",
});

const active = (targets: DrainTarget[], maxUnhealthyPercent = 50): DrainInput => ({
  ...closed(targets, maxUnhealthyPercent),
  whenAllUnhealthy: "FailOpen",
});

function reasons(input: DrainInput): Record<string, string> {
  const plan = planDrain(input);
  return Object.fromEntries(input.targets.map((t) => [t.name, plan.decisions.get(t.uid)?.reason ?? "none"]));
}

const quarantine = (reason = "quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z"): QuarantineVerdict => ({
  until: T0 + 7 * MINUTE,
  flaps: 3,
  reason,
});
const FAIL_CLOSED =
  "drained: fail closed, no healthy target (whenAllUnhealthy=FailClosed: maxUnhealthyPercent not applied)";

describe("planDrain with whenAllUnhealthy=FailClosed", () => {
  it("drains every kubelet-Ready Unhealthy pod when none is Healthy, whatever the cap", () => {
    const plan = planDrain(closed(someTargets("Unhealthy", "Unhealthy", "Unhealthy"), 10));
    expect(plan).toMatchObject({
      failClosed: true,
      failOpen: false,
      drainedCount: 3,
      capped: [],
      wouldDrain: ["uid-web-0", "uid-web-1", "uid-web-2"],
    });
    expect([...plan.decisions.values()]).toEqual(
      Array(3).fill({ admitted: false, drained: true, reason: FAIL_CLOSED }),
    );
  });

  it("keeps the cap while a target is Healthy", () => {
    const plan = planDrain(closed(someTargets("Healthy", "Unhealthy", "Unhealthy", "Unhealthy"), 25));
    expect(plan).toMatchObject({ failClosed: false, drainedCount: 1, capped: ["uid-web-2", "uid-web-3"] });
  });

  it("counts a Healthy pod kubelet keeps out as no Healthy target", () => {
    const targets = [
      aTarget({ name: "h", kubeletReady: false }),
      aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0 }),
    ];
    expect(reasons(closed(targets))).toEqual({ h: "admitted: healthy (kubelet: not ready)", u: FAIL_CLOSED });
  });

  it("keeps serving Unknown pods in rotation (adoption is free) and warm-up pods out", () => {
    const targets = [
      aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0 }),
      aTarget({ name: "serving", state: "Unknown", serving: true }),
      aTarget({ name: "new", state: "Unknown", serving: false }),
    ];
    expect(reasons(closed(targets))).toEqual({
      u: FAIL_CLOSED,
      serving: "admitted: unknown, serving: stays in rotation until probes say otherwise",
      new: "not admitted: unknown, waiting for first success",
    });
  });

  it("does not hold back a drain for the recovery sweep while it bites", () => {
    const targets = [aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0, lastResultAt: T0 })];
    const plan = planDrain({ ...closed(targets), recoveredAt: T0 + MINUTE });
    expect(plan.recheck).toEqual([]);
    expect(plan.decisions.get("uid-u")?.drained).toBe(true);
  });

  it("drains a single-target policy whose only pod is Unhealthy", () => {
    expect(planDrain(closed(someTargets("Unhealthy"))).drainedCount).toBe(1);
  });

  it("leaves an Unhealthy pod kubelet keeps out uncounted", () => {
    const targets = [
      aTarget({ name: "a", state: "Unhealthy", unhealthySince: T0, kubeletReady: false }),
      aTarget({ name: "b", state: "Unhealthy", unhealthySince: T0 }),
    ];
    expect(reasons(closed(targets))).toEqual({
      a: "not admitted: unhealthy, kubelet: not ready (not counted in maxUnhealthyPercent)",
      b: FAIL_CLOSED,
    });
  });

  it("says in dryRun what it would drain, and drains nothing", () => {
    const plan = planDrain({ ...closed(someTargets("Unhealthy", "Unhealthy")), dryRun: true });
    expect(plan).toMatchObject({ failClosed: true, drainedCount: 0, mode: "dryRun" });
    expect(plan.decisions.get("uid-web-0")).toEqual({
      admitted: true,
      drained: false,
      reason: `kept: dryRun (would be ${FAIL_CLOSED})`,
    });
  });

  it("drains nothing with drain disabled", () => {
    const plan = planDrain({ ...closed(someTargets("Unhealthy", "Unhealthy")), drainEnabled: false });
    expect(plan.drainedCount).toBe(0);
    expect(plan.decisions.get("uid-web-0")?.reason).toBe("kept: drain disabled (unhealthy)");
  });

  it("is not entered without targets", () => {
    expect(planDrain(closed([]))).toMatchObject({ failClosed: false, failOpen: false });
  });
});

describe("planDrain with quarantined pods", () => {
  it("holds a quarantined Healthy pod out of rotation within the cap", () => {
    const targets = [
      aTarget({ name: "a" }),
      aTarget({ name: "b", quarantine: quarantine() }),
      aTarget({ name: "c" }),
      aTarget({ name: "d" }),
    ];
    const plan = planDrain(active(targets));
    expect(plan.decisions.get("uid-b")).toEqual({
      admitted: false,
      drained: true,
      reason: "quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z (1 of 2 allowed by maxUnhealthyPercent=50)",
    });
    expect(plan).toMatchObject({ quarantined: ["uid-b"], quarantineKept: [], drainedCount: 1 });
  });

  it("gives the cap to Unhealthy pods first and keeps the quarantined pod in rotation when it is full", () => {
    const targets = [
      aTarget({ name: "a" }),
      aTarget({ name: "b", quarantine: quarantine() }),
      aTarget({ name: "u1", state: "Unhealthy", unhealthySince: T0 }),
      aTarget({ name: "u2", state: "Unhealthy", unhealthySince: T0 + MINUTE }),
    ];
    const r = reasons(active(targets));
    expect(r.b).toBe(
      "kept: quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z, but over the cap: 2 of 2 allowed by maxUnhealthyPercent=50 already drained",
    );
    expect(r.u2).toBe("drained: longest unhealthy, 2 of 2 allowed by maxUnhealthyPercent=50");
    expect(planDrain(active(targets)).quarantineKept).toEqual(["uid-b"]);
  });

  it("says when the cap allows none", () => {
    const targets = [aTarget({ name: "a" }), aTarget({ name: "b", quarantine: quarantine() })];
    expect(reasons(active(targets, 49)).b).toBe(
      "kept: quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z, but maxUnhealthyPercent=49 of 2 targets allows none drained",
    );
  });

  it("never takes out the last Healthy pods: all quarantined, all stay", () => {
    const targets = [
      aTarget({ name: "a", quarantine: quarantine() }),
      aTarget({ name: "b", quarantine: quarantine() }),
      aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0 }),
    ];
    const r = reasons(active(targets, 100));
    expect(r.a).toBe(
      "kept: quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z, but no other Healthy target is in rotation",
    );
    expect(r.u).toBe("drained: longest unhealthy, 1 of 3 allowed by maxUnhealthyPercent=100");
  });

  it("keeps the one already out of rotation out when only one slot is left, then goes by name", () => {
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "a", quarantine: quarantine() }),
      aTarget({ name: "b", quarantine: quarantine(), outOfRotation: true }),
      aTarget({ name: "c" }),
    ];
    expect(planDrain(active(targets, 25)).quarantined).toEqual(["uid-b"]);
    expect(
      planDrain(
        active(
          targets.map((t) => ({ ...t, outOfRotation: false })),
          25,
        ),
      ).quarantined,
    ).toEqual(["uid-a"]);
  });

  it("holds a serving Unknown pod (restored after a restart) but not a pod kubelet keeps out or one in warm-up", () => {
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "h2" }),
      aTarget({ name: "restored", state: "Unknown", serving: true, quarantine: quarantine() }),
      aTarget({ name: "notready", kubeletReady: false, quarantine: quarantine() }),
      aTarget({ name: "new", state: "Unknown", serving: false, quarantine: quarantine() }),
    ];
    const plan = planDrain(active(targets, 100));
    expect(plan.quarantined).toEqual(["uid-restored"]);
    expect(plan.decisions.get("uid-notready")?.reason).toBe("admitted: healthy (kubelet: not ready)");
    expect(plan.decisions.get("uid-new")?.reason).toBe("not admitted: unknown, waiting for first success");
  });

  it("says of an Unhealthy quarantined pod that it is quarantined too", () => {
    const targets = [
      aTarget({ name: "h" }),
      aTarget({ name: "u", state: "Unhealthy", unhealthySince: T0, quarantine: quarantine() }),
    ];
    expect(reasons(active(targets)).u).toBe(
      "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50; quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z",
    );
  });

  it("holds nothing in dryRun and says what it would do", () => {
    const targets = [aTarget({ name: "a" }), aTarget({ name: "b", quarantine: quarantine() })];
    const plan = planDrain({ ...active(targets), dryRun: true });
    expect(plan.decisions.get("uid-b")).toEqual({
      admitted: true,
      drained: false,
      reason:
        "kept: dryRun (would be quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z (1 of 1 allowed by maxUnhealthyPercent=50))",
    });
    expect(plan).toMatchObject({ quarantined: ["uid-b"], drainedCount: 0 });
  });

  it("holds nothing with drain disabled", () => {
    const targets = [aTarget({ name: "a" }), aTarget({ name: "b", quarantine: quarantine() })];
    const plan = planDrain({ ...active(targets), drainEnabled: false });
    expect(plan.quarantined).toEqual([]);
    expect(plan.decisions.get("uid-b")).toEqual({ admitted: true, drained: false, reason: "admitted: healthy" });
  });
});
