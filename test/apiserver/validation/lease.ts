// Lease (coordination.k8s.io/v1). From kubernetes/kubernetes pkg/apis/coordination/validation/validation.go.
// The real code checks no length on holderIdentity; neither do we.
import { child, forbidden, invalid, notSupported } from "./field-errors.js";
import { isQualifiedName, nameIsDNSSubdomain } from "./names.js";
import { asObj, validateObjectMeta, validateObjectMetaUpdate, type Obj } from "./object-meta.js";
import type { FieldCause } from "./index.js";

const VALID_STRATEGIES = ["OldestEmulationVersion"];

export function validateLeaseSpec(spec: Obj, field = "spec"): FieldCause[] {
  const errs: FieldCause[] = [];
  const d = spec.leaseDurationSeconds;
  if (typeof d === "number" && d <= 0)
    errs.push(invalid(child(field, "leaseDurationSeconds"), d, "must be greater than 0"));
  const t = spec.leaseTransitions;
  if (typeof t === "number" && t < 0)
    errs.push(invalid(child(field, "leaseTransitions"), t, "must be greater than or equal to 0"));
  const strategy = spec.strategy;
  if (typeof strategy === "string") {
    // The real code reports these under spec.strategy.strategy.
    const sp = child(child(field, "strategy"), "strategy");
    if (strategy.split("/").length === 1) {
      if (!VALID_STRATEGIES.includes(strategy)) errs.push(notSupported(sp, strategy, VALID_STRATEGIES));
    } else {
      errs.push(...isQualifiedName(strategy).map((m) => invalid(sp, strategy, m)));
    }
  }
  if (
    typeof spec.preferredHolder === "string" &&
    spec.preferredHolder !== "" &&
    (typeof strategy !== "string" || strategy === "")
  ) {
    errs.push(forbidden(child(field, "preferredHolder"), "may only be specified if `strategy` is defined"));
  }
  return errs;
}

export function validateLease(obj: Obj, old: Obj | undefined): FieldCause[] {
  const meta = asObj(obj.metadata);
  const errs = old
    ? validateObjectMetaUpdate(meta, asObj(old.metadata), {})
    : validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain });
  return [...errs, ...validateLeaseSpec(asObj(obj.spec))];
}
