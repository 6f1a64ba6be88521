// Status and Events of a policy that fails closed, and of quarantined (flapping) pods.
import { describe, it, expect } from "@jest/globals";
import { planEvents } from "./events.js";
import { computeStatus, type PolicyStatus, type StatusInput } from "./status.js";
import { planDrain, type DrainTarget, type WhenAllUnhealthy } from "./drain.js";
import { computeHealthSeeds } from "./health-seed.js";
import { aStatusPod, aTarget, MINUTE, T0 } from "./testing/builders.js";

const QUARANTINE = {
  until: T0 + 7 * MINUTE,
  flaps: 3,
  reason: "quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z",
};

/** The status a reconcile computes for these targets. */
function statusOf(
  targets: DrainTarget[],
  opts: {
    whenAllUnhealthy?: WhenAllUnhealthy;
    previous?: PolicyStatus;
    dryRun?: boolean;
    readiness?: StatusInput["readiness"];
  } = {},
): PolicyStatus {
  const drain = planDrain({
    targets,
    maxUnhealthyPercent: 50,
    drainEnabled: true,
    dryRun: opts.dryRun ?? false,
    whenAllUnhealthy: opts.whenAllUnhealthy ?? "FailOpen",
  });
  return computeStatus({
    generation: 1,
    now: T0,
    previous: opts.previous,
    readiness: opts.readiness ?? { reason: "Reconciled" },
    ...(opts.readiness ? { whenAllUnhealthy: opts.whenAllUnhealthy } : { drain }),
    pods: targets.map((t) => ({
      name: t.name,
      uid: t.uid,
      ip: "10.0.0.1",
      health: { state: t.state, since: T0 },
      decision: drain.decisions.get(t.uid)!,
      ...(t.quarantine ? { quarantinedUntil: t.quarantine.until } : {}),
    })),
  });
}

const unhealthy = (name: string) => aTarget({ name, state: "Unhealthy", unhealthySince: T0 });
const types = (s: PolicyStatus) => s.conditions.map((c) => c.type);
const cond = (s: PolicyStatus, type: string) => s.conditions.find((c) => c.type === type);
const summary = (events: ReturnType<typeof planEvents>) =>
  events.map((e) => `${e.type} ${e.reason} ${e.regarding === "policy" ? "policy" : e.regarding.podName}`);

describe("the FailClosed condition", () => {
  it("replaces FailOpen for a policy that fails closed, and says when it bites", () => {
    const s = statusOf([unhealthy("a"), unhealthy("b")], { whenAllUnhealthy: "FailClosed" });
    expect(types(s)).toEqual([
      "Ready",
      "Degraded",
      "FailClosed",
      "DrainCapped",
      "ReplacementBlocked",
      "RolloutSuspect",
      "DisagreesWithKubelet",
    ]);
    expect(cond(s, "FailClosed")).toMatchObject({
      status: "True",
      reason: "NoHealthyTarget",
      message:
        "no target is both Healthy and kubelet-Ready: 2 Unhealthy targets drained whatever maxUnhealthyPercent says (whenAllUnhealthy=FailClosed); the Service may have no ready endpoint",
    });
    expect(s.drained).toBe(2);
  });

  it("is False while a target is Healthy", () => {
    const s = statusOf([aTarget({ name: "h" }), unhealthy("a")], { whenAllUnhealthy: "FailClosed" });
    expect(cond(s, "FailClosed")).toMatchObject({ status: "False", reason: "HealthyTargets" });
  });

  it("says no target is probed yet, without alarm, before the first probes", () => {
    const s = statusOf([aTarget({ name: "a", state: "Unknown" })], { whenAllUnhealthy: "FailClosed" });
    expect(cond(s, "FailClosed")).toMatchObject({ status: "True", reason: "NoTargetProbedYet" });
    expect(planEvents(undefined, s).filter((e) => e.reason === "FailClosed")).toEqual([]);
  });

  it("says in dryRun that nothing is drained", () => {
    const s = statusOf([unhealthy("a")], { whenAllUnhealthy: "FailClosed", dryRun: true });
    expect(cond(s, "FailClosed")?.message).toMatch(/\(dryRun: nothing is drained\)$/);
    expect(s.drained).toBe(0);
  });

  it("keeps FailOpen, and no FailClosed, for a policy that fails open", () => {
    const s = statusOf([unhealthy("a"), unhealthy("b")]);
    expect(types(s)).toEqual([
      "Ready",
      "Degraded",
      "FailOpen",
      "DrainCapped",
      "ReplacementBlocked",
      "RolloutSuspect",
      "DisagreesWithKubelet",
    ]);
    expect(cond(s, "FailOpen")?.status).toBe("True");
  });

  it("drops the other one when the policy switches mode", () => {
    const open = statusOf([aTarget({ name: "h" })]);
    expect(types(statusOf([aTarget({ name: "h" })], { whenAllUnhealthy: "FailClosed", previous: open }))).not.toContain(
      "FailOpen",
    );
  });

  it("is Unknown, not FailOpen, while a policy that fails closed is not Ready", () => {
    const s = statusOf([], { whenAllUnhealthy: "FailClosed", readiness: { reason: "ServiceNotFound" } });
    expect(types(s)).toEqual([
      "Ready",
      "Degraded",
      "FailClosed",
      "DrainCapped",
      "ReplacementBlocked",
      "RolloutSuspect",
      "DisagreesWithKubelet",
    ]);
    expect(cond(s, "FailClosed")).toMatchObject({ status: "Unknown", reason: "NotEvaluated" });
  });

  it("turning True is a Warning on the policy, once", () => {
    const before = statusOf([aTarget({ name: "h" }), unhealthy("a")], { whenAllUnhealthy: "FailClosed" });
    const after = statusOf([unhealthy("h"), unhealthy("a")], { whenAllUnhealthy: "FailClosed", previous: before });
    const events = planEvents(before, after);
    expect(summary(events)).toContain("Warning FailClosed policy");
    expect(events.find((e) => e.reason === "FailClosed")?.note).toBe(cond(after, "FailClosed")?.message);
    expect(planEvents(after, after)).toEqual([]);
  });
});

