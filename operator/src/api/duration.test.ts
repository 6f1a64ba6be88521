import { describe, it, expect } from "@jest/globals";
import { formatDuration, parseDuration } from "./duration.js";

describe("parseDuration", () => {
  it.each([
    ["1h", 3_600_000],
    ["90m", 5_400_000],
    ["30s", 30_000],
    ["1h30m", 5_400_000],
    ["1.5h", 5_400_000],
    ["168h", 604_800_000],
    ["250ms", 250],
    ["1m30s500ms", 90_500],
    ["1500us", 1.5],
    ["1.001s", 1001],
    ["2.023s", 2023],
    ["1h0.5s", 3_600_500],
    ["0", 0],
  ])("reads %s as %d ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(["", "1", "h", "-1h", "+1h", "1d", "1 h", "1H", "1h ", ".5h", "1.h"])(
    "rejects %j, naming the input",
    (input) => {
      expect(() => parseDuration(input)).toThrow(`parsing duration "${input}"`);
    },
  );
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [250, "250ms"],
    [1500, "1.5s"],
    [30_000, "30s"],
    [3_600_000, "1h"],
    [5_400_000, "1h30m"],
    [3_661_000, "1h1m1s"],
    [604_800_000, "168h"],
  ])("writes %d ms as %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([0, 250, 1500, 30_000, 3_600_000, 5_400_000, 3_661_000, 604_800_000])(
    "round-trips %d ms through parseDuration",
    (ms) => {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    },
  );

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])("refuses %d", (ms) => {
    expect(() => formatDuration(ms)).toThrow("formatting duration");
  });
});

describe("formatDuration and parseDuration, for any whole number of milliseconds", () => {
  it("round-trip exactly", async () => {
    const fc = (await import("fast-check")).default;
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 10 * 24 * 3_600_000 })),
        (ms) => parseDuration(formatDuration(ms)) === ms,
      ),
      { numRuns: 2000 },
    );
  });
});
