// The soak benchmark (soak.ts) for one simulated day instead of a week: what it measures must hold
// already. No heap bound here (the benchmark prints the slope); counts that leak would show.
import { describe, expect, it } from "@jest/globals";
import { runSoak, slope } from "./soak.js";

describe("the soak benchmark, one simulated day", () => {
  it("ends with the handles, timers and tracked pods it started with, and probes all day", async () => {
    const r = await runSoak({ days: 1, pods: 40, policies: 4, sampleEveryHours: 6, seed: 7 });
    // The scheduler keeps one fake timer however many pods came and went; nothing real is left open.
    expect(r.end).toEqual(r.start);
    expect(r.start.fakeTimers).toBe(1);
    // Every deleted pod is forgotten by the health store and the scheduler.
    expect(r.tracked).toEqual({ livePods: 40, storePods: 40, schedulerTargets: 40 });
    // At least one probe per pod per minute (periods are 10-60 s).
    expect(r.probes).toBeGreaterThan(40 * 24 * 60);
    expect(r.transitions).toBeGreaterThan(0);
    expect(r.samples).toBe(5);
  }, 120_000);

  it.each([
    { name: "a flat series", xs: [0, 1, 2], ys: [5, 5, 5], slope: 0 },
    { name: "a line", xs: [0, 1, 2, 3], ys: [1, 3, 5, 7], slope: 2 },
    { name: "one point", xs: [4], ys: [9], slope: 0 },
  ])("fits the least-squares slope of $name", ({ xs, ys, slope: expected }) => {
    expect(slope(xs, ys)).toBeCloseTo(expected);
  });
});
