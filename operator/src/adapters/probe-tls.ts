// TLS for probes, shared by the HTTP and gRPC probers: the destination is always the pod IP,
// `host` is only the server name (SNI) and the name the certificate is checked against.
import { createHmac } from "node:crypto";
import { checkServerIdentity, createSecureContext, type ConnectionOptions, type SecureContext } from "node:tls";
import type { ProbeRequest } from "../domain/probe-request.js";

/** Parsing a CA bundle costs more than a probe; policies share a handful of bundles. */
export function createSecureContextCache(): (caBundle: string) => SecureContext {
  const contexts = new Map<string, SecureContext>();
  return (caBundle) => {
    let ctx = contexts.get(caBundle);
    if (!ctx) {
      if (contexts.size >= 64) contexts.clear();
      ctx = caBundle ? createSecureContext({ ca: caBundle }) : createSecureContext();
      contexts.set(caBundle, ctx);
    }
    return ctx;
  };
}

/** tls.connect options for a probe: verified only with a caBundle, as kubelet does. */
export function tlsOptionsFor(req: ProbeRequest, secureContext: SecureContext): ConnectionOptions {
  const sni = req.host ? hostName(req.host) : undefined;
  const verifyName = verifyNameOf(req);
  return {
    host: req.address,
    port: req.port,
    // SNI carries names only, never IP literals.
    servername: sni && !isIpLiteral(sni) ? sni : "",
    rejectUnauthorized: req.caBundle !== undefined && req.caBundle !== "",
    // Cached, also without a bundle: a fresh default context per probe costs more than the probe.
    secureContext,
    checkServerIdentity: (_name, cert) => checkServerIdentity(verifyName, cert),
  };
}

export function verifyNameOf(req: ProbeRequest): string {
  return req.host ? hostName(req.host) : req.address;
}

/** The X-Healthprobe-Signature value: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<METHOD>.<path>")>. */
export function probeSignature(key: Uint8Array, nowMs: number, method: string, path: string): string {
  const t = Math.floor(nowMs / 1000);
  return `t=${t},v1=${createHmac("sha256", key).update(`${t}.${method}.${path}`).digest("hex")}`;
}

/** "example.com:8443" -> "example.com"; "[::1]:443" -> "::1". */
function hostName(host: string): string {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end > 0 ? host.slice(1, end) : host;
  }
  const colon = host.indexOf(":");
  return colon >= 0 && host.indexOf(":", colon + 1) < 0 ? host.slice(0, colon) : host;
}

function isIpLiteral(s: string): boolean {
  return /^[0-9.]+$/.test(s) || s.includes(":");
}
