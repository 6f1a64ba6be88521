import { describe, it, expect } from "@jest/globals";
import { OffsetClock } from "./offset-clock.js";

/** Polls until the predicate holds, with a deadline: timers here fire on the real event loop. */
async function waitFor<T>(probe: () => T | undefined | false, opts: { what: string; timeoutMs?: number }): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 2_000);
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A base that stands still, so the tests control every millisecond. */
function stillClock(start = 1_000_000): OffsetClock {
  return new OffsetClock({ base: () => start });
}

describe("OffsetClock", () => {
  it("reads as the base time plus the offset moved so far", () => {
    const clock = stillClock(5_000);
    expect(clock.now()).toBe(5_000);
    clock.advance(3_600_000);
    clock.advance(1);
    expect(clock.now()).toBe(3_605_001);
    expect(clock.offset()).toBe(3_600_001);
  });

  it("refuses to move backwards", () => {
    expect(() => stillClock().advance(-1)).toThrow(/only moves forward/);
  });

  it("fires a timer as soon as an advance passes its due time, without waiting in real time", async () => {
    const clock = stillClock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 3_600_000);
    clock.advance(3_600_000);
    await waitFor(() => fired.length === 1, { what: "the hour-long timer" });
    expect(fired).toEqual([1_000_000 + 3_600_000]);
    expect(clock.pending()).toBe(0);
  });

  it("keeps timers the advance did not reach", async () => {
    const clock = stillClock();
    const fired: string[] = [];
    const late = clock.setTimeout(() => fired.push("late"), 60_000);
    clock.setTimeout(() => fired.push("early"), 10_000);
    clock.advance(30_000);
    // A zero-delay timer armed after the advance fires after every timer the advance released.
    clock.setTimeout(() => fired.push("marker"), 0);
    await waitFor(() => fired.includes("marker"), { what: "the marker timer" });
    expect(fired).toEqual(["early", "marker"]);
    expect(clock.pending()).toBe(1);
    clock.clearTimeout(late);
  });

  it("fires the timers one advance releases earliest first", async () => {
    const clock = stillClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push("c"), 30_000);
    clock.setTimeout(() => fired.push("a"), 10_000);
    clock.setTimeout(() => fired.push("b"), 20_000);
    clock.advance(40_000);
    await waitFor(() => fired.length === 3, { what: "three timers" });
    expect(fired).toEqual(["a", "b", "c"]);
  });

  it("does not fire a cleared timer", async () => {
    const clock = stillClock();
    const fired: string[] = [];
    const handle = clock.setTimeout(() => fired.push("cleared"), 1_000);
    clock.clearTimeout(handle);
    clock.advance(5_000);
    clock.setTimeout(() => fired.push("marker"), 0);
    await waitFor(() => fired.includes("marker"), { what: "the marker timer" });
    expect(fired).toEqual(["marker"]);
    expect(clock.pending()).toBe(0);
  });

  it("fires by real time too when nobody advances it", async () => {
    const clock = new OffsetClock({ offsetMs: 86_400_000 });
    const before = clock.now();
    let firedAt: number | undefined;
    clock.setTimeout(() => (firedAt = clock.now()), 5);
    const at = await waitFor(() => firedAt, { what: "a short real-time timer" });
    expect(at - before).toBeGreaterThanOrEqual(4);
    expect(before - Date.now()).toBeGreaterThan(86_000_000);
  });
});
