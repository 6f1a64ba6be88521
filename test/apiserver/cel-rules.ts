// Evaluates a CRD schema's x-kubernetes-validations rules (CEL), with self and oldSelf, as the real server does.
import { fieldErrors, type FieldError } from "./errors.js";
import type { Schema } from "./crd-schema.js";
import { evaluateCel } from "./cel-eval.js";

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

interface Rule {
  rule: string;
  message?: string;
  messageExpression?: string;
  fieldPath?: string;
  reason?: string;
  optionalOldSelf?: boolean;
}

function joinFieldPath(path: string, fieldPath: string | undefined): string {
  if (!fieldPath) return path;
  const rel = fieldPath.startsWith(".") || fieldPath.startsWith("[") ? fieldPath : `.${fieldPath}`;
  return (path + rel).replace(/^\./, "");
}

/** The structural type the real server prints as the invalid value of a failed rule ("" for int-or-string). */
function schemaTypeName(schema: Schema): string {
  if (schema["x-kubernetes-int-or-string"] === true) return "";
  return (schema.type as string | undefined) ?? "";
}

function ruleError(rule: Rule, path: string, schema: Schema, message: string): FieldError {
  const field = joinFieldPath(path, rule.fieldPath);
  switch (rule.reason) {
    case "FieldValueRequired":
      return fieldErrors.required(field, message);
    case "FieldValueForbidden":
      return fieldErrors.forbidden(field, message);
    case "FieldValueDuplicate":
      return { field, reason: "FieldValueDuplicate", message: `Duplicate value: ${JSON.stringify(schemaTypeName(schema))}: ${message}` };
    default:
      return fieldErrors.invalid(field, schemaTypeName(schema), message);
  }
}

/** Walks value and schema together, evaluating every rule where the value is present. */
export function validateCelRules(value: unknown, old: unknown, schema: Schema | undefined, path: string, out: FieldError[] = []): FieldError[] {
  if (!schema || value === undefined || value === null) return out;
  const rules = (schema["x-kubernetes-validations"] ?? []) as Rule[];
  for (const rule of rules) {
    const usesOld = /\boldSelf\b/.test(rule.rule);
    // Transition rules only run on update, when an old value exists.
    if (usesOld && old === undefined && !rule.optionalOldSelf) continue;
    const vars: Record<string, unknown> = { self: value };
    if (usesOld) vars.oldSelf = old;
    let ok: unknown;
    try {
      ok = evaluateCel(rule.rule, vars, schema);
    } catch (err) {
      out.push(fieldErrors.invalid(path, schemaTypeName(schema), `rule compile error or evaluation error: ${(err as Error).message}`));
      continue;
    }
    if (ok === true) continue;
    let message = rule.message ?? `failed rule: ${rule.rule}`;
    if (rule.messageExpression) {
      try {
        const m = evaluateCel(rule.messageExpression, vars, schema);
        if (typeof m === "string" && m.trim() !== "") message = m;
      } catch {
        // The real server falls back to the static message when the expression fails.
      }
    }
    out.push(ruleError(rule, path, schema, message));
  }
  if (isMap(value)) {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const [key, v] of Object.entries(value)) {
      const sub = props[key] ?? (isMap(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (sub) validateCelRules(v, isMap(old) ? old[key] : undefined, sub, path ? `${path}.${key}` : key, out);
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => validateCelRules(item, undefined, schema.items, `${path}[${i}]`, out));
  }
  return out;
}
