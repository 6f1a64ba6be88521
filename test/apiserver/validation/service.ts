// Service. From kubernetes/kubernetes pkg/apis/core/validation (ValidateService,
// validateServicePort, ValidatePortNumOrName, ValidateServiceUpdate). Values the real server
// defaults (type ClusterIP, sessionAffinity None, port protocol TCP, targetPort = port) are
// defaulted here before checking.
import { child, duplicate, forbidden, index, invalid, notSupported, required } from "./field-errors.js";
import { parseIP } from "./ip.js";
import { isDNS1123Label, isDNS1123Subdomain, isValidPortName, isValidPortNum, nameIsDNS1035Label } from "./names.js";
import {
  asArr,
  asObj,
  asStr,
  asStrMap,
  FIELD_IMMUTABLE,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

const SUPPORTED_PROTOCOLS = ["SCTP", "TCP", "UDP"];
const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const SESSION_AFFINITIES = ["ClientIP", "None"];

function validatePortNumOrName(value: unknown, field: string): FieldCause[] {
  if (typeof value === "number") return isValidPortNum(value).map((m) => invalid(field, value, m));
  if (typeof value === "string") return isValidPortName(value).map((m) => invalid(field, value, m));
  return [];
}

export function validateServiceSpec(spec: Obj): FieldCause[] {
  const errs: FieldCause[] = [];
  const type = spec.type === undefined ? "ClusterIP" : asStr(spec.type);
  const clusterIP = asStr(spec.clusterIP);
  const headless = clusterIP === "None";
  const ports = asArr(spec.ports);
  if (ports.length === 0 && !headless && type !== "ExternalName") errs.push(required("spec.ports"));
  if ((type === "LoadBalancer" || type === "NodePort") && headless) {
    errs.push(invalid("spec.clusterIP", clusterIP, `may not be set to 'None' for ${type} services`));
  }
  if (type === "ExternalName") {
    if (clusterIP !== "") errs.push(forbidden("spec.clusterIP", "must be empty for ExternalName services"));
    const ext = asStr(spec.externalName);
    if (ext === "") errs.push(required("spec.externalName"));
    else errs.push(...isDNS1123Subdomain(ext).map((m) => invalid("spec.externalName", ext, m)));
  }
  const names = new Set<string>();
  const seen = new Set<string>();
  ports.forEach((raw, i) => {
    const sp = asObj(raw);
    const p = index("spec.ports", i);
    const name = asStr(sp.name);
    if (ports.length > 1 && name === "") errs.push(required(child(p, "name")));
    else if (name !== "") {
      errs.push(...isDNS1123Label(name).map((m) => invalid(child(p, "name"), name, m)));
      if (names.has(name)) errs.push(duplicate(child(p, "name"), name));
      names.add(name);
    }
    const port = Number(sp.port ?? 0);
    errs.push(...isValidPortNum(port).map((m) => invalid(child(p, "port"), port, m)));
    const protocol = sp.protocol === undefined ? "TCP" : asStr(sp.protocol);
    if (protocol === "") errs.push(required(child(p, "protocol")));
    else if (!SUPPORTED_PROTOCOLS.includes(protocol))
      errs.push(notSupported(child(p, "protocol"), protocol, SUPPORTED_PROTOCOLS));
    const targetPort =
      sp.targetPort === undefined || sp.targetPort === 0 || sp.targetPort === "" ? port : sp.targetPort;
    errs.push(...validatePortNumOrName(targetPort, child(p, "targetPort")));
    if (type === "ClusterIP" && Number(sp.nodePort ?? 0) !== 0)
      errs.push(forbidden(child(p, "nodePort"), "may not be used when `type` is 'ClusterIP'"));
    const k = `${protocol}/${port}`;
    if (seen.has(k)) errs.push(duplicate(p, { port, protocol }));
    seen.add(k);
  });
  if (spec.selector !== undefined && spec.selector !== null)
    errs.push(...validateLabels(asStrMap(spec.selector), "spec.selector"));
  const affinity = spec.sessionAffinity === undefined ? "None" : asStr(spec.sessionAffinity);
  if (affinity === "") errs.push(required("spec.sessionAffinity"));
  else if (!SESSION_AFFINITIES.includes(affinity))
    errs.push(notSupported("spec.sessionAffinity", affinity, SESSION_AFFINITIES));
  if (clusterIP !== "" && !headless && !parseIP(clusterIP)) {
    errs.push(invalid("spec.clusterIP", clusterIP, "must be empty, 'None', or a valid IP address"));
  }
  if (type === "") errs.push(required("spec.type"));
  else if (!SERVICE_TYPES.includes(type)) errs.push(notSupported("spec.type", type, SERVICE_TYPES));
  return errs;
}

export function validateService(obj: Obj, old: Obj | undefined): FieldCause[] {
  const meta = asObj(obj.metadata);
  const spec = asObj(obj.spec);
  if (!old)
    return [
      ...validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNS1035Label, kubeFinalizers: true }),
      ...validateServiceSpec(spec),
    ];
  const errs = validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true });
  const oldSpec = asObj(old.spec);
  const type = spec.type === undefined ? "ClusterIP" : asStr(spec.type);
  const oldType = oldSpec.type === undefined ? "ClusterIP" : asStr(oldSpec.type);
  // clusterIP is immutable once assigned, except around ExternalName.
  if (type !== "ExternalName" && oldType !== "ExternalName" && asStr(oldSpec.clusterIP) !== "") {
    if (asStr(spec.clusterIP) !== asStr(oldSpec.clusterIP))
      errs.push(invalid("spec.clusterIP", asStr(spec.clusterIP), FIELD_IMMUTABLE));
  }
  return [...errs, ...validateServiceSpec(spec)];
}
