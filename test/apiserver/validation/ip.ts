// IP address checks with Go's semantics: netutils.ParseIPSloppy (IPv4 parts may carry leading
// zeros), net.IP.To4 (IPv4-mapped IPv6 counts as IPv4) and the IsLoopback/IsLinkLocal* family.
// Messages from kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/ip.go
// and pkg/apis/core/validation/validation.go (ValidateEndpointIP).
import { isIPv6 } from "node:net";
import { invalid } from "./field-errors.js";
import type { FieldCause } from "./index.js";

export interface ParsedIP {
  /** 4 bytes for IPv4 and IPv4-mapped IPv6, otherwise 16. */
  bytes: number[];
  /** True when the text was IPv6 syntax (even if it maps an IPv4 address). */
  v6Syntax: boolean;
}

function parseIPv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]+$/.test(p)) return undefined;
    const n = Number.parseInt(p, 10);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function parseIPv6(s: string): number[] | undefined {
  if (!isIPv6(s) || s.includes("%")) return undefined;
  let text = s;
  // Fold an embedded IPv4 tail into two hex groups.
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const v4 = parseIPv4(v4Tail[1]!);
    if (!v4) return undefined;
    text = `${text.slice(0, -v4Tail[1]!.length)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  if (groups.length !== 8) return undefined;
  const bytes: number[] = [];
  for (const g of groups) {
    const n = Number.parseInt(g, 16);
    bytes.push(n >> 8, n & 0xff);
  }
  return bytes;
}

/** Returns undefined when Go's ParseIPSloppy would return nil. */
export function parseIP(s: string): ParsedIP | undefined {
  if (s.includes(":")) {
    const b = parseIPv6(s);
    if (!b) return undefined;
    const mapped = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
    return { bytes: mapped ? b.slice(12) : b, v6Syntax: true };
  }
  const v4 = parseIPv4(s);
  return v4 ? { bytes: v4, v6Syntax: false } : undefined;
}

export const isIPv4Address = (ip: ParsedIP): boolean => ip.bytes.length === 4;

export function isUnspecified(ip: ParsedIP): boolean {
  return ip.bytes.every((b) => b === 0);
}
export function isLoopback(ip: ParsedIP): boolean {
  if (isIPv4Address(ip)) return ip.bytes[0] === 127;
  return ip.bytes.slice(0, 15).every((b) => b === 0) && ip.bytes[15] === 1;
}
export function isLinkLocalUnicast(ip: ParsedIP): boolean {
  if (isIPv4Address(ip)) return ip.bytes[0] === 169 && ip.bytes[1] === 254;
  return ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80;
}
export function isLinkLocalMulticast(ip: ParsedIP): boolean {
  if (isIPv4Address(ip)) return ip.bytes[0] === 224 && ip.bytes[1] === 0 && ip.bytes[2] === 0;
  return ip.bytes[0] === 0xff && (ip.bytes[1]! & 0x0f) === 0x02;
}

export function isValidIP(field: string, value: string): FieldCause[] {
  return parseIP(value) ? [] : [invalid(field, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")];
}

export function isValidIPv4Address(field: string, value: string): FieldCause[] {
  const ip = parseIP(value);
  return ip && isIPv4Address(ip) ? [] : [invalid(field, value, "must be a valid IPv4 address")];
}

export function isValidIPv6Address(field: string, value: string): FieldCause[] {
  const ip = parseIP(value);
  return ip && !isIPv4Address(ip) ? [] : [invalid(field, value, "must be a valid IPv6 address")];
}

/**
 * ValidateEndpointIP: used by the real server for Endpoints and EndpointSlice addresses.
 * It rejects unspecified, loopback and link-local addresses.
 */
export function validateEndpointIP(field: string, value: string): FieldCause[] {
  const ip = parseIP(value);
  if (!ip) return [invalid(field, value, "must be a valid IP address")];
  const errs: FieldCause[] = [];
  if (isUnspecified(ip)) errs.push(invalid(field, value, `may not be unspecified (${value})`));
  if (isLoopback(ip)) errs.push(invalid(field, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"));
  if (isLinkLocalUnicast(ip))
    errs.push(invalid(field, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"));
  if (isLinkLocalMulticast(ip))
    errs.push(invalid(field, value, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"));
  return errs;
}
