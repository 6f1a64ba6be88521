import { describe, it, expect } from "@jest/globals";
import { FakeClock } from "./fake-clock.js";

describe("FakeClock", () => {
  it("fires due timers in deadline order, ties in scheduling order, and moves now to each deadline", () => {
    const clock = new FakeClock(0);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(["b", clock.now()]), 20);
    clock.setTimeout(() => fired.push(["a", clock.now()]), 10);
    clock.setTimeout(() => fired.push(["a2", clock.now()]), 10);
    clock.setTimeout(() => fired.push(["late", clock.now()]), 100);
    clock.advance(50);
    expect(fired).toEqual([
      ["a", 10],
      ["a2", 10],
      ["b", 20],
    ]);
    expect(clock.now()).toBe(50);
    expect(clock.pending()).toBe(1);
  });

  it("fires timers scheduled while firing when they fall inside the window", () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
    }, 5);
    clock.advance(10);
    expect(fired).toEqual([5, 10]);
  });

  it("does not fire a cleared timer", () => {
    const clock = new FakeClock(0);
    let fired = false;
    const h = clock.setTimeout(() => (fired = true), 1);
    clock.clearTimeout(h);
    clock.advance(10);
    expect(fired).toBe(false);
  });
});
