import { describe, it, expect } from "@jest/globals";
import fc from "fast-check";
import { pageOf, parseDebugQuery, type DebugQuery, type DebugTargetEntry } from "./debug-targets.js";

const targetArb: fc.Arbitrary<DebugTargetEntry> = fc.record({
  policy: fc.constantFrom("t1/web", "t1/api", "t10/web", "t2/web", "t2/a-b"),
  uid: fc.string({ minLength: 1, maxLength: 4 }),
});

const ordered = (a: DebugTargetEntry, b: DebugTargetEntry) =>
  a.policy !== b.policy ? (a.policy < b.policy ? -1 : 1) : a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;

describe("pageOf (property)", () => {
  it("following the continue markers serves every matching target once, in (policy, uid) order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(targetArb, { selector: (t) => `${t.policy}\u0000${t.uid}`, maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom(undefined, "t1", "t2"),
        (targets, limit, namespace) => {
          const served: DebugTargetEntry[] = [];
          let q: DebugQuery = { limit, ...(namespace ? { namespace } : {}) };
          for (let pages = 0; pages < 100; pages++) {
            const page = pageOf(targets, q);
            expect(page.targets.length).toBeLessThanOrEqual(limit);
            served.push(...page.targets);
            if (!page.truncated) break;
            const next = parseDebugQuery(
              new URLSearchParams({
                limit: String(limit),
                continue: page.continue!,
                ...(namespace ? { namespace } : {}),
              }),
            );
            if (typeof next === "string") throw new Error(next);
            q = next;
          }
          const expected = targets
            .filter((t) => namespace === undefined || t.policy.startsWith(`${namespace}/`))
            .sort(ordered);
          expect(served).toEqual(expected);
        },
      ),
    );
  });
});
