// Pod basics on create, pod spec immutability on update and the status subresource.
// From kubernetes/kubernetes pkg/apis/core/validation/validation.go (validateContainers,
// validateContainerPorts, ValidatePodUpdate, ValidatePodStatusUpdate, validatePodConditions,
// validatePodIPs) and pkg/apis/core/v1/conversion.go (podIP / podIPs reconciliation).
import { child, duplicate, forbidden, index, invalid, notSupported, required } from "./field-errors.js";
import { isValidIP, parseIP, isIPv4Address } from "./ip.js";
import { isDNS1123Label, isQualifiedName, isValidPortName, isValidPortNum, nameIsDNSSubdomain } from "./names.js";
import {
  asArr,
  asObj,
  asStr,
  validateAnnotations,
  validateLabels,
  asStrMap,
  semanticEqual,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

const SUPPORTED_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"];
const RESTART_POLICIES = ["Always", "Never", "OnFailure"];

function validateContainerPorts(ports: unknown[], field: string): FieldCause[] {
  const errs: FieldCause[] = [];
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const port = asObj(raw);
    const p = index(field, i);
    const name = asStr(port.name);
    if (name.length > 0) {
      const msgs = isValidPortName(name);
      if (msgs.length) errs.push(...msgs.map((m) => invalid(child(p, "name"), name, m)));
      else if (names.has(name)) errs.push(duplicate(child(p, "name"), name));
      else names.add(name);
    }
    const containerPort = Number(port.containerPort ?? 0);
    if (containerPort === 0) errs.push(required(child(p, "containerPort")));
    else errs.push(...isValidPortNum(containerPort).map((m) => invalid(child(p, "containerPort"), containerPort, m)));
    const hostPort = Number(port.hostPort ?? 0);
    if (hostPort !== 0) errs.push(...isValidPortNum(hostPort).map((m) => invalid(child(p, "hostPort"), hostPort, m)));
    // Defaulting sets protocol TCP.
    const protocol = port.protocol === undefined || port.protocol === null ? "TCP" : asStr(port.protocol);
    if (protocol === "") errs.push(required(child(p, "protocol")));
    else if (!SUPPORTED_PORT_PROTOCOLS.includes(protocol))
      errs.push(notSupported(child(p, "protocol"), protocol, SUPPORTED_PORT_PROTOCOLS));
  });
  return errs;
}

function validateContainers(containers: unknown[], field: string, requireImage: boolean): FieldCause[] {
  if (containers.length === 0) return [required(field)];
  const errs: FieldCause[] = [];
  const names = new Set<string>();
  containers.forEach((raw, i) => {
    const c = asObj(raw);
    const p = index(field, i);
    const name = asStr(c.name);
    if (name === "") errs.push(required(child(p, "name")));
    else errs.push(...isDNS1123Label(name).map((m) => invalid(child(p, "name"), name, m)));
    if (names.has(name)) errs.push(duplicate(child(p, "name"), name));
    names.add(name);
    if (requireImage && asStr(c.image) === "") errs.push(required(child(p, "image")));
    errs.push(...validateContainerPorts(asArr(c.ports), child(p, "ports")));
  });
  return errs;
}

/** The parts of ValidatePodSpec the project exercises. */
export function validatePodSpec(spec: Obj, field: string, requireImage: boolean): FieldCause[] {
  const errs = validateContainers(asArr(spec.containers), child(field, "containers"), requireImage);
  // Defaulting sets restartPolicy Always.
  const restartPolicy = spec.restartPolicy === undefined ? "Always" : asStr(spec.restartPolicy);
  if (restartPolicy === "") errs.push(required(child(field, "restartPolicy")));
  else if (!RESTART_POLICIES.includes(restartPolicy))
    errs.push(notSupported(child(field, "restartPolicy"), restartPolicy, RESTART_POLICIES));
  if (typeof spec.nodeName === "string" && spec.nodeName !== "") {
    errs.push(
      ...nameIsDNSSubdomain(spec.nodeName, false).map((m) => invalid(child(field, "nodeName"), spec.nodeName, m)),
    );
  }
  return errs;
}

/** ValidatePodTemplateSpec: template labels, annotations and spec. */
export function validatePodTemplateSpec(template: Obj, field: string): FieldCause[] {
  const meta = asObj(template.metadata);
  return [
    ...validateLabels(asStrMap(meta.labels), child(child(field, "metadata"), "labels")),
    ...validateAnnotations(asStrMap(meta.annotations), child(child(field, "metadata"), "annotations")),
    // Templates may leave images empty (filled in later by tooling); pods may not.
    ...validatePodSpec(asObj(template.spec), child(field, "spec"), false),
  ];
}

/** Spec fields a pod update may change (ValidatePodUpdate). */
function mutableSpecView(spec: Obj): Obj {
  const view = structuredClone(spec);
  for (const list of ["containers", "initContainers"]) {
    for (const c of asArr(view[list])) delete asObj(c).image;
  }
  delete view.activeDeadlineSeconds;
  delete view.tolerations;
  delete view.terminationGracePeriodSeconds;
  return view;
}

const POD_UPDATE_FORBIDDEN =
  "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

export function validatePod(obj: Obj, old: Obj | undefined): FieldCause[] {
  const meta = asObj(obj.metadata);
  if (!old) {
    return [
      ...validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain, kubeFinalizers: true }),
      ...validatePodSpec(asObj(obj.spec), "spec", true),
    ];
  }
  const errs = validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true });
  if (!semanticEqual(mutableSpecView(asObj(obj.spec)), mutableSpecView(asObj(old.spec)))) {
    errs.push(forbidden("spec", POD_UPDATE_FORBIDDEN));
  }
  return errs;
}

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
