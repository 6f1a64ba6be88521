// Over random sequences of due replacements in several namespaces, planned one reconcile at a
// time against the operator-wide ledger as charged so far: no namespace ever removes more than
// its share in any sliding 12 hours, and all namespaces together stay within the operator-wide cap.
import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { HOUR_MS, TWELVE_HOURS_MS, pruneLedger, type LedgerEntry } from "./budget.js";
import { chargeLedger } from "./ledger.js";
import { planReplacements } from "./replacement.js";
import { aCandidate, aPlanInput, aPolicy, NOW } from "./testing/replacement-builders.js";

const NAMESPACES = ["t1", "t2", "t3"];

const stepArb = fc.record({
  advanceMs: fc.integer({ min: 0, max: 4 * HOUR_MS }),
  namespace: fc.constantFrom(...NAMESPACES),
  pods: fc.integer({ min: 1, max: 4 }),
});

const runArb = fc.record({
  cap: fc.integer({ min: 0, max: 8 }),
  shareOfCap: fc.double({ min: 0, max: 1, noNaN: true }),
  // Entries written before shares existed: no namespace, operator-wide cap only.
  legacy: fc.integer({ min: 0, max: 3 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 30 }),
});

interface Removal {
  time: number;
  namespace: string | undefined;
}

function inWindow(removals: readonly Removal[], end: number): Removal[] {
  return removals.filter((r) => r.time > end - TWELVE_HOURS_MS && r.time <= end);
}

describe("the per-namespace share (property)", () => {
  it("no namespace exceeds its share and the operator-wide cap holds, in every sliding 12 hours", () => {
    fc.assert(
      fc.property(runArb, ({ cap, shareOfCap, legacy, steps }) => {
        const share = cap === 0 ? 0 : Math.max(1, Math.round(shareOfCap * cap));
        let now = NOW;
        let ledger: LedgerEntry[] = Array.from({ length: legacy }, (_, i) => ({
          pod: `old-${i}`,
          uid: `old-${i}`,
          time: NOW - i * HOUR_MS,
          method: "Evict" as const,
          policy: "old/web",
        }));
        const removals: Removal[] = ledger.map((e) => ({ time: e.time, namespace: undefined }));
        let serial = 0;
        for (const step of steps) {
          now += step.advanceMs;
          const candidates = Array.from({ length: step.pods }, () => {
            serial += 1;
            return aCandidate({
              uid: `uid-${serial}`,
              name: `web-${serial}`,
              unhealthySince: now - 2 * HOUR_MS,
              probingSince: now - 3 * HOUR_MS,
              lastResultAt: now - 1000,
            });
          });
          const plan = planReplacements(
            aPlanInput({
              now,
              share: { unhealthy: step.pods, targets: 100 },
              policy: aPolicy({ policy: `${step.namespace}/web`, maxPerHour: 100, maxPerDay: 100 }),
              candidates,
              operatorLedger: ledger,
              max12h: cap,
              maxPerNamespace12h: share,
            }),
          );
          for (const attempt of plan.attempts) {
            ledger = pruneLedger(chargeLedger(ledger, attempt.charge.entry), now, TWELVE_HOURS_MS);
            removals.push({ time: now, namespace: attempt.charge.entry.namespace });
          }
        }
        // Every window that ends at a removal the plan made (the legacy ones predate the run).
        for (const r of removals.filter((x) => x.namespace !== undefined)) {
          const window = inWindow(removals, r.time);
          expect(window.length).toBeLessThanOrEqual(cap);
          expect(window.filter((w) => w.namespace === r.namespace).length).toBeLessThanOrEqual(share);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a namespace with room is never held back by another namespace's spent share alone", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 10 }), (cap) => {
        const share = Math.max(1, Math.floor(cap / 2));
        const spent: LedgerEntry[] = Array.from({ length: share }, (_, i) => ({
          pod: `a-${i}`,
          uid: `a-${i}`,
          time: NOW - i * 1000,
          method: "Evict" as const,
          policy: "t1/web",
          namespace: "t1",
        }));
        const plan = planReplacements(
          aPlanInput({
            policy: aPolicy({ policy: "t2/web", maxPerHour: 100, maxPerDay: 100 }),
            candidates: [aCandidate()],
            operatorLedger: spent,
            max12h: cap,
            maxPerNamespace12h: share,
          }),
        );
        expect(plan.attempts).toHaveLength(1);
      }),
    );
  });
});