describe("quarantined pods in status and Events", () => {
  const targets = (q: boolean) => [
    aTarget({ name: "a" }),
    aTarget({ name: "b", ...(q ? { quarantine: QUARANTINE } : {}) }),
  ];
  const statusWith = (ts: DrainTarget[], previous?: PolicyStatus) => statusOf(ts, previous ? { previous } : {});

  it("reports quarantinedUntil, drained, and the verdict", () => {
    const status = statusWith(targets(true));
    expect(status.pods.find((p) => p.name === "b")).toMatchObject({
      drained: true,
      quarantinedUntil: "2026-01-01T00:07:00Z",
      reason: "quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z (1 of 1 allowed by maxUnhealthyPercent=50)",
    });
    expect(status.pods.find((p) => p.name === "a")?.quarantinedUntil).toBeUndefined();
  });

  it("announces a quarantine with a Warning on the policy and the pod, in place of Drained, and the return with Restored", () => {
    const before = statusWith(targets(false));
    const during = statusWith(targets(true), before);
    const events = planEvents(before, during);
    expect(summary(events)).toEqual(["Warning Quarantined policy", "Warning Quarantined b"]);
    expect(events[0]?.note).toBe(
      "pod b quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z (1 of 1 allowed by maxUnhealthyPercent=50)",
    );
    expect(planEvents(during, during)).toEqual([]);
    const after = statusWith(targets(false), during);
    expect(summary(planEvents(during, after))).toEqual(["Normal Restored policy", "Normal Restored b"]);
  });

  it("announces a quarantine kept in rotation by the cap, saying so", () => {
    const ts = [aTarget({ name: "a" }), aTarget({ name: "b", quarantine: QUARANTINE }), unhealthy("c")];
    const status = statusOf(ts);
    const events = planEvents(undefined, status).filter((e) => e.reason === "Quarantined");
    expect(events[0]?.note).toBe(
      "pod b quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z, but over the cap: 1 of 1 allowed by maxUnhealthyPercent=50 already drained",
    );
  });

  it("words a dryRun quarantine as what would happen", () => {
    const status = statusOf(targets(true), { dryRun: true });
    expect(planEvents(undefined, status).find((e) => e.reason === "Quarantined")?.note).toBe(
      "dryRun: pod b would be quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z (1 of 1 allowed by maxUnhealthyPercent=50)",
    );
  });

  it("restores quarantinedUntil from status after a restart", () => {
    const seeds = computeHealthSeeds([
      aStatusPod({ name: "b", quarantinedUntil: "2026-01-01T00:07:00Z" }),
      aStatusPod({ name: "a" }),
    ]);
    expect(seeds.get("uid-b")?.quarantinedUntil).toBe(T0 + 7 * MINUTE);
    expect(seeds.get("uid-a")?.quarantinedUntil).toBeUndefined();
  });
});
