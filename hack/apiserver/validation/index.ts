// The metadata checks every object gets here, built-in or custom: a name (a DNS subdomain for custom
// resources, a DNS label for Namespaces, a path segment for other built-ins), label keys and values,
// and annotation keys. Each built-in kind's own rules (a Pod's containers, a Service's ports, an
// Event's fields…) are kube-apiserver's, the reference: the conformance and e2e suites run on it.
import { fieldErrors, type FieldError } from "../errors.js";
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
} from "./names.js";

type Meta = { name?: unknown; labels?: unknown; annotations?: unknown };
const entries = (m: unknown): Array<[string, unknown]> =>
  m !== null && typeof m === "object" && !Array.isArray(m) ? Object.entries(m) : [];

/** `kind`: "custom" (a custom resource), "Namespace", or any other built-in; the name is checked on create only. */
export function validateMetadata(meta: Meta, kind: string, create: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const invalid = (field: string, value: unknown) => (m: string) => errors.push(fieldErrors.invalid(field, value, m));
  const name = typeof meta.name === "string" ? meta.name : "";
  if (name === "") errors.push(fieldErrors.required("metadata.name", "name or generateName is required"));
  else if (create) {
    const check =
      kind === "custom" ? isDNS1123Subdomain : kind === "Namespace" ? isDNS1123Label : isValidPathSegmentName;
    check(name).forEach(invalid("metadata.name", name));
  }
  for (const [key, value] of entries(meta.labels)) {
    isQualifiedName(key).forEach(invalid("metadata.labels", key));
    isValidLabelValue(String(value)).forEach(invalid("metadata.labels", value));
  }
  for (const [key] of entries(meta.annotations))
    isQualifiedName(key.toLowerCase()).forEach(invalid("metadata.annotations", key));
  return errors;
}
