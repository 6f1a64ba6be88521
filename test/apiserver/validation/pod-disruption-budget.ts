// PodDisruptionBudget (policy/v1). From kubernetes/kubernetes pkg/apis/policy/validation/validation.go
// and pkg/apis/apps/validation (ValidatePositiveIntOrPercent, IsNotMoreThan100Percent). The real
// strategy validates only the spec; metadata gets the generic checks (path-segment names).
import { child, invalid, notSupported } from "./field-errors.js";
import { isValidPercent, nameIsPathSegment } from "./names.js";
import {
  asArr,
  asObj,
  IS_NEGATIVE,
  validateConditions,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

const EVICTION_POLICIES = ["AlwaysAllow", "IfHealthyBudget"];

/** IntOrString prints without quotes in Go (it implements Stringer). */
const intOrStringText = (v: unknown): string => String(v);

function validatePositiveIntOrPercent(v: unknown, field: string): FieldCause[] {
  if (typeof v === "string") {
    return isValidPercent(v).map((m) => ({
      ...invalid(field, v, m),
      message: `Invalid value: ${intOrStringText(v)}: ${m}`,
    }));
  }
  if (typeof v === "number") return v < 0 ? [invalid(field, v, IS_NEGATIVE)] : [];
  return [invalid(field, v, "must be an integer or percentage (e.g '5%')")];
}

function isNotMoreThan100Percent(v: unknown, field: string): FieldCause[] {
  if (typeof v !== "string" || !/^[0-9]+%$/.test(v)) return [];
  return Number.parseInt(v, 10) > 100
    ? [{ ...invalid(field, v, ""), message: `Invalid value: ${v}: must not be greater than 100%` }]
    : [];
}

export function validatePodDisruptionBudgetSpec(spec: Obj, field = "spec"): FieldCause[] {
  const errs: FieldCause[] = [];
  const has = (k: string): boolean => spec[k] !== undefined && spec[k] !== null;
  if (has("minAvailable") && has("maxUnavailable"))
    errs.push(invalid(field, spec, "minAvailable and maxUnavailable cannot be both set"));
  for (const k of ["minAvailable", "maxUnavailable"]) {
    if (!has(k)) continue;
    errs.push(...validatePositiveIntOrPercent(spec[k], child(field, k)));
    errs.push(...isNotMoreThan100Percent(spec[k], child(field, k)));
  }
  errs.push(...validateLabelSelector(spec.selector, child(field, "selector")));
  const policy = spec.unhealthyPodEvictionPolicy;
  if (typeof policy === "string" && !EVICTION_POLICIES.includes(policy)) {
    errs.push(notSupported(child(field, "unhealthyPodEvictionPolicy"), policy, EVICTION_POLICIES));
  }
  return errs;
}

export function validatePodDisruptionBudgetStatus(status: Obj, field = "status"): FieldCause[] {
  const errs = validateConditions(asArr(status.conditions), child(field, "conditions"));
  for (const k of ["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"]) {
    const v = status[k];
    if (typeof v === "number" && v < 0) errs.push(invalid(child(field, k), v, IS_NEGATIVE));
  }
  return errs;
}

export function validatePodDisruptionBudget(obj: Obj, old: Obj | undefined, subresource: string): FieldCause[] {
  const meta = asObj(obj.metadata);
  if (subresource === "status") {
    return [
      ...validateObjectMetaUpdate(meta, asObj(old?.metadata), {}),
      ...validatePodDisruptionBudgetStatus(asObj(obj.status)),
    ];
  }
  const errs = old ? validateObjectMetaUpdate(meta, asObj(old.metadata), {}) : [];
  errs.push(...validateObjectMeta(meta, { namespaced: true, nameFn: nameIsPathSegment }));
  return [...errs, ...validatePodDisruptionBudgetSpec(asObj(obj.spec))];
}
