import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { formatWait, planEvents, replacedNote, verdictClause, MAX_NOTE_LENGTH, type EventView } from "./events.js";
import { computeStatus, type PolicyStatus, type ReadinessInput, type ReplacementBlockedInput } from "./status.js";
import { planDrain } from "./drain.js";
import { MINUTE, T0 } from "./testing/builders.js";
import type { HealthStateName } from "./types.js";

/** The status a reconcile would compute for pods web-0.. in these states. */
function statusOf(
  states: HealthStateName[],
  opts: {
    pct?: number;
    readiness?: ReadinessInput;
    previous?: PolicyStatus;
    blocked?: ReplacementBlockedInput;
    dryRun?: boolean;
  } = {},
): PolicyStatus {
  const targets = states.map((state, i) => ({
    uid: `uid-web-${i}`,
    name: `web-${i}`,
    state,
    kubeletReady: true,
    serving: state !== "Unknown",
    ...(state === "Unhealthy" ? { unhealthySince: T0 + i * MINUTE } : {}),
  }));
  const drain = planDrain({
    targets,
    maxUnhealthyPercent: opts.pct ?? 50,
    drainEnabled: true,
    dryRun: opts.dryRun ?? false,
  });
  return computeStatus({
    generation: 1,
    now: T0,
    previous: opts.previous,
    readiness: opts.readiness ?? { reason: "Reconciled" },
    drain,
    ...(opts.blocked ? { replacementBlocked: opts.blocked } : {}),
    pods: targets.map((t) => ({
      name: t.name,
      uid: t.uid,
      ip: "10.0.0.1",
      health: { state: t.state, since: T0 },
      decision: drain.decisions.get(t.uid)!,
    })),
  });
}

const summary = (events: ReturnType<typeof planEvents>) =>
  events.map((e) => `${e.type} ${e.reason} ${e.regarding === "policy" ? "policy" : e.regarding.podName}`);

