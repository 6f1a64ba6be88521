import { describe, it, expect } from "@jest/globals";
import { runCel, toCelValue } from "./cel-program.js";
import { validateCelRules } from "./cel-rules.js";
import type { Schema } from "./crd-schema.js";

/** Runs an expression with each variable converted as the server converts schema-less JSON. */
function evaluate(expression: string, vars: Record<string, unknown>) {
  return runCel(expression, Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, toCelValue(v, undefined)])));
}

describe("CEL evaluation through @bufbuild/cel", () => {
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
    [
      "self.all(h, self.exists_one(o, o.name.lowerAscii() == h.name.lowerAscii()))",
      { self: [{ name: "A" }, { name: "b" }] },
      true,
    ],
    [
      "self.all(h, self.exists_one(o, o.name.lowerAscii() == h.name.lowerAscii()))",
      { self: [{ name: "A" }, { name: "a" }] },
      false,
    ],
    ["!(self.lowerAscii() in ['host', 'content-length', 'te'])", { self: "Content-Length" }, false],
    ["!(self.lowerAscii() in ['host', 'content-length', 'te'])", { self: "X-Env" }, true],
    ["duration(self) >= duration('30s') && duration(self) <= duration('168h')", { self: "1h30m" }, true],
    ["duration(self) >= duration('30s') && duration(self) <= duration('168h')", { self: "10s" }, false],
    [
      "self.operator in ['In', 'NotIn'] ? size(self.values) > 0 : true",
      { self: { operator: "In", values: ["x"] } },
      true,
    ],
    ["self.map(x, x * 2).filter(y, y > 2) == [4, 6]", { self: [1, 2, 3] }, true],
    ["'a' + string(self.n) == 'a7'", { self: { n: 7 } }, true],
    ["self.x == oldSelf.x", { self: { x: 1 }, oldSelf: { x: 1 } }, true],
    ["{'a': 1}['a'] == 1 && 'k' in {'k': 2}", { self: "" }, true],
    ["7 / 2 == 3 && 7 % 2 == 1 && -(1) == -1", { self: "" }, true],
    [
      "self.split(',').join('+') == 'a+b' && self.replace(',', '') == 'ab' && self.indexOf(',') == 1",
      { self: "a,b" },
      true,
    ],
    [
      "self.isSorted() && self.sum() == 6 && self.min() == 1 && self.max() == 3 && self.indexOf(2) == 1",
      { self: [1, 2, 3] },
      true,
    ],
    ["self.isSorted()", { self: ["b", "a"] }, false],
    ["self.find('[0-9]+') == '12' && self.findAll('[a-z]') == ['a', 'b']", { self: "a12b" }, true],
  ])("%s over %j is %j", (expr, vars, expected) => {
    expect(evaluate(expr, vars)).toEqual({ kind: "value", value: expected });
  });

  it.each([
    ["self.missing == 1", { self: {} }, { kind: "evaluation-error", message: "no such key: missing" }],
    ["1 / self", { self: 0 }, { kind: "evaluation-error", message: "int divide by zero" }],
    ["nope(1)", { self: 1 }, { kind: "compile-error", message: "undeclared reference to 'nope'" }],
  ])("fails %s with %j", (expr, vars, outcome) => {
    expect(evaluate(expr, vars)).toEqual(outcome);
  });

  it("reports a syntax error as a compile error", () => {
    expect(evaluate("self +", { self: 1 }).kind).toBe("compile-error");
  });

  it("absorbs an error on one side of || or && when the other side decides, as CEL does", () => {
    expect(evaluate("self.missing == 1 || true", { self: {} })).toEqual({ kind: "value", value: true });
    expect(evaluate("false && self.missing == 1", { self: {} })).toEqual({ kind: "value", value: false });
  });
});

describe("values as the schema types them", () => {
  it.each<[string, unknown, Schema, boolean]>([
    ["an integer field is a CEL int", 3, { type: "integer" }, true],
    ["a number field is a CEL double, even when whole", 3, { type: "number" }, false],
    ["an int-or-string number is a CEL int", 3, { "x-kubernetes-int-or-string": true }, true],
  ])("%s", (_name, value, schema, isInt) => {
    expect(runCel("type(self) == int", { self: toCelValue(value, schema) })).toEqual({ kind: "value", value: isInt });
  });
});

