import { describe, expect, it } from "@jest/globals";
import { matchesLabelSelector, type LabelSelector } from "./label-selector.js";

const cases: Array<[string, LabelSelector, Record<string, string> | undefined, boolean]> = [
  [
    "matchLabels all present matches",
    { matchLabels: { app: "web", tier: "fe" } },
    { app: "web", tier: "fe", x: "y" },
    true,
  ],
  ["a missing matchLabels key does not match", { matchLabels: { app: "web" } }, { tier: "fe" }, false],
  ["a different value does not match", { matchLabels: { app: "web" } }, { app: "api" }, false],
  [
    "In matches a listed value",
    { matchExpressions: [{ key: "env", operator: "In", values: ["a", "b"] }] },
    { env: "b" },
    true,
  ],
  ["In does not match an absent key", { matchExpressions: [{ key: "env", operator: "In", values: ["a"] }] }, {}, false],
  ["NotIn matches an absent key", { matchExpressions: [{ key: "env", operator: "NotIn", values: ["a"] }] }, {}, true],
  [
    "NotIn rejects a listed value",
    { matchExpressions: [{ key: "env", operator: "NotIn", values: ["a"] }] },
    { env: "a" },
    false,
  ],
  ["Exists needs the key", { matchExpressions: [{ key: "env", operator: "Exists" }] }, { env: "" }, true],
  [
    "DoesNotExist rejects the key",
    { matchExpressions: [{ key: "env", operator: "DoesNotExist" }] },
    { env: "x" },
    false,
  ],
  [
    "an unknown operator matches nothing",
    { matchExpressions: [{ key: "env", operator: "Gt", values: ["1"] }] },
    { env: "2" },
    false,
  ],
  [
    "matchLabels and expressions are ANDed",
    { matchLabels: { app: "web" }, matchExpressions: [{ key: "env", operator: "Exists" }] },
    { app: "web" },
    false,
  ],
  ["no labels at all never match a non-empty selector", { matchLabels: { app: "web" } }, undefined, false],
];

describe("matchesLabelSelector", () => {
  it.each(cases)("%s", (_name, selector, labels, want) => {
    expect(matchesLabelSelector(selector, labels)).toBe(want);
  });
});
