import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { FakeClock } from "./testing/fake-clock.js";
import { WorkQueue } from "./work-queue.js";

type Op =
  | { kind: "add"; key: string }
  | { kind: "addAfter"; key: string; ms: number }
  | { kind: "addRateLimited"; key: string }
  | { kind: "take" }
  | { kind: "done"; index: number }
  | { kind: "advance"; ms: number };

const key = fc.constantFrom("ns/a", "ns/b", "ns/c", "ns/d");
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), key }),
  fc.record({ kind: fc.constant("addAfter" as const), key, ms: fc.integer({ min: 0, max: 2000 }) }),
  fc.record({ kind: fc.constant("addRateLimited" as const), key }),
  fc.record({ kind: fc.constant("take" as const) }),
  fc.record({ kind: fc.constant("done" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 1500 }) }),
);

describe("WorkQueue properties", () => {
  it("never hands out a key that is in flight, and every add is eventually followed by a run", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops) => {
        const clock = new FakeClock(0);
        const queue = new WorkQueue({ clock });
        const inFlight: string[] = [];
        // Keys with an add not yet followed by the start of a run.
        const owed = new Set<string>();
        let adds = 0;
        let runs = 0;

        const take = async () => {
          const k = (await queue.get()) as string;
          expect(inFlight).not.toContain(k);
          inFlight.push(k);
          owed.delete(k);
          runs++;
        };

        for (const o of ops) {
          switch (o.kind) {
            case "add":
              queue.add(o.key);
              owed.add(o.key);
              adds++;
              break;
            case "addAfter":
            case "addRateLimited":
              if (o.kind === "addAfter") queue.addAfter(o.key, o.ms);
              else queue.addRateLimited(o.key);
              owed.add(o.key);
              adds++;
              break;
            case "take":
              if (queue.len() > 0) await take();
              break;
            case "done":
              if (inFlight.length > 0) queue.done(inFlight.splice(o.index % inFlight.length, 1)[0]!);
              break;
            case "advance":
              clock.advance(o.ms);
              break;
          }
        }

        // Finish everything: all delays fire, all work completes.
        for (const k of inFlight.splice(0)) queue.done(k);
        clock.advance(10_000_000);
        while (queue.len() > 0) {
          await take();
          queue.done(inFlight.pop()!);
        }
        expect([...owed]).toEqual([]);
        expect(runs).toBeLessThanOrEqual(adds);
      }),
      { numRuns: 300 },
    );
  });
});
