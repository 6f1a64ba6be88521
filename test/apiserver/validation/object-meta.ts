// ObjectMeta rules. From kubernetes/kubernetes
// staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go (names, namespace, annotations,
// ownerReferences, finalizers, immutable fields on update),
// staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (labels, selectors,
// conditions) and pkg/apis/core/validation (validateKubeFinalizerName for core-style kinds).
import { byteLength, isDNS1123Label, isQualifiedName, isValidLabelValue, type NameFn } from "./names.js";
import { child, forbidden, index, invalid, required, tooLong } from "./field-errors.js";
import type { FieldCause } from "./index.js";
import { matchesLabelSelectorObject } from "../selectors.js";

export type Obj = Record<string, unknown>;
export const asObj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
export const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asStr = (v: unknown): string => (typeof v === "string" ? v : "");
export const asStrMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(asObj(v))) out[k] = typeof val === "string" ? val : String(val ?? "");
  return out;
};

export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;
export const FIELD_IMMUTABLE = "field is immutable";
export const IS_NEGATIVE = "must be greater than or equal to 0";

export function validateLabelName(name: string, field: string): FieldCause[] {
  return isQualifiedName(name).map((m) => invalid(field, name, m));
}

export function validateLabels(labels: Record<string, string>, field: string): FieldCause[] {
  const errs: FieldCause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    errs.push(...validateLabelName(k, field));
    errs.push(...isValidLabelValue(v).map((m) => invalid(field, v, m)));
  }
  return errs;
}

export function validateAnnotations(annotations: Record<string, string>, field: string): FieldCause[] {
  const errs: FieldCause[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    // Case does not matter for annotation keys.
    errs.push(...isQualifiedName(k.toLowerCase()).map((m) => invalid(field, k, m)));
    total += byteLength(k) + byteLength(v);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}

/** schema.ParseGroupVersion: "v1" → core, "g/v" → group, more slashes → unparseable (empty). */
function parseApiVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === "" || apiVersion === "/") return { group: "", version: "" };
  const parts = apiVersion.split("/");
  if (parts.length === 1) return { group: "", version: apiVersion };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return { group: "", version: "" };
}

