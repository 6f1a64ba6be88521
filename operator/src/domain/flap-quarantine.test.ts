import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import {
  appendTransition,
  backoffMs,
  flapTimes,
  judgeQuarantine,
  MAX_FLAP_TRANSITIONS,
  type FlapTransition,
} from "./flap-quarantine.js";
import { MINUTE, SECOND, T0 } from "./testing/builders.js";

const H = "Healthy" as const;
const U = "Unhealthy" as const;
const settings = { flaps: 3, windowMs: 10 * MINUTE, maxBackoffMs: 10 * MINUTE };

/** Transitions one minute apart from T0, in the given states. */
function history(...states: Array<"Healthy" | "Unhealthy">): FlapTransition[] {
  return states.map((to, i) => ({ at: T0 + i * MINUTE, to }));
}

describe("flapTimes", () => {
  it.each([
    ["a pod Healthy from the start that turns Unhealthy once", history(H, U), []],
    ["a pod that recovered once", history(U, H), []],
    ["one relapse after a recovery", history(U, H, U), [T0 + 2 * MINUTE]],
    ["a pod first Healthy, then flapping twice", history(H, U, H, U, H, U), [T0 + 3 * MINUTE, T0 + 5 * MINUTE]],
    ["three relapses", history(U, H, U, H, U, H, U), [T0 + 2 * MINUTE, T0 + 4 * MINUTE, T0 + 6 * MINUTE]],
  ])("counts %s", (_name, h, expected) => {
    expect(flapTimes(h)).toEqual(expected);
  });
});

describe("backoffMs", () => {
  it.each([
    [0, 10 * MINUTE, MINUTE],
    [1, 10 * MINUTE, 2 * MINUTE],
    [3, 10 * MINUTE, 8 * MINUTE],
    [4, 10 * MINUTE, 10 * MINUTE],
    [500, 10 * MINUTE, 10 * MINUTE],
    [0, 2 * SECOND, 2 * SECOND],
    [3, 2 * SECOND, 2 * SECOND],
  ])("the back-off of quarantining flap %i with maxBackoff %i ms is %i ms", (k, max, expected) => {
    expect(backoffMs(k, max)).toBe(expected);
  });
});

describe("judgeQuarantine", () => {
  // U H U H U H U: flaps at 2, 4 and 6 minutes; the third quarantines for 1m, until 7m.
  const three = history(U, H, U, H, U, H, U);

  it("does not quarantine a pod below the flap count", () => {
    expect(judgeQuarantine(history(U, H, U, H, U), settings, T0 + 4 * MINUTE)).toBeUndefined();
  });

  it("quarantines on the flap that reaches the count, for the base back-off", () => {
    expect(judgeQuarantine(three, settings, T0 + 6 * MINUTE)).toEqual({
      until: T0 + 7 * MINUTE,
      flaps: 3,
      reason: "quarantined: 3 flaps in 10m, back at 2026-01-01T00:07:00Z",
    });
  });

  it("keeps the quarantine until its last millisecond and ends it at the instant", () => {
    expect(judgeQuarantine(three, settings, T0 + 7 * MINUTE - 1)?.until).toBe(T0 + 7 * MINUTE);
    expect(judgeQuarantine(three, settings, T0 + 7 * MINUTE)).toBeUndefined();
  });

  it("doubles the back-off with each further flap inside the window", () => {
    const four = history(U, H, U, H, U, H, U, H, U);
    expect(judgeQuarantine(four, settings, T0 + 8 * MINUTE)).toMatchObject({
      until: T0 + 10 * MINUTE,
      flaps: 4,
      reason: "quarantined: 4 flaps in 10m, back at 2026-01-01T00:10:00Z",
    });
  });

  it("caps the back-off at maxBackoff", () => {
    const many = history(...Array.from({ length: 15 }, (_, i) => (i % 2 === 0 ? U : H)));
    // Flaps at 2, 4, ..., 14 minutes: 5 inside the window (4m, 14m]; 1m × 2^2 = 4m, capped at 3m.
    expect(judgeQuarantine(many, { ...settings, maxBackoffMs: 3 * MINUTE }, T0 + 14 * MINUTE)).toMatchObject({
      until: T0 + 17 * MINUTE,
      flaps: 5,
    });
  });

  it("counts only the flaps inside the window ending at each flap", () => {
    // Flaps at 2, 4 and 6 minutes, but a window of 3m holds at most two of them.
    expect(judgeQuarantine(three, { ...settings, windowMs: 3 * MINUTE }, T0 + 6 * MINUTE)).toBeUndefined();
    // A window of exactly 4m excludes the flap 4m before: (f - window, f].
    expect(judgeQuarantine(three, { ...settings, windowMs: 4 * MINUTE }, T0 + 6 * MINUTE)).toBeUndefined();
    expect(judgeQuarantine(three, { ...settings, windowMs: 4 * MINUTE + 1 }, T0 + 6 * MINUTE)?.flaps).toBe(3);
  });

  it("ignores transitions after now", () => {
    expect(judgeQuarantine(three, settings, T0 + 5 * MINUTE)).toBeUndefined();
  });

  it("rounds the end up to the whole second status keeps", () => {
    const h = three.map((t, i) => (i === 6 ? { ...t, at: t.at + 400 } : t));
    expect(judgeQuarantine(h, settings, T0 + 6 * MINUTE + 500)?.until).toBe(T0 + 7 * MINUTE + SECOND);
  });

  it("keeps a quarantine restored from status after a restart, with no history", () => {
    expect(judgeQuarantine([], settings, T0, T0 + 90 * SECOND)).toEqual({
      until: T0 + 90 * SECOND,
      flaps: 0,
      reason: "quarantined: flapping (restored from status), back at 2026-01-01T00:01:30Z",
    });
    expect(judgeQuarantine([], settings, T0 + 90 * SECOND, T0 + 90 * SECOND)).toBeUndefined();
  });

  it("extends a restored quarantine by new flaps that end later", () => {
    expect(judgeQuarantine(three, settings, T0 + 6 * MINUTE, T0 + 6 * MINUTE + 30 * SECOND)?.until).toBe(
      T0 + 7 * MINUTE,
    );
    expect(judgeQuarantine(three, settings, T0 + 6 * MINUTE, T0 + 9 * MINUTE)?.until).toBe(T0 + 9 * MINUTE);
  });
});

