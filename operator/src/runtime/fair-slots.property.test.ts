import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { FairSlots } from "./fair-slots.js";

type Op = { kind: "push"; ns: string } | { kind: "next" } | { kind: "release"; index: number };

const NAMESPACES = ["a", "b", "c", "d", "e"];
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("push" as const), ns: fc.constantFrom(...NAMESPACES) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("next" as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("release" as const), index: fc.nat() }) },
);

describe("FairSlots properties", () => {
  it("holds both limits, is work-conserving, keeps each namespace's order and grants each eligible namespace within N grants", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(op, { maxLength: 200 }),
        (limit, perNamespace, ops) => {
          const slots = new FairSlots<{ ns: string; seq: number }>({ limit, perNamespaceLimit: perNamespace });
          // The model: what each namespace has waiting (in push order) and in flight.
          const waiting = new Map<string, number[]>(NAMESPACES.map((n) => [n, []]));
          const inFlight = new Map<string, number>(NAMESPACES.map((n) => [n, 0]));
          const held: string[] = [];
          // Grants to other namespaces while this one could have had a slot.
          const passedOver = new Map<string, number>(NAMESPACES.map((n) => [n, 0]));
          let seq = 0;
          let total = 0;
          const eligible = (ns: string) =>
            (waiting.get(ns) as number[]).length > 0 && (inFlight.get(ns) as number) < perNamespace;

          for (const o of ops) {
            if (o.kind === "push") {
              slots.push(o.ns, { ns: o.ns, seq });
              (waiting.get(o.ns) as number[]).push(seq++);
            } else if (o.kind === "release") {
              if (held.length === 0) continue;
              const [ns] = held.splice(o.index % held.length, 1) as [string];
              slots.release(ns);
              inFlight.set(ns, (inFlight.get(ns) as number) - 1);
              total--;
            } else {
              const got = slots.next();
              if (got === undefined) {
                // Work-conserving: nothing granted only when the pool is full or nobody may take a slot.
                expect(total === limit || NAMESPACES.every((n) => !eligible(n))).toBe(true);
                continue;
              }
              expect(total).toBeLessThan(limit);
              expect(eligible(got.ns)).toBe(true);
              expect((waiting.get(got.ns) as number[]).shift()).toBe(got.seq);
              for (const n of NAMESPACES)
                if (n !== got.ns && eligible(n)) passedOver.set(n, (passedOver.get(n) as number) + 1);
              passedOver.set(got.ns, 0);
              inFlight.set(got.ns, (inFlight.get(got.ns) as number) + 1);
              held.push(got.ns);
              total++;
            }
            for (const n of NAMESPACES) {
              if (!eligible(n)) passedOver.set(n, 0);
              // No starvation: with N namespaces, at most N - 1 others are served before it.
              expect(passedOver.get(n)).toBeLessThanOrEqual(NAMESPACES.length - 1);
              expect(slots.inFlightOf(n)).toBe(inFlight.get(n));
              expect(slots.inFlightOf(n)).toBeLessThanOrEqual(perNamespace);
              expect(slots.waitingOf(n)).toBe((waiting.get(n) as number[]).length);
            }
            expect(slots.inFlight).toBe(total);
            expect(slots.inFlight).toBeLessThanOrEqual(limit);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