describe("planEvents", () => {
  it("words a dryRun Event as what would have happened", () => {
    const events = planEvents(
      statusOf(["Healthy", "Healthy"], { dryRun: true }),
      statusOf(["Healthy", "Unhealthy"], { dryRun: true }),
    );
    expect(events[0]?.note).toBe(
      "dryRun: pod web-1 would be drained from the Service: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50",
    );
  });

  const cases: Array<{ name: string; prev: () => EventView | undefined; next: () => EventView; expected: string[] }> = [
    {
      name: "announces a newly drained pod on the policy and on the pod",
      prev: () => statusOf(["Healthy", "Healthy"]),
      next: () => statusOf(["Healthy", "Unhealthy"]),
      expected: ["Normal Drained policy", "Normal Drained web-1"],
    },
    {
      name: "announces a drained pod back in rotation",
      prev: () => statusOf(["Healthy", "Unhealthy"]),
      next: () => statusOf(["Healthy", "Healthy"]),
      expected: ["Normal Restored policy", "Normal Restored web-1"],
    },
    {
      name: "in dryRun, announces a pod that would be drained, saying so",
      prev: () => statusOf(["Healthy", "Healthy"], { dryRun: true }),
      next: () => statusOf(["Healthy", "Unhealthy"], { dryRun: true }),
      expected: ["Normal Drained policy", "Normal Drained web-1"],
    },
    {
      name: "in dryRun, announces a pod that would be back in rotation",
      prev: () => statusOf(["Healthy", "Unhealthy"], { dryRun: true }),
      next: () => statusOf(["Healthy", "Healthy"], { dryRun: true }),
      expected: ["Normal Restored policy", "Normal Restored web-1"],
    },
    {
      name: "in dryRun, says nothing twice for a pod that still would be drained",
      prev: () => statusOf(["Healthy", "Unhealthy"], { dryRun: true }),
      next: () => statusOf(["Healthy", "Unhealthy"], { dryRun: true }),
      expected: [],
    },
    {
      name: "says nothing about a drained pod that is gone",
      prev: () => statusOf(["Healthy", "Unhealthy"]),
      next: () => statusOf(["Healthy"]),
      expected: [],
    },
    {
      name: "warns when the cap newly keeps an Unhealthy pod in rotation",
      prev: () => statusOf(["Healthy", "Unhealthy", "Healthy", "Healthy"], { pct: 25 }),
      next: () => statusOf(["Healthy", "Unhealthy", "Unhealthy", "Healthy"], { pct: 25 }),
      expected: ["Warning DrainCapped policy"],
    },
    {
      name: "warns when fail open is entered, and restores the pods it puts back",
      prev: () => statusOf(["Healthy", "Unhealthy", "Healthy"]),
      next: () => statusOf(["Unhealthy", "Unhealthy", "Unhealthy"]),
      expected: ["Warning FailOpen policy", "Normal Restored policy", "Normal Restored web-1"],
    },
    {
      name: "does not warn of fail open while no target has been probed yet",
      prev: () => statusOf([]),
      next: () => statusOf(["Unknown", "Unknown", "Unknown"]),
      expected: [],
    },
    {
      name: "warns of fail open when the first probes find no target Healthy",
      prev: () => statusOf(["Unknown", "Unknown", "Unknown"]),
      next: () => statusOf(["Unhealthy", "Unknown", "Unhealthy"]),
      expected: ["Warning FailOpen policy"],
    },
    {
      name: "warns when the spec becomes invalid",
      prev: () => statusOf(["Healthy"]),
      next: () => statusOf([], { readiness: { reason: "InvalidSpec", message: "spec.probe.path: must start with /" } }),
      expected: ["Warning InvalidSpec policy"],
    },
    {
      name: "warns again when a different field is invalid",
      prev: () => statusOf([], { readiness: { reason: "InvalidSpec", message: "spec.probe.path: must start with /" } }),
      next: () => statusOf([], { readiness: { reason: "InvalidSpec", message: "spec.serviceName: required" } }),
      expected: ["Warning InvalidSpec policy"],
    },
    {
      name: "gives a missing Secret no InvalidSpec warning: the spec is valid",
      prev: () => statusOf(["Healthy"]),
      next: () =>
        statusOf([], {
          readiness: {
            reason: "SecretNotFound",
            message: 'spec.probe.signature.secretRef: Secret "probe-key" not found',
          },
        }),
      expected: [],
    },
    {
      name: "warns when a due replacement becomes blocked, and again when the reason changes",
      prev: () => statusOf(["Healthy"], { blocked: { blocked: true, reason: "Budget", message: "maxPerHour=1 used" } }),
      next: () =>
        statusOf(["Healthy"], { blocked: { blocked: true, reason: "PodDisruptionBudget", message: "refused" } }),
      expected: ["Warning ReplacementBlocked policy"],
    },
    {
      name: "announces what is already true when there is no previous status",
      prev: () => undefined,
      next: () => statusOf(["Healthy", "Unhealthy", "Unhealthy", "Healthy"], { pct: 25 }),
      expected: ["Warning DrainCapped policy", "Normal Drained policy", "Normal Drained web-1"],
    },
    {
      name: "announces only the newly drained pod while another stays drained",
      prev: () => statusOf(["Healthy", "Unhealthy", "Healthy", "Healthy"]),
      next: () => statusOf(["Healthy", "Unhealthy", "Unhealthy", "Healthy"]),
      expected: ["Normal Drained policy", "Normal Drained web-2"],
    },
  ];
  it.each(cases)("$name", ({ prev, next, expected }) => {
    expect(summary(planEvents(prev(), next()))).toEqual(expected);
  });

  it("carries the drain reason in the note", () => {
    const [first] = planEvents(statusOf(["Healthy", "Healthy"]), statusOf(["Healthy", "Unhealthy"]));
    expect(first?.note).toBe(
      "pod web-1 drained from the Service: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50",
    );
  });

  it("says why a pod is back in rotation in one clause", () => {
    const [first] = planEvents(statusOf(["Healthy", "Unhealthy"]), statusOf(["Healthy", "Healthy"]));
    expect(first?.note).toBe("pod web-1 back in rotation: healthy");
  });

  it("gives a blocked replacement's next slot relative to now and as the instant", () => {
    const message =
      "1 due replacement is waiting. web-1: hourly budget of policy demo/web used 1/1, next slot 2026-11-30T11:00:00Z";
    const [event] = planEvents(
      statusOf(["Healthy"]),
      statusOf(["Healthy"], { blocked: { blocked: true, reason: "Budget", message } }),
      Date.parse("2026-11-30T10:00:12Z"),
    );
    expect(event?.note).toBe(
      "1 due replacement is waiting. web-1: hourly budget of policy demo/web used 1/1, next slot in 59m48s (2026-11-30T11:00:00Z)",
    );
  });

  it.each([
    [
      "drained: longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
      "longest unhealthy, 1 of 2 allowed by maxUnhealthyPercent=50",
    ],
    ["kept: dryRun (would be drained: longest unhealthy, 1 of 2 allowed)", "longest unhealthy, 1 of 2 allowed"],
    ["admitted: healthy (kubelet: not Ready)", "healthy (kubelet: not Ready)"],
    ["not admitted: unknown, waiting for first success", "unknown, waiting for first success"],
  ])("keeps only the why of the verdict %j", (reason, clause) => expect(verdictClause(reason)).toBe(clause));

  it.each([
    [45_000, "45s"],
    [59 * 60_000 + 48_000, "59m48s"],
    [2 * 3_600_000 + 5 * 60_000, "2h05m"],
    [3 * 86_400_000 + 4 * 3_600_000, "3d04h"],
  ])("words a wait of %d ms as %s", (ms, text) => expect(formatWait(ms)).toBe(text));

  it("words a Replaced note by the method used", () => {
    expect(replacedNote("web-1", "Evict", "1h")).toBe(
      "pod web-1 evicted through the Eviction API after being Unhealthy for 1h",
    );
    expect(replacedNote("web-1", "Delete", "60s")).toBe("pod web-1 deleted after being Unhealthy for 60s");
  });

  it("names the pod it regards", () => {
    const events = planEvents(statusOf(["Healthy", "Healthy"]), statusOf(["Healthy", "Unhealthy"]));
    expect(events[1]?.regarding).toEqual({ podName: "web-1", podUid: "uid-web-1" });
  });

  it("keeps notes within the API's limit", () => {
    const message = "x".repeat(5000);
    const [event] = planEvents(undefined, statusOf([], { readiness: { reason: "InvalidSpec", message } }));
    expect(event?.note.length).toBe(MAX_NOTE_LENGTH);
  });

  it("produces nothing the second time for the same status (level-based)", () => {
    const stateArb = fc.constantFrom("Unknown" as const, "Healthy" as const, "Unhealthy" as const);
    fc.assert(
      fc.property(
        fc.array(stateArb, { maxLength: 12 }),
        fc.array(stateArb, { maxLength: 12 }),
        fc.integer({ min: 1, max: 100 }),
        (a, b, pct) => {
          const first = statusOf(a, { pct });
          const second = statusOf(b, { pct, previous: first });
          expect(planEvents(second, second)).toEqual([]);
          expect(planEvents(second, JSON.parse(JSON.stringify(second)))).toEqual([]);
          // Every drained pod of the new status is announced exactly when it was not drained before.
          const announced = planEvents(first, second).filter(
            (e) => e.reason === "Drained" && e.regarding !== "policy",
          ).length;
          const newlyDrained = second.pods.filter(
            (p) => p.drained && !first.pods.find((q) => q.uid === p.uid)?.drained,
          ).length;
          expect(announced).toBe(newlyDrained);
        },
      ),
      { numRuns: 300 },
    );
  });
});
