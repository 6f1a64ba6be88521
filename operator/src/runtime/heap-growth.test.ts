import { describe, expect, it } from "@jest/globals";
import { applyHeapGrowth, heapGrowthFlag } from "./heap-growth.js";

describe("heap growth", () => {
  it.each([
    { name: "a percent becomes V8's heap growing flag", percent: 50, flag: "--heap-growing-percent=50" },
    { name: "zero sets nothing and leaves the heuristics to V8", percent: 0, flag: undefined },
  ])("$name", ({ percent, flag }) => {
    expect(heapGrowthFlag(percent)).toBe(flag);
    const set: string[] = [];
    applyHeapGrowth(percent, (f) => set.push(f));
    expect(set).toEqual(flag ? [flag] : []);
  });
});
