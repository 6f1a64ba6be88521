// Node. From kubernetes/kubernetes pkg/apis/core/validation (ValidateNode): a cluster-scoped
// DNS subdomain; podCIDRs must be valid CIDRs, at most one per family.
import { index, invalid } from "./field-errors.js";
import { parseIP, isIPv4Address } from "./ip.js";
import { nameIsDNSSubdomain } from "./names.js";
import { asArr, asObj, asStr, validateObjectMeta, validateObjectMetaUpdate, type Obj } from "./object-meta.js";
import type { FieldCause } from "./index.js";

function parseCIDR(value: string): { v4: boolean } | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(value);
  if (!m) return undefined;
  const ip = parseIP(m[1]!);
  if (!ip) return undefined;
  const bits = Number(m[2]);
  const v4 = isIPv4Address(ip) && !ip.v6Syntax;
  return bits <= (v4 ? 32 : 128) ? { v4 } : undefined;
}

export function validateNode(obj: Obj, old: Obj | undefined): FieldCause[] {
  const meta = asObj(obj.metadata);
  const errs = old
    ? validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true })
    : validateObjectMeta(meta, { namespaced: false, nameFn: nameIsDNSSubdomain, kubeFinalizers: true });
  const cidrs = asArr(asObj(obj.spec).podCIDRs).map(asStr);
  const parsed = cidrs.map(parseCIDR);
  cidrs.forEach((c, i) => {
    if (!parsed[i])
      errs.push(
        invalid(index("spec.podCIDRs", i), c, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
      );
  });
  if (cidrs.length > 1 && parsed.every(Boolean)) {
    const v4 = parsed.filter((p) => p!.v4).length;
    if (cidrs.length > 2 || v4 !== 1)
      errs.push(invalid("spec.podCIDRs", cidrs, "may specify no more than one CIDR for each IP family"));
  }
  return errs;
}
