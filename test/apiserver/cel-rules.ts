// Evaluates a CRD schema's x-kubernetes-validations rules (CEL), with self and oldSelf, as the real server does.
import { fieldErrors, type FieldError } from "./errors.js";
import type { Schema } from "./crd-schema.js";
import { runCel, toCelValue } from "./cel-program.js";

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
      return {
        field,
        reason: "FieldValueDuplicate",
        message: `Duplicate value: ${JSON.stringify(schemaTypeName(schema))}: ${message}`,
      };
    default:
      return fieldErrors.invalid(field, schemaTypeName(schema), message);
  }
}

/** "failed rule: …" unless the rule has a message, as the real server defaults it. */
function staticMessage(rule: Rule): string {
  return rule.message?.trim() ? rule.message.trim() : `failed rule: ${rule.rule.trim()}`;
}

/** The rule's message, or its messageExpression's result when that is a non-blank single-line string. */
function failureMessage(rule: Rule, bindings: Record<string, unknown>): string {
  if (!rule.messageExpression) return staticMessage(rule);
  const m = runCel(rule.messageExpression, bindings);
  // The real server falls back to the static message when the expression fails.
  if (m.kind === "value" && typeof m.value === "string" && m.value.trim() !== "" && !m.value.includes("\n"))
    return m.value;
  return staticMessage(rule);
}

/** The old list item a new one is compared with: only map-type lists correlate items, by their keys. */
function correlatedItem(item: unknown, old: unknown, schema: Schema): unknown {
  if (schema["x-kubernetes-list-type"] !== "map" || !Array.isArray(old) || !isMap(item)) return undefined;
  const keys = (schema["x-kubernetes-list-map-keys"] ?? []) as string[];
  return old.find((o) => isMap(o) && keys.every((k) => o[k] === item[k]));
}

function evaluateRule(rule: Rule, value: unknown, old: unknown, schema: Schema, path: string, out: FieldError[]): void {
  const usesOld = /\boldSelf\b/.test(rule.rule);
  // Transition rules only run on update, when an old value correlates. optionalOldSelf would run them on
  // create with an optional oldSelf, which needs CEL optionals: not available here, so they are skipped.
  if (usesOld && old === undefined) return;
  const bindings: Record<string, unknown> = { self: toCelValue(value, schema) };
  if (usesOld) bindings.oldSelf = toCelValue(old, schema);
  const result = runCel(rule.rule, bindings);
  const type = schemaTypeName(schema);
  switch (result.kind) {
    case "compile-error":
      out.push(fieldErrors.invalid(path, type, `rule compile error or evaluation error: ${result.message}`));
      return;
    case "evaluation-error":
      // Worded as k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go words them.
      out.push(
        fieldErrors.invalid(
          path,
          type,
          result.message.startsWith("no such overload")
            ? `'${result.message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(rule)}`
            : `${result.message} evaluating rule: ${ruleText(rule)}`,
        ),
      );
      return;
    case "value":
      if (result.value !== true) out.push(ruleError(rule, path, schema, failureMessage(rule, bindings)));
  }
}

/** How the real server names a rule in evaluation errors: its message, or else the rule itself. */
function ruleText(rule: Rule): string {
  return rule.message?.trim() ? rule.message.trim() : rule.rule.trim();
}

/** Walks value and schema together, evaluating every rule where the value is present. */
export function validateCelRules(
  value: unknown,
  old: unknown,
  schema: Schema | undefined,
  path: string,
  out: FieldError[] = [],
): FieldError[] {
  if (!schema || value === undefined || value === null) return out;
  for (const rule of (schema["x-kubernetes-validations"] ?? []) as Rule[])
    evaluateRule(rule, value, old, schema, path, out);
  if (isMap(value)) {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const [key, v] of Object.entries(value)) {
      const sub = props[key] ?? (isMap(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (sub) validateCelRules(v, isMap(old) ? old[key] : undefined, sub, path ? `${path}.${key}` : key, out);
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) =>
      validateCelRules(item, correlatedItem(item, old, schema), schema.items, `${path}[${i}]`, out),
    );
  }
  return out;
}
