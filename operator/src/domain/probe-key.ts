import type { ProbeRequest } from "./probe-request.js";

/**
 * Identity of a probe on the wire: two requests with the same key are sent once.
 *
 * Headers are compared order-insensitively by name (case-insensitive, as HTTP treats them),
 * keeping the relative order of repeated names, since only that order carries meaning.
 * Values, path, host and the CA bundle compare exactly. The key holds header values and the
 * signature key, so it is an in-memory identity only: never log or export it. The type and the
 * gRPC service are part of it; a TCP probe is only its address and port (nothing else is sent).
 */
export function computeProbeKey(req: ProbeRequest): string {
  const type = req.type ?? "HTTP";
  if (type === "TCP") return JSON.stringify([type, req.address, req.port]);
  const headers = req.headers
    .map((h, i) => ({ n: h.name.toLowerCase(), v: h.value, i }))
    .sort((a, b) => (a.n < b.n ? -1 : a.n > b.n ? 1 : a.i - b.i))
    .map((h) => [h.n, h.v]);
  const http = type === "HTTP";
  return JSON.stringify([
    type,
    req.scheme,
    req.address,
    req.port,
    http ? req.method : "",
    http ? req.path : "",
    req.host ?? "",
    headers,
    req.scheme === "HTTPS" ? (req.caBundle ?? "") : "",
    req.signatureKey ? toHex(req.signatureKey) : "",
    http ? "" : (req.grpcService ?? ""),
  ]);
}

function toHex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}
