import { describe, it, expect } from "@jest/globals";
import { matchesStatus, parseStatusCodes, statusCodeProblem } from "./status-codes.js";

describe("parseStatusCodes", () => {
  it.each([
    [["200-299"], [[200, 299]]],
    [["200"], [[200, 200]]],
    [
      ["200", "301-302", "404"],
      [
        [200, 200],
        [301, 302],
        [404, 404],
      ],
    ],
    [["100-599"], [[100, 599]]],
    [["204-204"], [[204, 204]]],
  ])("reads %j as inclusive ranges", (list, ranges) => {
    expect(parseStatusCodes(list)).toEqual(ranges);
  });

  it.each([
    [["99"], 0, "within 100-599"],
    [["600"], 0, "within 100-599"],
    [["200", "2000"], 1, "within 100-599"],
    [["200-"], 0, "within 100-599"],
    [["abc"], 0, "within 100-599"],
    [["200 - 299"], 0, "within 100-599"],
    [["299-200"], 0, "ordered low-high"],
  ])("rejects %j, naming entry %d", (list, index, why) => {
    expect(() => parseStatusCodes(list)).toThrow(`statusCodes[${index}]`);
    expect(() => parseStatusCodes(list)).toThrow(why);
  });
});

describe("statusCodeProblem", () => {
  it("says nothing about a valid range", () => {
    expect(statusCodeProblem("200-399")).toBeUndefined();
  });
  it("explains a reversed range", () => {
    expect(statusCodeProblem("399-200")).toBe("range must be ordered low-high");
  });
});

describe("matchesStatus", () => {
  const defaults = parseStatusCodes(["200-299"]);
  const several = parseStatusCodes(["200", "301-302"]);
  it.each([
    [200, defaults, true],
    [299, defaults, true],
    [199, defaults, false],
    [300, defaults, false],
    [302, defaults, false],
    [200, several, true],
    [201, several, false],
    [301, several, true],
    [302, several, true],
    [303, several, false],
  ])("judges %d against %j: %s", (code, ranges, expected) => {
    expect(matchesStatus(code, ranges)).toBe(expected);
  });

  it("matches nothing with no ranges", () => {
    expect(matchesStatus(200, [])).toBe(false);
  });
});

describe("matchesStatus, for any codes and ranges", () => {
  it("agrees with listing every code of every range", async () => {
    const fc = (await import("fast-check")).default;
    const code = fc.integer({ min: 100, max: 599 });
    const entry = fc.tuple(code, code).map(([a, b]) => (a === b ? String(a) : `${Math.min(a, b)}-${Math.max(a, b)}`));
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), code, (entries, probe) => {
        const listed = new Set(
          entries.flatMap((e) => {
            const [lo, hi = lo] = e.split("-").map(Number) as [number, number?];
            return Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
          }),
        );
        return matchesStatus(probe, parseStatusCodes(entries)) === listed.has(probe);
      }),
      { numRuns: 500 },
    );
  });
});
