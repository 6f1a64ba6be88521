// Structural schema semantics of CRDs: pruning, defaulting and OpenAPI v3 validation, worded like the real server.
import { fieldErrors, formatValue, type FieldError } from "./errors.js";

export type Schema = Record<string, any>;

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * Removes fields the schema does not declare (unless it preserves unknown fields) and returns their paths,
 * which strict field validation reports.
 */
export function prune(value: unknown, schema: Schema | undefined, path: string, pruned: string[]): unknown {
  if (!schema) return value;
  if (isMap(value)) {
    const props = schema.properties as Record<string, Schema> | undefined;
    const additional = schema.additionalProperties;
    for (const key of Object.keys(value)) {
      const p = childPath(path, key);
      if (props && key in props) {
        value[key] = prune(value[key], props[key], p, pruned);
      } else if (isMap(additional)) {
        value[key] = prune(value[key], additional, p, pruned);
      } else if (schema["x-kubernetes-preserve-unknown-fields"] === true || additional === true) {
        continue;
      } else if (props || schema.type === "object") {
        pruned.push(p);
        delete value[key];
      }
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => {
      value[i] = prune(item, schema.items, `${path}[${i}]`, pruned);
    });
  }
  return value;
}

/** Fills in defaults of missing properties, depth first, as the server does on create, update and read. */
export function applyDefaults(value: unknown, schema: Schema | undefined): unknown {
  if (!schema) return value;
  if (isMap(value)) {
    const props = schema.properties as Record<string, Schema> | undefined;
    if (props) {
      for (const [key, sub] of Object.entries(props)) {
        if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default);
        if (value[key] !== undefined) value[key] = applyDefaults(value[key], sub);
      }
    }
    if (isMap(schema.additionalProperties)) {
      for (const key of Object.keys(value))
        if (!props || !(key in props)) value[key] = applyDefaults(value[key], schema.additionalProperties);
    }
  } else if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => {
      value[i] = applyDefaults(item, schema.items);
    });
  }
  return value;
}

function jsonType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(type: string, v: unknown): boolean {
  const actual = jsonType(v);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

// The keywords the project's CRDs use (kube-apiserver is the reference for the rest: exclusive
// bounds, multipleOf, minProperties, uniqueItems, allOf/oneOf/not and formats other than date-time).
const FORMATS: Record<string, RegExp> = {
  "date-time": /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
};

/** OpenAPI v3 validation of a value against a structural schema. */
export function validateSchema(
  value: unknown,
  schema: Schema | undefined,
  path: string,
  out: FieldError[] = [],
): FieldError[] {
  if (!schema) return out;
  if (value === null) {
    if (schema.nullable === true) return out;
    if (schema.type)
      out.push(fieldErrors.typeInvalid(path, "null", `${path} in body must be of type ${schema.type}: "null"`));
    return out;
  }
  if (schema.type && !(schema["x-kubernetes-int-or-string"] === true) && !typeMatches(schema.type, value)) {
    const actual = jsonType(value);
    out.push(
      fieldErrors.typeInvalid(
        path,
        actual,
        `${path} in body must be of type ${schema.type}: ${JSON.stringify(actual)}`,
      ),
    );
    return out;
  }
  if (schema["x-kubernetes-int-or-string"] === true && !(typeof value === "string" || Number.isInteger(value))) {
    out.push(
      fieldErrors.typeInvalid(
        path,
        jsonType(value),
        `${path} in body must be of type integer,string: ${JSON.stringify(jsonType(value))}`,
      ),
    );
    return out;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e: unknown) => JSON.stringify(e) === JSON.stringify(value))) {
    out.push(fieldErrors.notSupported(path, value, schema.enum));
  }
  if (typeof value === "number") {
    if (typeof schema.maximum === "number" && value > schema.maximum)
      out.push(fieldErrors.invalid(path, value, `${path} in body should be less than or equal to ${schema.maximum}`));
    if (typeof schema.minimum === "number" && value < schema.minimum)
      out.push(
        fieldErrors.invalid(path, value, `${path} in body should be greater than or equal to ${schema.minimum}`),
      );
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof schema.maxLength === "number" && length > schema.maxLength)
      out.push(fieldErrors.tooLong(path, schema.maxLength));
    if (typeof schema.minLength === "number" && length < schema.minLength) {
      out.push(fieldErrors.invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
    }
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
      out.push(fieldErrors.invalid(path, value, `${path} in body should match '${schema.pattern}'`));
    }
    const format = schema.format && FORMATS[schema.format as string];
    if (format && !format.test(value)) {
      out.push(
        fieldErrors.invalid(path, value, `${path} in body must be of type ${schema.format}: ${formatValue(value)}`),
      );
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems)
      out.push(fieldErrors.tooMany(path, value.length, schema.maxItems));
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      out.push(
        fieldErrors.invalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`),
      );
    }
    if (schema["x-kubernetes-list-type"] === "set") {
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const k = JSON.stringify(item);
        if (seen.has(k)) out.push(fieldErrors.duplicate(`${path}[${i}]`, item));
        seen.add(k);
      });
    }
    if (schema["x-kubernetes-list-type"] === "map" && Array.isArray(schema["x-kubernetes-list-map-keys"])) {
      const keys = schema["x-kubernetes-list-map-keys"] as string[];
      const seen = new Set<string>();
      value.forEach((item, i) => {
        if (!isMap(item)) return;
        const k = JSON.stringify(keys.map((key) => item[key]));
        if (seen.has(k))
          out.push(fieldErrors.duplicate(`${path}[${i}]`, Object.fromEntries(keys.map((key) => [key, item[key]]))));
        seen.add(k);
      });
    }
    value.forEach((item, i) => validateSchema(item, schema.items, `${path}[${i}]`, out));
  }
  if (isMap(value)) {
    for (const req of (schema.required ?? []) as string[]) {
      if (value[req] === undefined) out.push(fieldErrors.required(childPath(path, req)));
    }
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    if (typeof schema.maxProperties === "number" && Object.keys(value).length > schema.maxProperties) {
      out.push(fieldErrors.tooMany(path, Object.keys(value).length, schema.maxProperties));
    }
    for (const [key, v] of Object.entries(value)) {
      if (key in props) validateSchema(v, props[key], childPath(path, key), out);
      else if (isMap(schema.additionalProperties))
        validateSchema(v, schema.additionalProperties, childPath(path, key), out);
    }
  }
  if (Array.isArray(schema.anyOf)) {
    const passing = (schema.anyOf as Schema[]).some((s) => validateSchema(value, s, path).length === 0);
    if (!passing)
      out.push(fieldErrors.invalid(path, value, `${path} in body must validate at least one schema (anyOf)`));
  }
  return out;
}