describe("appendTransition", () => {
  it("keeps at most MAX_FLAP_TRANSITIONS, the newest", () => {
    let h: FlapTransition[] = [];
    for (let i = 0; i < MAX_FLAP_TRANSITIONS + 10; i++)
      h = appendTransition(h, { at: T0 + i * SECOND, to: i % 2 === 0 ? U : H });
    expect(h).toHaveLength(MAX_FLAP_TRANSITIONS);
    expect(h.at(-1)?.at).toBe(T0 + (MAX_FLAP_TRANSITIONS + 9) * SECOND);
  });

  it("drops transitions older than the longest window (24 h)", () => {
    const h = appendTransition(history(U, H), { at: T0 + 24 * 60 * MINUTE + MINUTE, to: U });
    expect(h).toEqual([{ at: T0 + 24 * 60 * MINUTE + MINUTE, to: U }]);
  });
});

describe("judgeQuarantine over random histories", () => {
  const historyArb = fc
    .array(fc.integer({ min: 1, max: 90 * SECOND }), { maxLength: 40 })
    .chain((gaps) => fc.tuple(fc.constant(gaps), fc.constantFrom(H, U)))
    .map(([gaps, first]) => {
      let at = T0;
      return gaps.map((gap, i): FlapTransition => ({ at: (at += gap), to: (i % 2 === 0) === (first === U) ? U : H }));
    });
  const settingsArb = fc.record({
    flaps: fc.integer({ min: 2, max: 6 }),
    windowMs: fc.integer({ min: 10 * SECOND, max: 20 * MINUTE }),
    maxBackoffMs: fc.integer({ min: SECOND, max: 20 * MINUTE }),
  });

  it("quarantines only after `flaps` flaps inside one window, for at most maxBackoff after the latest flap", () => {
    fc.assert(
      fc.property(historyArb, settingsArb, fc.integer({ min: 0, max: 60 * MINUTE }), (h, s, offset) => {
        const now = T0 + offset;
        const verdict = judgeQuarantine(h, s, now);
        if (!verdict) return;
        const flaps = flapTimes(h).filter((f) => f <= now);
        const last = flaps.filter((f) => f < verdict.until).at(-1)!;
        expect(verdict.until).toBeGreaterThan(now);
        expect(verdict.until).toBeLessThanOrEqual(Math.ceil((last + s.maxBackoffMs) / 1000) * 1000);
        expect(verdict.flaps).toBeGreaterThanOrEqual(s.flaps);
        expect(flaps.some((f) => flaps.filter((g) => g > f - s.windowMs && g <= f).length >= s.flaps)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
