// ReplicaSet (apps/v1). From kubernetes/kubernetes pkg/apis/apps/validation/validation.go
// (ValidateReplicaSetSpec, ValidatePodTemplateSpecForReplicaSet, ValidateReplicaSetStatus).
import { child, invalid, notSupported, required } from "./field-errors.js";
import { nameIsDNSSubdomain } from "./names.js";
import {
  asObj,
  asStr,
  asStrMap,
  IS_NEGATIVE,
  selectorMatches,
  semanticEqual,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import { validatePodTemplateSpec } from "./pod.js";
import type { FieldCause } from "./index.js";

const nonNegative = (v: unknown, field: string): FieldCause[] =>
  typeof v === "number" && v < 0 ? [invalid(field, v, IS_NEGATIVE)] : [];

export function validateReplicaSetSpec(spec: Obj, field = "spec"): FieldCause[] {
  // Defaulting sets replicas 1.
  const replicas = spec.replicas === undefined ? 1 : spec.replicas;
  const errs = [
    ...nonNegative(replicas, child(field, "replicas")),
    ...nonNegative(spec.minReadySeconds, child(field, "minReadySeconds")),
  ];
  const selector = spec.selector;
  const tp = child(field, "template");
  if (selector === undefined || selector === null) {
    errs.push(required(child(field, "selector")));
  } else {
    errs.push(...validateLabelSelector(selector, child(field, "selector")));
    const sel = asObj(selector);
    const count =
      Object.keys(asObj(sel.matchLabels)).length +
      (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0);
    if (count === 0) errs.push(invalid(child(field, "selector"), selector, "empty selector is invalid for deployment"));
  }
  if (spec.template === undefined || spec.template === null) {
    errs.push(required(tp));
    return errs;
  }
  const template = asObj(spec.template);
  const labels = asStrMap(asObj(template.metadata).labels);
  const sel = asObj(selector);
  const nonEmpty =
    Object.keys(asObj(sel.matchLabels)).length > 0 ||
    (Array.isArray(sel.matchExpressions) && sel.matchExpressions.length > 0);
  if (selector && nonEmpty && !selectorMatches(selector, labels)) {
    errs.push(invalid(child(child(tp, "metadata"), "labels"), labels, "`selector` does not match template `labels`"));
  }
  errs.push(...validatePodTemplateSpec(template, tp));
  const restartPolicy =
    asObj(template.spec).restartPolicy === undefined ? "Always" : asStr(asObj(template.spec).restartPolicy);
  if (restartPolicy !== "Always")
    errs.push(notSupported(child(child(tp, "spec"), "restartPolicy"), restartPolicy, ["Always"]));
  if (asObj(template.spec).activeDeadlineSeconds !== undefined) {
    errs.push(
      invalid(
        child(child(tp, "spec"), "activeDeadlineSeconds"),
        asObj(template.spec).activeDeadlineSeconds,
        "must not be specified",
      ),
    );
  }
  return errs;
}

export function validateReplicaSetStatus(status: Obj, field = "status"): FieldCause[] {
  const n = (k: string): number => (typeof status[k] === "number" ? (status[k] as number) : 0);
  const errs: FieldCause[] = [];
  for (const k of ["replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration"]) {
    errs.push(...nonNegative(status[k], child(field, k)));
  }
  const msg = "cannot be greater than status.replicas";
  if (n("fullyLabeledReplicas") > n("replicas"))
    errs.push(invalid(child(field, "fullyLabeledReplicas"), n("fullyLabeledReplicas"), msg));
  if (n("readyReplicas") > n("replicas")) errs.push(invalid(child(field, "readyReplicas"), n("readyReplicas"), msg));
  if (n("availableReplicas") > n("replicas"))
    errs.push(invalid(child(field, "availableReplicas"), n("availableReplicas"), msg));
  if (n("availableReplicas") > n("readyReplicas")) {
    errs.push(
      invalid(child(field, "availableReplicas"), n("availableReplicas"), "cannot be greater than readyReplicas"),
    );
  }
  return errs;
}

export function validateReplicaSet(obj: Obj, old: Obj | undefined, subresource: string): FieldCause[] {
  const meta = asObj(obj.metadata);
  if (subresource === "status") {
    return [
      ...validateObjectMetaUpdate(meta, asObj(old?.metadata), { kubeFinalizers: true }),
      ...validateReplicaSetStatus(asObj(obj.status)),
    ];
  }
  const errs = old
    ? validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true })
    : validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain, kubeFinalizers: true });
  errs.push(...validateReplicaSetSpec(asObj(obj.spec)));
  if (old) {
    // The selector is immutable in apps/v1 (ValidateReplicaSetUpdate).
    if (!semanticEqual(asObj(obj.spec).selector, asObj(old.spec).selector)) {
      errs.push(invalid("spec.selector", asObj(obj.spec).selector, "field is immutable"));
    }
  }
  return errs;
}
