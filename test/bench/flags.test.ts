import { describe, expect, it } from "@jest/globals";
import { FlagError, scenariosFlag } from "./flags.js";

describe("--scenarios", () => {
  it.each([
    ["every scenario when not given", undefined, [1, 2, 3, 4]],
    ["the one given", "1", [1]],
    ["a list, spaces allowed", "3, 1", [3, 1]],
  ])("picks %s", (_name, raw, want) => {
    expect([...scenariosFlag(raw)]).toEqual(want);
  });

  it.each([
    ["an unknown number", "5"],
    ["a word", "one"],
    ["an empty list", ""],
  ])("refuses %s, naming the flag", (_name, raw) => {
    expect(() => scenariosFlag(raw)).toThrow(FlagError);
    expect(() => scenariosFlag(raw)).toThrow("--scenarios");
  });
});
