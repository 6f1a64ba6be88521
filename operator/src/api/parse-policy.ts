// Runtime check of policies: the operator re-validates every spec with the same rules as
// the CRD, since a cluster may not enforce the CRD's CEL rules (or the object predates them).
import type { z } from "zod";
import { API_VERSION, KIND } from "./group.js";
import {
  healthProbePolicySpecSchema,
  healthProbePolicyStatusSchema,
  objectMetaSchema,
  invalidValue,
  type HealthProbePolicy,
  type HealthProbePolicySpec,
} from "./policy-schema.js";

export interface FieldError {
  /** Kubernetes field path, e.g. "spec.probe.headers[0].name". */
  field: string;
  /** Kubernetes-style detail, e.g. "Invalid value: 61: timeoutSeconds 61 > periodSeconds 60: must be less than or equal to spec.probe.periodSeconds". */
  message: string;
}

export type ParseFailure = { ok: false; errors: FieldError[]; message: string };
export type ParseSpecResult = { ok: true; spec: HealthProbePolicySpec } | ParseFailure;
export type ParsePolicyResult = { ok: true; policy: HealthProbePolicy } | ParseFailure;

/** Validates a spec and applies the defaults; on failure every error names its field. */
export function parsePolicySpec(raw: unknown): ParseSpecResult {
  const result = healthProbePolicySpecSchema.safeParse(raw, { reportInput: true });
  if (result.success) return { ok: true, spec: result.data };
  return failure(result.error.issues.flatMap((i) => toFieldErrors(i, "spec")));
}

/** Validates a whole HealthProbePolicy object: apiVersion, kind, metadata, spec and status. */
export function parsePolicy(obj: unknown): ParsePolicyResult {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    return failure([{ field: "<root>", message: invalidValue(obj, "must be an object") }]);
  }
  const o = obj as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (o.apiVersion !== API_VERSION)
    errors.push({ field: "apiVersion", message: unsupported(o.apiVersion, [API_VERSION]) });
  if (o.kind !== KIND) errors.push({ field: "kind", message: unsupported(o.kind, [KIND]) });

  const meta = objectMetaSchema.safeParse(o.metadata ?? {}, { reportInput: true });
  if (!meta.success) errors.push(...meta.error.issues.flatMap((i) => toFieldErrors(i, "metadata")));

  const spec = o.spec === undefined ? undefined : parsePolicySpec(o.spec);
  if (o.spec === undefined) errors.push({ field: "spec", message: "Required value" });
  else if (spec && !spec.ok) errors.push(...spec.errors);

  const status =
    o.status === undefined ? undefined : healthProbePolicyStatusSchema.safeParse(o.status, { reportInput: true });
  if (status && !status.success) errors.push(...status.error.issues.flatMap((i) => toFieldErrors(i, "status")));

  if (errors.length > 0 || !meta.success || !spec?.ok) return failure(errors);
  const policy: HealthProbePolicy = { apiVersion: API_VERSION, kind: KIND, metadata: meta.data, spec: spec.spec };
  if (status?.success) policy.status = status.data;
  return { ok: true, policy };
}

function failure(errors: FieldError[]): ParseFailure {
  const lines = errors.map((e) => `${e.field}: ${e.message}`);
  // The way the API server aggregates field errors: one bare, several in brackets.
  const message = lines.length === 1 ? (lines[0] as string) : `[${lines.join(", ")}]`;
  return { ok: false, errors, message };
}

function fieldPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (typeof seg === "string" && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += `.${String(seg)}`;
  }
  return out;
}

function unsupported(value: unknown, supported: ReadonlyArray<unknown>): string {
  if (value === undefined) return "Required value";
  return `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(", ")}`;
}

function toFieldErrors(issue: z.core.$ZodIssue, root: string): FieldError[] {
  const field = fieldPath(root, issue.path);
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "invalid_type":
      if (input === undefined) return [{ field, message: "Required value" }];
      if (issue.expected === "int") return [{ field, message: invalidValue(input, "must be an integer") }];
      return [{ field, message: invalidValue(input, `must be of type ${issue.expected}`) }];
    case "too_small":
      return [{ field, message: tooSmall(issue, input) }];
    case "too_big":
      return [{ field, message: tooBig(issue, input) }];
    case "invalid_value":
      return [{ field, message: unsupported(input, issue.values) }];
    case "invalid_format":
      return [{ field, message: invalidValue(input, issue.message) }];
    case "invalid_union":
      if (input === undefined) return [{ field, message: "Required value" }];
      return [{ field, message: invalidValue(input, issue.message) }];
    case "unrecognized_keys":
      return issue.keys.map((k) => ({
        field: fieldPath(field, [k]),
        message: "Forbidden: field not declared in schema",
      }));
    case "custom":
      if (issue.params?.formatted) return [{ field, message: issue.message }];
      return [{ field, message: invalidValue(input, issue.message) }];
    default:
      return [{ field, message: invalidValue(input, issue.message) }];
  }
}

function tooSmall(issue: z.core.$ZodIssueTooSmall, input: unknown): string {
  const min = Number(issue.minimum);
  switch (issue.origin) {
    case "string":
      return min === 1 && input === ""
        ? "Required value"
        : invalidValue(input, `must be at least ${min} characters long`);
    case "array":
      return min === 1 && Array.isArray(input) && input.length === 0
        ? "Required value"
        : invalidValue(input, `must have at least ${min} items`);
    default:
      if (issue.origin === "number" && typeof input === "number" && !Number.isInteger(input))
        return invalidValue(input, "must be an integer");
      return invalidValue(input, `must be greater than or equal to ${min}`);
  }
}

function tooBig(issue: z.core.$ZodIssueTooBig, input: unknown): string {
  const max = Number(issue.maximum);
  switch (issue.origin) {
    case "string":
      return `Too long: may not be more than ${max} characters`;
    case "array":
      return `Too many: ${Array.isArray(input) ? input.length : "?"}: must have at most ${max} items`;
    default:
      return invalidValue(input, `must be less than or equal to ${max}`);
  }
}