export function validateOwnerReferences(refs: unknown[], field: string): FieldCause[] {
  const errs: FieldCause[] = [];
  let firstController = "";
  for (const raw of refs) {
    const ref = asObj(raw);
    const apiVersion = asStr(ref.apiVersion);
    const kind = asStr(ref.kind);
    const name = asStr(ref.name);
    const gv = parseApiVersion(apiVersion);
    // The real paths have no index: metadata.ownerReferences.uid.
    if (gv.version === "") errs.push(invalid(child(field, "apiVersion"), apiVersion, "version must not be empty"));
    if (kind === "") errs.push(invalid(child(field, "kind"), kind, "must not be empty"));
    if (name === "") errs.push(invalid(child(field, "name"), name, "must not be empty"));
    if (asStr(ref.uid) === "") errs.push(invalid(child(field, "uid"), asStr(ref.uid), "must not be empty"));
    if (gv.group === "" && gv.version === "v1" && kind === "Event") {
      errs.push(invalid(field, ref, "/v1, Kind=Event is disallowed from being an owner"));
    }
    if (ref.controller === true) {
      const current = `${kind}/${name}`;
      if (firstController !== "") {
        errs.push(
          invalid(
            field,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errs;
}

const STANDARD_FINALIZERS = new Set(["kubernetes", "orphan", "foregroundDeletion"]);

export function validateFinalizers(finalizers: string[], field: string): FieldCause[] {
  const errs: FieldCause[] = [];
  for (const f of finalizers) errs.push(...isQualifiedName(f).map((m) => invalid(field, f, m)));
  if (finalizers.includes("orphan") && finalizers.includes("foregroundDeletion")) {
    errs.push(invalid(field, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  return errs;
}

/** The core API group adds: an unprefixed finalizer must be a standard one. */
export function validateKubeFinalizerNames(finalizers: string[], field: string): FieldCause[] {
  return finalizers.flatMap((f, i) =>
    f.split("/").length === 1 && !STANDARD_FINALIZERS.has(f)
      ? [invalid(index(field, i), f, "name is neither a standard finalizer name nor is it fully qualified")]
      : [],
  );
}

export interface MetaRules {
  namespaced: boolean;
  nameFn: NameFn;
  /** Core-group style: also run validateKubeFinalizerName. */
  kubeFinalizers?: boolean;
}

function metaCommon(meta: Obj, namespaced: boolean, field: string): FieldCause[] {
  const errs: FieldCause[] = [];
  const ns = asStr(meta.namespace);
  if (namespaced) {
    if (ns === "") errs.push(required(child(field, "namespace")));
    else errs.push(...isDNS1123Label(ns).map((m) => invalid(child(field, "namespace"), ns, m)));
  } else if (ns !== "") {
    errs.push(forbidden(child(field, "namespace"), "not allowed on this type"));
  }
  const generation = meta.generation;
  if (typeof generation === "number" && generation < 0)
    errs.push(invalid(child(field, "generation"), generation, IS_NEGATIVE));
  errs.push(...validateLabels(asStrMap(meta.labels), child(field, "labels")));
  errs.push(...validateAnnotations(asStrMap(meta.annotations), child(field, "annotations")));
  errs.push(...validateOwnerReferences(asArr(meta.ownerReferences), child(field, "ownerReferences")));
  errs.push(...validateFinalizers(asArr(meta.finalizers).map(asStr), child(field, "finalizers")));
  return errs;
}

/** ValidateObjectMeta on create: name generation is assumed to have happened already. */
export function validateObjectMeta(meta: Obj, rules: MetaRules, field = "metadata"): FieldCause[] {
  const errs: FieldCause[] = [];
  const generateName = asStr(meta.generateName);
  if (generateName !== "") {
    errs.push(...rules.nameFn(generateName, true).map((m) => invalid(child(field, "generateName"), generateName, m)));
  }
  const name = asStr(meta.name);
  if (name === "") errs.push(required(child(field, "name"), "name or generateName is required"));
  else errs.push(...rules.nameFn(name, false).map((m) => invalid(child(field, "name"), name, m)));
  errs.push(...metaCommon(meta, rules.namespaced, field));
  if (rules.kubeFinalizers)
    errs.push(...validateKubeFinalizerNames(asArr(meta.finalizers).map(asStr), child(field, "finalizers")));
  return errs;
}

/** Drops null and undefined members: absent and null decode to the same Go value. */
function canonical(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined && x !== null) out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

/** apiequality.Semantic.DeepEqual for decoded JSON: key order and null members do not matter. */
export const semanticEqual = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a ?? null)) === JSON.stringify(canonical(b ?? null));
const sameJson = semanticEqual;

/**
 * Times compare as instants, at the precision they are serialized with (1000 ms for metav1.Time,
 * 1 for MicroTime within what JavaScript keeps): "…:00Z" and "…:00.000Z" are the same time.
 */
export function sameTime(a: unknown, b: unknown, precisionMs: number): boolean {
  const unset = (v: unknown): boolean => v === undefined || v === null || v === "";
  if (unset(a) || unset(b)) return unset(a) && unset(b);
  const ta = Date.parse(String(a instanceof Date ? a.toISOString() : a));
  const tb = Date.parse(String(b instanceof Date ? b.toISOString() : b));
  if (Number.isNaN(ta) || Number.isNaN(tb)) return String(a) === String(b);
  return Math.floor(ta / precisionMs) === Math.floor(tb / precisionMs);
}

/** ValidateObjectMetaUpdate: identity fields are immutable, the rest is revalidated. */
export function validateObjectMetaUpdate(
  meta: Obj,
  old: Obj,
  rules: Pick<MetaRules, "kubeFinalizers">,
  field = "metadata",
): FieldCause[] {
  const errs: FieldCause[] = [];
  if (old.deletionTimestamp) {
    const before = new Set(asArr(old.finalizers).map(asStr));
    const extra = [...new Set(asArr(meta.finalizers).map(asStr))].filter((f) => !before.has(f)).sort();
    if (extra.length) {
      errs.push(
        forbidden(
          child(field, "finalizers"),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(", ")}}`,
        ),
      );
    }
  }
  const newGen = typeof meta.generation === "number" ? meta.generation : 0;
  const oldGen = typeof old.generation === "number" ? old.generation : 0;
  if (newGen < oldGen) errs.push(invalid(child(field, "generation"), newGen, "must not be decremented"));
  for (const f of ["name", "namespace", "uid", "deletionGracePeriodSeconds"]) {
    const nv = meta[f] === "" ? undefined : meta[f];
    const ov = old[f] === "" ? undefined : old[f];
    if (!sameJson(nv, ov)) errs.push(invalid(child(field, f), meta[f] ?? null, FIELD_IMMUTABLE));
  }
  for (const f of ["creationTimestamp", "deletionTimestamp"]) {
    if (!sameTime(meta[f], old[f], 1000)) errs.push(invalid(child(field, f), meta[f] ?? null, FIELD_IMMUTABLE));
  }
  errs.push(...validateLabels(asStrMap(meta.labels), child(field, "labels")));
  errs.push(...validateAnnotations(asStrMap(meta.annotations), child(field, "annotations")));
  errs.push(...validateOwnerReferences(asArr(meta.ownerReferences), child(field, "ownerReferences")));
  errs.push(...validateFinalizers(asArr(meta.finalizers).map(asStr), child(field, "finalizers")));
  if (rules.kubeFinalizers)
    errs.push(...validateKubeFinalizerNames(asArr(meta.finalizers).map(asStr), child(field, "finalizers")));
  return errs;
}

/** True when a label selector (matchLabels + matchExpressions) selects the given labels. */
export function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  return matchesLabelSelectorObject(asObj(selector), labels);
}
