import { describe, expect, it } from "@jest/globals";
import { BatchGrid } from "./batch-grid.js";

/** A grid of 20–100 ms aiming at 32 probes a wake-up, over requests probed every periodMs, n of each. */
function gridOver(requests: Array<{ periodMs: number; n: number }>, minMs = 20): BatchGrid {
  const grid = new BatchGrid({ minMs, maxMs: 100, perBatch: 32 });
  for (const { periodMs, n } of requests) for (let i = 0; i < n; i++) grid.add(periodMs);
  return grid;
}

describe("the grid due probes start on", () => {
  it.each([
    { name: "is the shortest grid with nothing to probe", requests: [], want: 20 },
    {
      name: "is the shortest grid at 1,667 probes/s (32 probes take 19 ms)",
      requests: [{ periodMs: 30_000, n: 50_000 }],
      want: 20,
    },
    {
      name: "grows as the probe rate falls: 833 probes/s, 38 ms",
      requests: [{ periodMs: 30_000, n: 25_000 }],
      want: 38,
    },
    {
      name: "grows as the probe rate falls: 556 probes/s, 58 ms",
      requests: [{ periodMs: 30_000, n: 16_667 }],
      want: 58,
    },
    { name: "stops at 100 ms however few probes there are", requests: [{ periodMs: 30_000, n: 10 }], want: 100 },
    {
      name: "stops at 2% of the shortest period: 20 ms beside a 1 s period",
      requests: [
        { periodMs: 30_000, n: 10 },
        { periodMs: 1_000, n: 1 },
      ],
      want: 20,
    },
    {
      name: "adds the rates of every period: 1,000/s at 10 s and 1,000/s at 30 s, 16 ms, so 20",
      requests: [
        { periodMs: 10_000, n: 10_000 },
        { periodMs: 30_000, n: 30_000 },
      ],
      want: 20,
    },
  ])("$name", ({ requests, want }) => {
    expect(gridOver(requests).ms()).toBe(want);
  });

  it("is 0 (exact due times) when the shortest grid is 0, whatever the rate", () => {
    expect(gridOver([{ periodMs: 30_000, n: 10 }], 0).ms()).toBe(0);
  });

  it("follows requests removed and periods changed", () => {
    const grid = gridOver([{ periodMs: 30_000, n: 25_000 }]);
    for (let i = 0; i < 12_500; i++) grid.remove(30_000);
    expect(grid.ms()).toBe(77);
    grid.add(2_000);
    expect(grid.ms()).toBe(40);
    grid.remove(2_000);
    for (let i = 0; i < 12_500; i++) grid.remove(30_000);
    expect(grid.ms()).toBe(20);
  });
});
