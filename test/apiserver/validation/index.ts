// Validation of built-in kinds, as the real API server applies it. Placeholder until filled in.
export interface FieldCause {
  /** JSON path of the field, e.g. "metadata.labels" or "endpoints[3].addresses[0]". */
  field: string;
  message: string;
  /** metav1 StatusCause reason, e.g. "FieldValueInvalid", "FieldValueRequired", "FieldValueTooLong", "FieldValueForbidden", "FieldValueNotSupported", "FieldValueDuplicate", "FieldValueTooMany". */
  reason: string;
}

/**
 * Validates an object of a built-in kind on create (old undefined) or update.
 * @param gvk e.g. { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice" } (core group is "")
 * @param subresource "" for the main resource, "status" for the status subresource
 */
export function validateBuiltin(
  _gvk: { group: string; version: string; kind: string },
  _obj: Record<string, unknown>,
  _old: Record<string, unknown> | undefined,
  _subresource: string,
): FieldCause[] {
  return [];
}
