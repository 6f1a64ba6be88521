// Field errors shaped like k8s.io/apimachinery/pkg/util/validation/field (errors.go):
// `message` is the real ErrorBody(), e.g. `Invalid value: "x": must be ...`, which the real
// server puts into StatusCause.message; `field` is the dotted path with [i] / [key] parts.
import type { FieldCause } from "./index.js";

/** Go's %q / %v rendering of a bad value, close enough for strings, numbers and booleans. */
export function renderValue(value: unknown): string {
  if (value === undefined || value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  // Go prints structs with %#v; JSON is the readable stand-in here.
  return JSON.stringify(value);
}

const withDetail = (head: string, detail: string): string => (detail ? `${head}: ${detail}` : head);

export function invalid(field: string, value: unknown, detail: string): FieldCause {
  return { field, reason: "FieldValueInvalid", message: withDetail(`Invalid value: ${renderValue(value)}`, detail) };
}

export function required(field: string, detail = ""): FieldCause {
  return { field, reason: "FieldValueRequired", message: withDetail("Required value", detail) };
}

export function forbidden(field: string, detail: string): FieldCause {
  return { field, reason: "FieldValueForbidden", message: withDetail("Forbidden", detail) };
}

export function duplicate(field: string, value: unknown): FieldCause {
  return { field, reason: "FieldValueDuplicate", message: `Duplicate value: ${renderValue(value)}` };
}

export function notSupported(field: string, value: unknown, valid: readonly string[]): FieldCause {
  const detail = valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(", ")}` : "";
  return {
    field,
    reason: "FieldValueNotSupported",
    message: withDetail(`Unsupported value: ${renderValue(value)}`, detail),
  };
}

/** TooLong leaves the value out, like the real one. */
export function tooLong(field: string, maxLength: number): FieldCause {
  return { field, reason: "FieldValueTooLong", message: `Too long: must have at most ${maxLength} bytes` };
}

export function tooMany(field: string, actual: number, max: number): FieldCause {
  return { field, reason: "FieldValueTooMany", message: `Too many: ${actual}: must have at most ${max} items` };
}

/** Builds child paths the way field.Path.String() prints them. */
export const child = (base: string, name: string): string => (base ? `${base}.${name}` : name);
export const index = (base: string, i: number): string => `${base}[${i}]`;
export const key = (base: string, k: string): string => `${base}[${k}]`;

/** The real server folds identical messages (ErrorList.ToAggregate): so do we. */
export function dedupe(causes: FieldCause[]): FieldCause[] {
  const seen = new Set<string>();
  return causes.filter((c) => {
    const k = `${c.field}\u0000${c.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
