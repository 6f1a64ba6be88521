// ConfigMap and Secret. From kubernetes/kubernetes pkg/apis/core/validation (ValidateConfigMap,
// ValidateSecret): keys are config-map keys, the data is at most 1 MiB (core.MaxSecretSize).
import { forbidden, invalid, key, required, tooLong } from "./field-errors.js";
import { byteLength, isConfigMapKey, nameIsDNSSubdomain } from "./names.js";
import {
  asObj,
  asStr,
  asStrMap,
  FIELD_IMMUTABLE,
  semanticEqual,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

export const MAX_SECRET_SIZE = 1024 * 1024;

const base64Bytes = (s: string): number => Buffer.from(s, "base64").length;

export function validateConfigMap(obj: Obj, old: Obj | undefined): FieldCause[] {
  const meta = asObj(obj.metadata);
  const errs = old ? validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true }) : [];
  errs.push(...validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain, kubeFinalizers: true }));
  const data = asStrMap(obj.data);
  const binary = asStrMap(obj.binaryData);
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    errs.push(...isConfigMapKey(k).map((m) => invalid(key("data", k), k, m)));
    if (Object.prototype.hasOwnProperty.call(binary, k))
      errs.push(invalid(key("data", k), k, "duplicate of key present in binaryData"));
    total += byteLength(v);
  }
  for (const [k, v] of Object.entries(binary)) {
    errs.push(...isConfigMapKey(k).map((m) => invalid(key("binaryData", k), k, m)));
    total += base64Bytes(v);
  }
  // The real error names the whole object: an empty field path.
  if (total > MAX_SECRET_SIZE) errs.push(tooLong("", MAX_SECRET_SIZE));
  // ValidateConfigMapUpdate: an immutable ConfigMap keeps its data.
  if (old && old.immutable === true) {
    if (obj.immutable !== true) errs.push(forbidden("immutable", "field is immutable when `immutable` is set"));
    if (!semanticEqual(obj.data, old.data)) errs.push(forbidden("data", "field is immutable when `immutable` is set"));
    if (!semanticEqual(obj.binaryData, old.binaryData)) {
      errs.push(forbidden("binaryData", "field is immutable when `immutable` is set"));
    }
  }
  return errs;
}

export function validateSecret(obj: Obj, old: Obj | undefined): FieldCause[] {
  const meta = asObj(obj.metadata);
  const errs = old ? validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true }) : [];
  errs.push(...validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain, kubeFinalizers: true }));
  // stringData is merged into data (and wins) before validation.
  const sizes = new Map<string, number>();
  for (const [k, v] of Object.entries(asStrMap(obj.data))) sizes.set(k, base64Bytes(v));
  for (const [k, v] of Object.entries(asStrMap(obj.stringData))) sizes.set(k, byteLength(v));
  let total = 0;
  for (const [k, size] of sizes) {
    errs.push(...isConfigMapKey(k).map((m) => invalid(key("data", k), k, m)));
    total += size;
  }
  if (total > MAX_SECRET_SIZE) errs.push(tooLong("data", MAX_SECRET_SIZE));
  const type = asStr(obj.type) || "Opaque";
  if (type === "kubernetes.io/tls") {
    if (!sizes.has("tls.crt")) errs.push(required(key("data", "tls.crt")));
    if (!sizes.has("tls.key")) errs.push(required(key("data", "tls.key")));
  }
  if (old) {
    const oldType = asStr(old.type) || "Opaque";
    if (type !== oldType) errs.push(invalid("type", type, FIELD_IMMUTABLE));
  }
  return errs;
}
