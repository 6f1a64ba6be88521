// What a failed probe connection is called: a kind for the metric and a message for people.
import type { ProbeErrorKind } from "../domain/probe-request.js";

export interface SocketFailure {
  kind: ProbeErrorKind;
  message: string;
}

const UNKNOWN_AUTHORITY = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
]);

/**
 * Names a socket error by phase: before TCP connect, during the TLS handshake, or after.
 * A reset after connect is still a broken connection ("connect"); any other read error is "other".
 */
export function classifySocketError(
  err: NodeJS.ErrnoException & { reason?: string },
  tls: boolean,
  requestSent: boolean,
  tcpConnecting: boolean,
  verifyName: string,
): SocketFailure {
  const code = err.code ?? "";
  if (UNKNOWN_AUTHORITY.has(code)) return { kind: "tls", message: "TLS: certificate signed by unknown authority" };
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return { kind: "tls", message: `TLS: certificate is not valid for ${verifyName}` };
  if (code === "CERT_HAS_EXPIRED") return { kind: "tls", message: "TLS: certificate has expired" };
  if (code === "CERT_NOT_YET_VALID") return { kind: "tls", message: "TLS: certificate is not yet valid" };
  if (tcpConnecting) return { kind: "connect", message: `connect ${code || err.message}` };
  if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_"))
    return { kind: "tls", message: `TLS: ${err.reason ?? code}` };
  if (tls && !requestSent) return { kind: "tls", message: `TLS: handshake failed (${code || err.message})` };
  if (code === "ECONNRESET") return { kind: "connect", message: "connection reset by peer" };
  return { kind: "other", message: `read ${code || err.message}` };
}