describe("CRD validation rules", () => {
  const schema: Schema = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        "x-kubernetes-validations": [
          {
            rule: "self.min <= self.max",
            messageExpression: "'min ' + string(self.min) + ' exceeds max'",
            fieldPath: ".min",
          },
        ],
        properties: {
          min: { type: "integer" },
          max: { type: "integer" },
          mode: {
            type: "string",
            "x-kubernetes-validations": [
              { rule: "self == oldSelf", message: "mode is immutable", reason: "FieldValueForbidden" },
            ],
          },
          ports: {
            type: "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            items: {
              type: "object",
              required: ["name"],
              properties: { name: { type: "string" }, number: { type: "integer" } },
              "x-kubernetes-validations": [
                { rule: "self.number == oldSelf.number", message: "a port's number is immutable" },
              ],
            },
          },
          tags: {
            type: "array",
            items: { type: "string", "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "never runs" }] },
          },
          limit: { type: "integer", "x-kubernetes-validations": [{ rule: "self.size() > 0" }] },
          label: {
            type: "string",
            "x-kubernetes-validations": [{ rule: "self.startsWith('x')", messageExpression: "self.missing" }],
          },
          name: {
            type: "string",
            "x-kubernetes-validations": [{ rule: "self.size() < 3", messageExpression: "'  '", message: "too long" }],
          },
          labels: {
            type: "object",
            additionalProperties: {
              type: "string",
              "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "label values are immutable" }],
            },
          },
          when: { type: "string", "x-kubernetes-validations": [{ rule: "duration(self) > duration('1s')" }] },
        },
      },
    },
  };
  const spec = (s: Record<string, unknown>) => ({ spec: { min: 1, max: 2, ...s } });

  it.each<[string, Record<string, unknown>, Record<string, unknown> | undefined, unknown[]]>([
    ["a valid object passes", spec({ mode: "a" }), undefined, []],
    [
      "a failed rule reports its message expression at the rule's fieldPath",
      spec({ min: 5 }),
      undefined,
      [{ field: "spec.min", reason: "FieldValueInvalid", message: 'Invalid value: "object": min 5 exceeds max' }],
    ],
    ["a transition rule does not run on create", spec({ mode: "b" }), undefined, []],
    [
      "a transition rule runs on update with the rule's reason",
      spec({ mode: "b" }),
      spec({ mode: "a" }),
      [{ field: "spec.mode", reason: "FieldValueForbidden", message: "Forbidden: mode is immutable" }],
    ],
    ["a transition rule does not run when the old object lacks the field", spec({ mode: "b" }), spec({}), []],
    [
      "items of a map-type list are compared with the old item of the same key",
      spec({
        ports: [
          { name: "b", number: 2 },
          { name: "a", number: 9 },
        ],
      }),
      spec({
        ports: [
          { name: "a", number: 1 },
          { name: "b", number: 2 },
        ],
      }),
      [
        {
          field: "spec.ports[1]",
          reason: "FieldValueInvalid",
          message: 'Invalid value: "object": a port\'s number is immutable',
        },
      ],
    ],
    [
      "a new item of a map-type list has no old value",
      spec({ ports: [{ name: "c", number: 3 }] }),
      spec({ ports: [] }),
      [],
    ],
    ["items of other lists get no old value", spec({ tags: ["b"] }), spec({ tags: ["a"] }), []],
    [
      "values of a map are compared with the old value of the same key",
      spec({ labels: { a: "1", b: "2" } }),
      spec({ labels: { a: "0" } }),
      [
        {
          field: "spec.labels.a",
          reason: "FieldValueInvalid",
          message: 'Invalid value: "string": label values are immutable',
        },
      ],
    ],
    [
      "a rule without a message reports the rule",
      spec({ when: "1s" }),
      undefined,
      [
        {
          field: "spec.when",
          reason: "FieldValueInvalid",
          message: "Invalid value: \"string\": failed rule: duration(self) > duration('1s')",
        },
      ],
    ],
    [
      "a failing message expression falls back to the default message",
      spec({ label: "y" }),
      undefined,
      [
        {
          field: "spec.label",
          reason: "FieldValueInvalid",
          message: "Invalid value: \"string\": failed rule: self.startsWith('x')",
        },
      ],
    ],
    [
      "a blank message expression falls back to the static message",
      spec({ name: "long" }),
      undefined,
      [{ field: "spec.name", reason: "FieldValueInvalid", message: 'Invalid value: "string": too long' }],
    ],
    [
      "an overload error is worded as the real server words it",
      spec({ limit: 3 }),
      undefined,
      [
        {
          field: "spec.limit",
          reason: "FieldValueInvalid",
          message: expect.stringMatching(
            /^Invalid value: "integer": 'no such overload: .*': call arguments did not match a supported operator, function or macro signature for rule: self.size\(\) > 0$/,
          ),
        },
      ],
    ],
    [
      "an evaluation error names the error and the rule",
      spec({ when: "soon" }),
      undefined,
      [
        {
          field: "spec.when",
          reason: "FieldValueInvalid",
          message: expect.stringMatching(
            /^Invalid value: "string": .*duration.* evaluating rule: duration\(self\) > duration\('1s'\)$/,
          ),
        },
      ],
    ],
  ])("%s", (_name, value, old, expected) => {
    expect(validateCelRules(value, old, schema, "")).toEqual(expected);
  });
});
