import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { computeHealth, initialHealth, type HealthRecord } from "./health.js";
import type { EvaluationSettings } from "./types.js";
import { SECOND, T0 } from "./testing/builders.js";

const thresholdsArb: fc.Arbitrary<EvaluationSettings> = fc.record({
  failureThreshold: fc.integer({ min: 1, max: 5 }),
  successThreshold: fc.integer({ min: 1, max: 5 }),
  startupGraceSeconds: fc.integer({ min: 0, max: 30 }),
});

const windowArb: fc.Arbitrary<EvaluationSettings> = fc
  .record({
    sampleSize: fc.integer({ min: 1, max: 8 }),
    required: fc.integer({ min: 1, max: 8 }),
    startupGraceSeconds: fc.integer({ min: 0, max: 30 }),
  })
  .map(({ sampleSize, required, startupGraceSeconds }) => ({
    failureThreshold: 1,
    successThreshold: 1,
    startupGraceSeconds,
    window: { sampleSize, successfulSamplesRequired: Math.min(required, sampleSize) },
  }));

const settingsArb = fc.oneof(thresholdsArb, windowArb);
/** A health history: results one to three seconds apart. */
const historyArb = fc.array(fc.record({ success: fc.boolean(), gap: fc.integer({ min: 1, max: 3 }) }), {
  maxLength: 60,
});

function replay(settings: EvaluationSettings, history: Array<{ success: boolean; gap: number }>, start?: HealthRecord) {
  const steps: Array<{ at: number; record: HealthRecord }> = [];
  let record = start;
  let at = T0;
  for (const h of history) {
    at += h.gap * SECOND;
    record = computeHealth(
      record,
      { success: h.success, failureClass: h.success ? "HTTP 200" : "HTTP 503", at },
      settings,
      T0,
    ).record;
    steps.push({ at, record });
  }
  return steps;
}

describe("computeHealth invariants over random histories", () => {
  it("never marks a pod Unhealthy inside its startup grace, in threshold or window mode", () => {
    fc.assert(
      fc.property(settingsArb, historyArb, (settings, history) => {
        for (const { at, record } of replay(settings, history)) {
          if (at < T0 + settings.startupGraceSeconds * SECOND) expect(record.state).not.toBe("Unhealthy");
        }
      }),
      { numRuns: 500 },
    );
  });

  it("keeps unhealthySince exactly while Unhealthy, never after since, and the window bounded", () => {
    fc.assert(
      fc.property(settingsArb, historyArb, (settings, history) => {
        for (const { at, record } of replay(settings, history)) {
          expect(record.unhealthySince !== undefined).toBe(record.state === "Unhealthy");
          if (record.unhealthySince !== undefined) expect(record.unhealthySince).toBe(record.since);
          expect(record.since).toBeLessThanOrEqual(at);
          expect(record.samples.length).toBeLessThanOrEqual(settings.window?.sampleSize ?? 0);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("follows the thresholds once the grace is over", () => {
    fc.assert(
      fc.property(thresholdsArb, historyArb, (settings, history) => {
        const steps = replay(settings, history);
        let successes = 0;
        let failures = 0;
        steps.forEach(({ at, record }, i) => {
          if (history[i]!.success) [successes, failures] = [successes + 1, 0];
          else [successes, failures] = [0, failures + 1];
          if (successes >= settings.successThreshold) expect(record.state).toBe("Healthy");
          if (failures >= settings.failureThreshold && at >= T0 + settings.startupGraceSeconds * SECOND)
            expect(record.state).toBe("Unhealthy");
          if (i > 0 && successes < settings.successThreshold && failures < settings.failureThreshold) {
            expect(record.state).toBe(steps[i - 1]!.record.state);
          }
        });
      }),
      { numRuns: 500 },
    );
  });

  it("in window mode, judges exactly the last sampleSize results once the grace is over", () => {
    fc.assert(
      fc.property(windowArb, historyArb, (settings, history) => {
        const w = settings.window!;
        replay(settings, history).forEach(({ at, record }, i) => {
          if (i + 1 < w.sampleSize) return expect(record.state).toBe("Unknown");
          const ok = history.slice(i + 1 - w.sampleSize, i + 1).filter((h) => h.success).length;
          if (ok >= w.successfulSamplesRequired) expect(record.state).toBe("Healthy");
          else if (at >= T0 + settings.startupGraceSeconds * SECOND) expect(record.state).toBe("Unhealthy");
        });
      }),
      { numRuns: 500 },
    );
  });

  it("does not change a restored state on a single result unless its threshold is 1", () => {
    fc.assert(
      fc.property(
        thresholdsArb,
        fc.constantFrom("Healthy" as const, "Unhealthy" as const),
        fc.boolean(),
        (settings, state, success) => {
          const start = initialHealth({ state, since: T0, unhealthySince: T0 });
          const [step] = replay(settings, [{ success, gap: 1 }], start);
          const threshold = success ? settings.successThreshold : settings.failureThreshold;
          const flips = (success ? "Healthy" : "Unhealthy") !== state;
          const inGrace = T0 + SECOND < T0 + settings.startupGraceSeconds * SECOND;
          const expected =
            flips && threshold === 1 && !(inGrace && !success) ? (success ? "Healthy" : "Unhealthy") : state;
          expect(step!.record.state).toBe(expected);
          if (step!.record.state === "Unhealthy")
            expect(step!.record.unhealthySince).toBe(state === "Unhealthy" ? T0 : T0 + SECOND);
        },
      ),
      { numRuns: 300 },
    );
  });
});
