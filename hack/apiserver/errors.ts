// metav1.Status errors worded as the real API server words them, so clients see familiar reasons.
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** "pods" or "healthprobepolicies.healthprobe.io", as error messages print a resource. */
export function qualifiedResource(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

function qualifiedKind(group: string, kind: string): string {
  return group ? `${kind}.${group}` : kind;
}

export function notFound(group: string, resource: string, name: string): ApiError {
  return new ApiError(404, "NotFound", `${qualifiedResource(group, resource)} "${name}" not found`, {
    name,
    group,
    kind: resource,
  });
}

export function alreadyExists(group: string, resource: string, name: string): ApiError {
  return new ApiError(409, "AlreadyExists", `${qualifiedResource(group, resource)} "${name}" already exists`, {
    name,
    group,
    kind: resource,
  });
}

export function conflict(group: string, resource: string, name: string, why: string): ApiError {
  return new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(group, resource)} "${name}": ${why}`,
    { name, group, kind: resource },
  );
}

export const STALE_OBJECT =
  "the object has been modified; please apply your changes to the latest version and try again";

export interface FieldError {
  field: string;
  /** Cause reason, e.g. FieldValueInvalid. */
  reason: string;
  /** The message without the field, e.g. `Invalid value: 61: ... ` or `Required value`. */
  message: string;
}

export function invalid(group: string, kind: string, name: string, errors: FieldError[]): ApiError {
  const parts = errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message));
  const joined = parts.length === 1 ? parts[0] : `[${parts.join(", ")}]`;
  return new ApiError(422, "Invalid", `${qualifiedKind(group, kind)} "${name}" is invalid: ${joined}`, {
    name,
    group,
    kind,
    causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })),
  });
}

export function badRequest(message: string, causes?: StatusCause[]): ApiError {
  return new ApiError(400, "BadRequest", message, causes ? { causes } : undefined);
}

export function methodNotAllowed(message: string): ApiError {
  return new ApiError(405, "MethodNotAllowed", message);
}

export function unsupportedMediaType(_contentType: string): ApiError {
  return new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
    {},
  );
}

export function gone(message: string): ApiError {
  return new ApiError(410, "Expired", message);
}

export function forbidden(group: string, resource: string, name: string, why: string): ApiError {
  const what = name ? `${qualifiedResource(group, resource)} "${name}"` : qualifiedResource(group, resource);
  return new ApiError(403, "Forbidden", `${what} is forbidden: ${why}`, { name, group, kind: resource });
}

/** Formats a value as Go's field errors print it (%#v-ish): strings quoted, numbers bare. */
export function formatValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || value === undefined) return "null";
  if (typeof value === "object") return JSON.stringify(Array.isArray(value) ? "array" : "object");
  return String(value);
}

/** Standard field error builders, with the real messages. */
export const fieldErrors = {
  invalid: (field: string, value: unknown, detail: string): FieldError => ({
    field,
    reason: "FieldValueInvalid",
    message: `Invalid value: ${formatValue(value)}: ${detail}`,
  }),
  required: (field: string, detail = ""): FieldError => ({
    field,
    reason: "FieldValueRequired",
    message: detail ? `Required value: ${detail}` : "Required value",
  }),
  notSupported: (field: string, value: unknown, supported: unknown[]): FieldError => ({
    field,
    reason: "FieldValueNotSupported",
    message: `Unsupported value: ${formatValue(value)}: supported values: ${supported.map((s) => formatValue(s)).join(", ")}`,
  }),
  forbidden: (field: string, detail: string): FieldError => ({
    field,
    reason: "FieldValueForbidden",
    message: `Forbidden: ${detail}`,
  }),
  tooLong: (field: string, max: number): FieldError => ({
    field,
    reason: "FieldValueTooLong",
    message: `Too long: may not be more than ${max} bytes`,
  }),
  tooMany: (field: string, actual: number, max: number): FieldError => ({
    field,
    reason: "FieldValueTooMany",
    message: `Too many: ${actual}: must have at most ${max} items`,
  }),
  typeInvalid: (field: string, value: unknown, detail: string): FieldError => ({
    field,
    reason: "FieldValueTypeInvalid",
    message: `Invalid value: ${formatValue(value)}: ${detail}`,
  }),
  duplicate: (field: string, value: unknown): FieldError => ({
    field,
    reason: "FieldValueDuplicate",
    message: `Duplicate value: ${formatValue(value)}`,
  }),
};
