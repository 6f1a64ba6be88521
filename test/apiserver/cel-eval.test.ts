import { describe, it, expect } from "@jest/globals";
import { evaluateCel } from "./cel-eval.js";
import { validateCelRules } from "./cel-rules.js";

describe("the CEL interpreter", () => {
  it.each([
    ["self.a <= self.b", { self: { a: 1, b: 2 } }, true],
    ["self.a <= self.b", { self: { a: 3, b: 2 } }, false],
    ["!has(self.path) || self.path.startsWith('/')", { self: {} }, true],
    ["!has(self.path) || self.path.startsWith('/')", { self: { path: "x" } }, false],
    ["has(self.value) != has(self.valueFrom)", { self: { value: "v" } }, true],
    ["size(self) == 3 || self.substring(0, 3) <= self.substring(4)", { self: "200-299" }, true],
    ["size(self) == 3 || self.substring(0, 3) <= self.substring(4)", { self: "299-200" }, false],
    ["type(self) == int ? (self >= 1 && self <= 65535) : self.matches('^[a-z]+$')", { self: 8080 }, true],
    ["type(self) == int ? (self >= 1 && self <= 65535) : self.matches('^[a-z]+$')", { self: "http" }, true],
    ["type(self) == int ? (self >= 1 && self <= 65535) : self.matches('^[a-z]+$')", { self: 0 }, false],
    ["self.all(h, self.exists_one(o, o.name.lowerAscii() == h.name.lowerAscii()))", { self: [{ name: "A" }, { name: "b" }] }, true],
    ["self.all(h, self.exists_one(o, o.name.lowerAscii() == h.name.lowerAscii()))", { self: [{ name: "A" }, { name: "a" }] }, false],
    ["duration(self) >= duration('30s') && duration(self) <= duration('168h')", { self: "1h30m" }, true],
    ["duration(self) >= duration('30s') && duration(self) <= duration('168h')", { self: "10s" }, false],
    ["self.operator in ['In', 'NotIn'] ? size(self.values) > 0 : true", { self: { operator: "In", values: ["x"] } }, true],
    ["self.map(x, x * 2).filter(y, y > 2) == [4, 6]", { self: [1, 2, 3] }, true],
    ["'a' + string(self.n) == 'a7'", { self: { n: 7 } }, true],
    ["self.x == oldSelf.x", { self: { x: 1 }, oldSelf: { x: 1 } }, true],
    ["{'a': 1}['a'] == 1 && 'k' in {'k': 2}", { self: null }, true],
    ["7 / 2 == 3 && 7 % 2 == 1 && -(1) == -1", { self: null }, true],
  ])("%s over %j is %j", (expr, vars, expected) => {
    expect(evaluateCel(expr, vars)).toBe(expected);
  });

  it.each([
    ["self.missing == 1", { self: {} }, "no such key: missing"],
    ["self +", { self: 1 }, "Syntax error"],
    ["nope(1)", { self: 1 }, "undeclared reference to 'nope'"],
  ])("fails %s with %s", (expr, vars, message) => {
    expect(() => evaluateCel(expr, vars)).toThrow(message);
  });

  it("absorbs an error on one side of || when the other side is true, as CEL does", () => {
    expect(evaluateCel("self.missing == 1 || true", { self: {} })).toBe(true);
    expect(evaluateCel("false && self.missing == 1", { self: {} })).toBe(false);
  });
});

describe("CRD validation rules", () => {
  const schema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        "x-kubernetes-validations": [{ rule: "self.min <= self.max", messageExpression: "'min ' + string(self.min) + ' exceeds max'", fieldPath: ".min" }],
        properties: {
          min: { type: "integer" },
          max: { type: "integer" },
          mode: { type: "string", "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "mode is immutable", reason: "FieldValueForbidden" }] },
        },
      },
    },
  };

  it("reports the message expression at the rule's fieldPath", () => {
    expect(validateCelRules({ spec: { min: 5, max: 2 } }, undefined, schema, "")).toEqual([
      { field: "spec.min", reason: "FieldValueInvalid", message: 'Invalid value: "object": min 5 exceeds max' },
    ]);
  });

  it("runs transition rules only when an old value exists, with the rule's reason", () => {
    expect(validateCelRules({ spec: { min: 1, max: 2, mode: "b" } }, undefined, schema, "")).toEqual([]);
    expect(validateCelRules({ spec: { min: 1, max: 2, mode: "b" } }, { spec: { min: 1, max: 2, mode: "a" } }, schema, "")).toEqual([
      { field: "spec.mode", reason: "FieldValueForbidden", message: "Forbidden: mode is immutable" },
    ]);
  });
});
