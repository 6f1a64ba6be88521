// The breaker invariant judges only evictions where the operator's view cannot have differed
// from the status it had written: these cases pin each of those conditions.
import { describe, expect, it } from "@jest/globals";
import { T0, breakerSnapshot, pod } from "./builders.js";
import { noEvictionAboveBreaker } from "./breaker.js";

const UUH = { a: "Unhealthy", b: "Unhealthy", c: "Healthy" } as const;

describe("no-eviction-above-breaker", () => {
  it.each([
    {
      name: "2 of 3 Unhealthy (66.7%) above 50, stable for 60 s: a violation",
      snap: breakerSnapshot(UUH, 50),
      violations: 1,
    },
    { name: "2 of 3 is not above 67", snap: breakerSnapshot(UUH, 67), violations: 0 },
    { name: "2 of 3 is above 66", snap: breakerSnapshot(UUH, 66), violations: 1 },
    {
      name: "1 of 3 is not above 50",
      snap: breakerSnapshot({ a: "Unhealthy", b: "Healthy", c: "Healthy" }, 50),
      violations: 0,
    },
    {
      name: "the breaker off (100) never judges",
      snap: breakerSnapshot({ a: "Unhealthy", b: "Unhealthy", c: "Unhealthy" }, 100),
      violations: 0,
    },
    {
      name: "not judged when pods or policies changed less than 30 s before",
      snap: breakerSnapshot(UUH, 50, { stableSince: T0 + 31_000 }),
      violations: 0,
    },
    {
      name: "judged when they last changed exactly 30 s before",
      snap: breakerSnapshot(UUH, 50, { stableSince: T0 + 30_000 }),
      violations: 1,
    },
    {
      name: "not judged without a record of when they changed",
      snap: breakerSnapshot(UUH, 50, { stableSince: undefined }),
      violations: 0,
    },
    {
      name: "not judged when a pod the status calls Unhealthy answered healthy since: the operator may see it recovered",
      snap: breakerSnapshot(UUH, 50, {}, { probes: [{ ip: pod("b").ip!, at: T0 + 50_000, mode: "healthy" }] }),
      violations: 0,
    },
    {
      name: "a healthy answer from before the stable window does not excuse it",
      snap: breakerSnapshot(UUH, 50, {}, { probes: [{ ip: pod("b").ip!, at: T0 + 10_000, mode: "healthy" }] }),
      violations: 1,
    },
    {
      name: "not judged when the status does not list exactly the targets",
      snap: breakerSnapshot({ a: "Unhealthy", b: "Unhealthy" }, 50),
      violations: 0,
    },
  ])("$name", ({ snap, violations }) => {
    expect(noEvictionAboveBreaker.check(snap)).toHaveLength(violations);
  });

  it("says which policy, the share and the threshold", () => {
    expect(noEvictionAboveBreaker.check(breakerSnapshot(UUH, 50))).toEqual([
      "evict of a at 2026-01-01T00:01:00.000Z by operator-1 while policy p had 2 of 3 targets Unhealthy (a, b), above pauseAboveUnhealthyPercent=50, unchanged since 2026-01-01T00:00:00.000Z",
    ]);
  });
});
