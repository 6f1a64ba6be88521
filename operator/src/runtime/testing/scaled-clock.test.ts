import { describe, it, expect } from "@jest/globals";
import { ScaledClock } from "./scaled-clock.js";
import { waitFor } from "../../../../test/support/wait-for.js";

describe("ScaledClock", () => {
  it("advances now() rate times faster than real time from its origin", async () => {
    const real = Date.now();
    const clock = new ScaledClock(10, { real, virtual: 0 });
    const before = clock.now();
    await waitFor(() => Date.now() - real >= 50, { what: "50 real ms" });
    const elapsedReal = Date.now() - real;
    expect(before).toBeGreaterThanOrEqual(0);
    expect(clock.now()).toBeGreaterThanOrEqual(elapsedReal * 10);
  });

  it("fires a timer once its virtual delay has passed on the virtual clock", async () => {
    const clock = new ScaledClock(20);
    const setAt = clock.now();
    let firedAt: number | undefined;
    clock.setTimeout(() => (firedAt = clock.now()), 1000);
    const at = await waitFor(() => firedAt, { timeoutMs: 2000, what: "the timer" });
    expect(at - setAt).toBeGreaterThanOrEqual(1000 - 20);
  });

  it("does not fire a cleared timer", async () => {
    const clock = new ScaledClock(20);
    let fired = false;
    const h = clock.setTimeout(() => (fired = true), 200);
    clock.clearTimeout(h);
    let later = false;
    clock.setTimeout(() => (later = true), 400);
    await waitFor(() => later, { what: "a later timer" });
    expect(fired).toBe(false);
  });

  it("refuses a rate that is not a positive number", () => {
    for (const rate of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new ScaledClock(rate)).toThrow(/positive/);
  });
});
