// The pod status subresource, which the operator writes (its readiness-gate conditions); the rest of
// a pod's validation is kube-apiserver's. From kubernetes/kubernetes pkg/apis/core/validation/validation.go
// (ValidatePodStatusUpdate, validatePodConditions, validatePodIPs) and pkg/apis/core/v1/conversion.go
// (podIP / podIPs reconciliation).
import { child, index, invalid } from "./field-errors.js";
import { isValidIP, parseIP, isIPv4Address } from "./ip.js";
import { isQualifiedName } from "./names.js";
import { asArr, asObj, asStr, validateObjectMetaUpdate, type Obj } from "./object-meta.js";
import type { FieldCause } from "./index.js";

/**
 * The podIPs the real server stores: conversion makes podIP authoritative, so a podIPs list
 * whose first entry differs from podIP is replaced by [podIP], and podIP alone fills podIPs.
 */
export function effectivePodIPs(status: Obj): string[] {
  const podIP = asStr(status.podIP);
  const podIPs = asArr(status.podIPs).map((x) => asStr(asObj(x).ip));
  if (podIP !== "" && (podIPs.length === 0 || podIPs[0] !== podIP)) return [podIP];
  return podIPs;
}

const SYSTEM_CONDITIONS = new Set(["PodScheduled", "Ready", "Initialized"]);

export function validatePodStatus(obj: Obj, old: Obj): FieldCause[] {
  const errs = validateObjectMetaUpdate(asObj(obj.metadata), asObj(old.metadata), { kubeFinalizers: true });
  const status = asObj(obj.status);
  asArr(status.conditions).forEach((raw, i) => {
    const type = asStr(asObj(raw).type);
    if (SYSTEM_CONDITIONS.has(type)) return;
    // The real path really says "Type".
    errs.push(...isQualifiedName(type).map((m) => invalid(child(index("status.conditions", i), "Type"), type, m)));
  });
  const ips = effectivePodIPs(status);
  ips.forEach((ip, i) => errs.push(...isValidIP(index("status.podIPs", i), ip)));
  if (ips.length > 1) {
    const parsed = ips.map(parseIP);
    const v4 = parsed.filter((p) => p && isIPv4Address(p)).length;
    const dualStack = parsed.every(Boolean) && v4 >= 1 && v4 < ips.length;
    if (!dualStack || ips.length > 2) {
      errs.push(
        invalid(
          "status.podIPs",
          ips.map((ip) => ({ ip })),
          "may specify no more than one IP for each IP family",
        ),
      );
    }
  }
  const hostIPs = asArr(status.hostIPs).map((x) => asStr(asObj(x).ip));
  if (hostIPs.length > 0) {
    if (asStr(status.hostIP) !== hostIPs[0])
      errs.push(invalid("status.hostIPs[0].ip", hostIPs[0], "must be equal to `hostIP`"));
    hostIPs.forEach((ip, i) => errs.push(...isValidIP(index("status.hostIPs", i), ip)));
  }
  return errs;
}
