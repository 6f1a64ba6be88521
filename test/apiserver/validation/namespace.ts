// Namespace. From kubernetes/kubernetes pkg/apis/core/validation (ValidateNamespace,
// ValidateNamespaceUpdate, ValidateNamespaceStatusUpdate): a cluster-scoped DNS label.
import { child, index, invalid } from "./field-errors.js";
import { nameIsDNSLabel } from "./names.js";
import {
  asArr,
  asObj,
  asStr,
  validateFinalizers,
  validateKubeFinalizerNames,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

export function validateNamespace(obj: Obj, old: Obj | undefined, subresource: string): FieldCause[] {
  const meta = asObj(obj.metadata);
  if (!old) {
    const errs = validateObjectMeta(meta, { namespaced: false, nameFn: nameIsDNSLabel, kubeFinalizers: true });
    asArr(asObj(obj.spec).finalizers)
      .map(asStr)
      .forEach((f) => {
        errs.push(...validateFinalizers([f], "spec.finalizers"));
        errs.push(
          ...validateKubeFinalizerNames([f], "spec.finalizers").map((e) => ({ ...e, field: "spec.finalizers" })),
        );
      });
    return errs;
  }
  const errs = validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true });
  if (subresource === "status") {
    const phase = asStr(asObj(obj.status).phase);
    const deleting = Boolean(meta.deletionTimestamp);
    if (!deleting && phase !== "Active")
      errs.push(invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"));
    if (deleting && phase !== "Terminating")
      errs.push(invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
  if (subresource === "finalize") {
    asArr(asObj(obj.spec).finalizers)
      .map(asStr)
      .forEach((f, i) => {
        const p = index(child("spec", "finalizers"), i);
        errs.push(
          ...validateFinalizers([f], p),
          ...validateKubeFinalizerNames([f], p).map((e) => ({ ...e, field: p })),
        );
      });
  }
  return errs;
}
