// CEL for CRD validation rules through @bufbuild/cel, in the environment the real API server gives them:
// the standard library, the strings extension and Kubernetes' list and regex libraries.
import {
  CelScalar,
  celEnv,
  celMethod,
  isCelError,
  isCelList,
  listType,
  parse,
  plan,
  type CelList,
  type CelValue,
} from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import type { Schema } from "./crd-schema.js";

const DYN_LIST = listType(CelScalar.DYN);

/** Orders the scalars Kubernetes' list functions compare (ints, doubles, strings, bools). */
function compareScalars(a: CelValue, b: CelValue): number {
  const num = (v: CelValue): number | undefined =>
    typeof v === "bigint" || typeof v === "number" ? Number(v) : undefined;
  const na = num(a);
  const nb = num(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  throw new Error(`no such overload: cannot compare ${typeof a} with ${typeof b}`);
}

const items = (list: CelList): CelValue[] => [...list];

function extreme(list: CelList, sign: 1 | -1, name: string): CelValue {
  const all = items(list);
  if (all.length === 0) throw new Error(`${name} called on empty list`);
  return all.reduce((best, x) => (compareScalars(x, best) * sign > 0 ? x : best));
}

function sameValue(a: CelValue, b: CelValue): boolean {
  try {
    return compareScalars(a, b) === 0 && typeof a === typeof b;
  } catch {
    return false;
  }
}

/** Kubernetes' CEL list library (k8s.io/apiserver/pkg/cel/library/lists.go). */
const kubernetesLists = [
  celMethod("isSorted", DYN_LIST, [], CelScalar.BOOL, function () {
    const all = items(this);
    return all.every((x, i) => i === 0 || compareScalars(all[i - 1]!, x) <= 0);
  }),
  celMethod("sum", DYN_LIST, [], CelScalar.DYN, function () {
    const all = items(this);
    if (all.length === 0) return 0n;
    if (all.every((x) => typeof x === "bigint")) return (all as bigint[]).reduce((a, b) => a + b, 0n);
    return all.reduce((a: number, b) => a + Number(b), 0);
  }),
  celMethod("min", DYN_LIST, [], CelScalar.DYN, function () {
    return extreme(this, -1, "min");
  }),
  celMethod("max", DYN_LIST, [], CelScalar.DYN, function () {
    return extreme(this, 1, "max");
  }),
  celMethod("indexOf", DYN_LIST, [CelScalar.DYN], CelScalar.INT, function (x) {
    return BigInt(items(this).findIndex((y) => sameValue(x, y)));
  }),
  celMethod("lastIndexOf", DYN_LIST, [CelScalar.DYN], CelScalar.INT, function (x) {
    return BigInt(items(this).findLastIndex((y) => sameValue(x, y)));
  }),
];

/** Kubernetes' CEL regex library (k8s.io/apiserver/pkg/cel/library/regex.go). */
const kubernetesRegex = [
  celMethod("find", CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (re) {
    return new RegExp(re).exec(this)?.[0] ?? "";
  }),
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING], DYN_LIST, function (re) {
    return [...this.matchAll(new RegExp(re, "g"))].map((m) => m[0]);
  }),
  celMethod("findAll", CelScalar.STRING, [CelScalar.STRING, CelScalar.INT], DYN_LIST, function (re, limit) {
    const all = [...this.matchAll(new RegExp(re, "g"))].map((m) => m[0]);
    return limit < 0n ? all : all.slice(0, Number(limit));
  }),
];

const env = celEnv({ funcs: [...strings, ...kubernetesLists, ...kubernetesRegex] });

type Program = (bindings: Record<string, unknown>) => unknown;
type Compiled = { ok: true; program: Program } | { ok: false; message: string };
const compiled = new Map<string, Compiled>();

function compile(expression: string): Compiled {
  let entry = compiled.get(expression);
  if (!entry) {
    try {
      const run = plan(env, parse(expression));
      entry = { ok: true, program: (bindings) => run(bindings as Parameters<typeof run>[0]) };
    } catch (err) {
      entry = { ok: false, message: (err as Error).message };
    }
    compiled.set(expression, entry);
  }
  return entry;
}

export type CelOutcome =
  | { kind: "value"; value: unknown }
  | { kind: "compile-error"; message: string }
  | { kind: "evaluation-error"; message: string };

// cel-go's wording for the errors a rule's author sees; the library words a few of them differently.
function celGoWording(message: string): string {
  const field = /^field not found: (.*)$/.exec(message);
  if (field) return `no such key: ${field[1]}`;
  if (/^found no matching overload/.test(message)) return `no such overload: ${message}`;
  return message;
}

/** Runs a CEL expression over bindings already converted with toCelValue. Never throws. */
export function runCel(expression: string, bindings: Record<string, unknown>): CelOutcome {
  const c = compile(expression);
  if (!c.ok) return { kind: "compile-error", message: c.message };
  let result: unknown;
  try {
    result = c.program(bindings);
  } catch (err) {
    return { kind: "evaluation-error", message: celGoWording((err as Error).message) };
  }
  if (isCelError(result)) {
    // The library resolves functions while evaluating; cel-go finds an unknown one when compiling.
    const unbound = /^unbound function: (.*)$/.exec(result.message);
    if (unbound) return { kind: "compile-error", message: `undeclared reference to '${unbound[1]}'` };
    return { kind: "evaluation-error", message: celGoWording(result.message) };
  }
  return { kind: "value", value: isCelList(result) ? [...result] : result };
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * JSON to the CEL value the real server builds from the structural schema: integer (and int-or-string)
 * numbers are CEL ints, `number` fields doubles; under preserve-unknown-fields whole numbers are ints.
 */
export function toCelValue(value: unknown, schema: Schema | undefined): unknown {
  if (Array.isArray(value)) return value.map((x) => toCelValue(x, schema?.items));
  if (isMap(value)) {
    const props = (schema?.properties ?? {}) as Record<string, Schema>;
    const additional = isMap(schema?.additionalProperties) ? (schema.additionalProperties as Schema) : undefined;
    return new Map(Object.entries(value).map(([k, x]) => [k, toCelValue(x, props[k] ?? additional)]));
  }
  if (typeof value === "number") {
    const integral =
      schema?.type === "integer" ||
      schema?.["x-kubernetes-int-or-string"] === true ||
      (schema?.type === undefined && Number.isInteger(value));
    return integral && Number.isInteger(value) ? BigInt(value) : value;
  }
  return value;
}
