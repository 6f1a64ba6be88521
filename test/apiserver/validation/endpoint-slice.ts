// EndpointSlice (discovery.k8s.io/v1). From kubernetes/kubernetes
// pkg/apis/discovery/validation/validation.go. Address checks use ValidateEndpointIP, which
// rejects loopback, link-local and unspecified addresses, exactly as the real server does.
import { child, duplicate, index, invalid, notSupported, required, tooMany } from "./field-errors.js";
import { isValidIPv4Address, isValidIPv6Address, validateEndpointIP } from "./ip.js";
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue, nameIsDNSSubdomain } from "./names.js";
import {
  asArr,
  asObj,
  asStr,
  FIELD_IMMUTABLE,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

export const SUPPORTED_ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"];
const SUPPORTED_PROTOCOLS = ["SCTP", "TCP", "UDP"];
export const MAX_ENDPOINTS = 1000;
export const MAX_ADDRESSES = 100;
// The real limit (validation.go: maxPorts = 20000); the API reference's 100 is not enforced.
export const MAX_PORTS = 20000;
const MAX_ZONE_HINTS = 8;

function isFullyQualifiedDomainName(field: string, value: string): FieldCause[] {
  if (value === "") return [required(field)];
  const name = value.endsWith(".") ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length) return [invalid(field, name, sub.join(","))];
  const labels = name.split(".");
  if (labels.length < 2)
    return [invalid(field, name, "should be a domain with at least two segments separated by dots")];
  for (const l of labels) {
    const e = isDNS1123Label(l);
    if (e.length) return [invalid(field, l, e.join(","))];
  }
  return [];
}

export interface EndpointSliceOptions {
  /** Deliberate deviation from the real server, off by default: accept 127.0.0.0/8 and ::1. */
  allowLoopbackAddresses?: boolean;
}

function validateEndpoints(endpoints: unknown[], addressType: string, opts: EndpointSliceOptions): FieldCause[] {
  const field = "endpoints";
  if (endpoints.length > MAX_ENDPOINTS) return [tooMany(field, endpoints.length, MAX_ENDPOINTS)];
  const errs: FieldCause[] = [];
  endpoints.forEach((raw, i) => {
    const ep = asObj(raw);
    const p = index(field, i);
    const addrPath = child(p, "addresses");
    const addresses = asArr(ep.addresses).map(asStr);
    if (addresses.length === 0) errs.push(required(addrPath, "must contain at least 1 address"));
    else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(addrPath, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, ai) => {
      const ap = index(addrPath, ai);
      if (addressType === "IPv4" || addressType === "IPv6") {
        errs.push(...(addressType === "IPv4" ? isValidIPv4Address(ap, a) : isValidIPv6Address(ap, a)));
        const special = validateEndpointIP(ap, a);
        errs.push(
          ...(opts.allowLoopbackAddresses ? special.filter((e) => !e.message.includes("loopback range")) : special),
        );
      } else if (addressType === "FQDN") {
        errs.push(...isFullyQualifiedDomainName(ap, a));
      }
    });
    if (typeof ep.nodeName === "string") {
      errs.push(...isDNS1123Subdomain(ep.nodeName).map((m) => invalid(child(p, "nodeName"), ep.nodeName, m)));
    }
    if (typeof ep.hostname === "string") {
      errs.push(...isDNS1123Label(ep.hostname).map((m) => invalid(child(p, "hostname"), ep.hostname, m)));
    }
    if (ep.hints !== undefined && ep.hints !== null) {
      const fz = asArr(asObj(ep.hints).forZones);
      const fzPath = child(child(p, "hints"), "forZones");
      if (fz.length > MAX_ZONE_HINTS) {
        errs.push(tooMany(fzPath, fz.length, MAX_ZONE_HINTS));
      } else {
        const seen = new Set<string>();
        fz.forEach((z, zi) => {
          const zp = child(index(fzPath, zi), "name");
          const name = asStr(asObj(z).name);
          if (seen.has(name)) errs.push(duplicate(zp, name));
          seen.add(name);
          errs.push(...isValidLabelValue(name).map((m) => invalid(zp, name, m)));
        });
      }
    }
  });
  return errs;
}

function validatePorts(ports: unknown[]): FieldCause[] {
  const field = "ports";
  if (ports.length > MAX_PORTS) return [tooMany(field, ports.length, MAX_PORTS)];
  const errs: FieldCause[] = [];
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const port = asObj(raw);
    const p = index(field, i);
    // Defaulting (SetDefaults_EndpointPort) gives name "" and protocol TCP.
    const name = asStr(port.name);
    if (name.length > 0) errs.push(...isDNS1123Label(name).map((m) => invalid(child(p, "name"), name, m)));
    if (names.has(name)) errs.push(duplicate(child(p, "name"), name));
    names.add(name);
    const protocol = port.protocol === undefined || port.protocol === null ? "TCP" : asStr(port.protocol);
    if (!SUPPORTED_PROTOCOLS.includes(protocol))
      errs.push(notSupported(child(p, "protocol"), protocol, SUPPORTED_PROTOCOLS));
    if (typeof port.appProtocol === "string") {
      errs.push(...isQualifiedName(port.appProtocol).map((m) => invalid(child(p, "appProtocol"), port.appProtocol, m)));
    }
    // Port numbers: the v1 schema makes them int32; the real validation has no range check here.
  });
  return errs;
}

export function validateEndpointSlice(obj: Obj, old: Obj | undefined, opts: EndpointSliceOptions = {}): FieldCause[] {
  const meta = asObj(obj.metadata);
  const errs = old
    ? validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true })
    : validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain, kubeFinalizers: true });
  const addressType = asStr(obj.addressType);
  if (addressType === "") errs.push(required("addressType"));
  else if (!SUPPORTED_ADDRESS_TYPES.includes(addressType))
    errs.push(notSupported("addressType", addressType, SUPPORTED_ADDRESS_TYPES));
  errs.push(...validateEndpoints(asArr(obj.endpoints), addressType, opts));
  errs.push(...validatePorts(asArr(obj.ports)));
  if (old && asStr(old.addressType) !== addressType) errs.push(invalid("addressType", addressType, FIELD_IMMUTABLE));
  return errs;
}
