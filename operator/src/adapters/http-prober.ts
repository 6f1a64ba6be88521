// One probe = one HTTP/1.1 request on a fresh TCP (or TLS) connection, closed afterwards.
//
// Written on node:net/node:tls with a small response parser rather than undici or node:http:
// a probe needs only the status line, two framing headers and at most 64 KiB of body, and
// per-probe CPU is what bounds how many pods one operator can probe (undici costs about twice
// as much per fresh connection). The parser (http-response-parser.ts) handles 1xx interim
// responses, content-length, chunked and close-delimited bodies, and HEAD/204/304 without a
// body. A response counts as complete at the end of its body or at its first 64 KiB, whichever
// comes first, whether or not the body is judged: a body that hangs is a timeout, and latency
// runs to the last byte.
import { createHmac } from "node:crypto";
import { connect as netConnect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { checkServerIdentity, connect as tlsConnect, createSecureContext, type SecureContext } from "node:tls";
import type { ProbeRequest, RawProbeResult } from "../domain/probe-request.js";
import { ResponseParser } from "./http-response-parser.js";
import { operatorVersion } from "../version.js";

/** Sends one probe: `timeoutMs` bounds everything from connect to the last byte read; `readBody` keeps the body for judging. */
export type ProbeExecutor = (req: ProbeRequest, timeoutMs: number, readBody: boolean) => Promise<RawProbeResult>;

export interface HttpProberOptions {
  /** Defaults to healthprobe-operator/<version of package.json>. */
  userAgent?: string;
  /** Epoch ms, for finishedAt and the signature timestamp. */
  now?: () => number;
}

// Safe to share: each read is parsed synchronously in its callback before the next one.
const readBuffer = Buffer.allocUnsafe(64 * 1024);

export function defaultUserAgent(): string {
  return `healthprobe-operator/${operatorVersion()}`;
}

export function createHttpProber(opts: HttpProberOptions = {}): ProbeExecutor {
  const userAgent = opts.userAgent ?? defaultUserAgent();
  const now = opts.now ?? Date.now;
  // Request heads are rebuilt only when the request object changes: the scheduler keeps one
  // object per target, so steady-state probing only formats the signature line.
  const heads = new WeakMap<ProbeRequest, Head | Error>();
  // Parsing a CA bundle costs more than a probe; policies share a handful of bundles.
  const contexts = new Map<string, SecureContext>();

  function headFor(req: ProbeRequest): Head | Error {
    let head = heads.get(req);
    if (head === undefined) {
      const text = buildHead(req, userAgent);
      // Unsigned requests never change: encode them once.
      head = typeof text === "string" ? { text, bytes: req.signatureKey ? undefined : Buffer.from(`${text}\r\n`, "latin1") } : text;
      heads.set(req, head);
    }
    return head;
  }

  function contextFor(caBundle: string): SecureContext {
    let ctx = contexts.get(caBundle);
    if (!ctx) {
      if (contexts.size >= 64) contexts.clear();
      ctx = caBundle ? createSecureContext({ ca: caBundle }) : createSecureContext();
      contexts.set(caBundle, ctx);
    }
    return ctx;
  }

  return (req, timeoutMs, readBody) =>
    new Promise<RawProbeResult>((resolve) => {
      const start = performance.now();
      const elapsed = () => performance.now() - start;
      const head = headFor(req);
      if (head instanceof Error) {
        resolve({ kind: "error", error: head.message, endAtMs: 0, finishedAt: now() });
        return;
      }
      let request: Buffer;
      if (head.bytes) request = head.bytes;
      else {
        const t = Math.floor(now() / 1000);
        const mac = createHmac("sha256", req.signatureKey as Uint8Array).update(`${t}.${req.method}.${req.path}`).digest("hex");
        request = Buffer.from(`${head.text}X-Healthprobe-Signature: t=${t},v1=${mac}\r\n\r\n`, "latin1");
      }

      const parser = new ResponseParser(readBody && req.method === "GET", req.method !== "HEAD");
      let settled = false;
      let connected = false;
      let tcpUp = false;
      let sentAtMs: number | undefined;
      let socket: Socket;

      const finish = (result: RawProbeResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(result);
      };
      const fail = (error: string) =>
        finish(sentAtMs === undefined
          ? { kind: "error", error, endAtMs: elapsed(), finishedAt: now() }
          : { kind: "error", error, sentAtMs, endAtMs: elapsed(), finishedAt: now() });
      const send = () => {
        tcpUp = true;
        connected = true;
        sentAtMs = elapsed();
        socket.write(request);
      };

      const timer = setTimeout(() => {
        const r: RawProbeResult = { kind: "timeout", timeoutMs, finishedAt: now() };
        if (sentAtMs !== undefined) r.sentAtMs = sentAtMs;
        finish(r);
      }, timeoutMs);

      if (req.scheme === "HTTPS") {
        const sni = req.host ? hostName(req.host) : undefined;
        const verifyName = sni ?? req.address;
        socket = tlsConnect({
          host: req.address,
          port: req.port,
          // SNI carries names only, never IP literals.
          servername: sni && !isIpLiteral(sni) ? sni : "",
          rejectUnauthorized: req.caBundle !== undefined && req.caBundle !== "",
          // Cached, also without a bundle: a fresh default context per probe costs more than the probe.
          secureContext: contextFor(req.caBundle ?? ""),
          checkServerIdentity: (_name, cert) => checkServerIdentity(verifyName, cert),
        });
        socket.on("connect", () => (tcpUp = true));
        socket.on("secureConnect", send);
      } else {
        // Reads land in one shared buffer (the parser copies what it keeps): no allocation per read.
        // No TCP_NODELAY: the request is a single write, which Nagle never holds back.
        socket = netConnect({
          host: req.address,
          port: req.port,
          onread: { buffer: readBuffer, callback: (n: number, buf: Uint8Array) => (onData((buf as Buffer).subarray(0, n)), true) },
        });
        socket.on("connect", send);
      }

      const onData = (chunk: Buffer) => {
        if (settled) return;
        const state = parser.push(chunk, elapsed);
        if (state === "more") return;
        if (state === "invalid") return fail(parser.problem);
        finish(parser.result(sentAtMs ?? 0, now()));
      };
      if (req.scheme === "HTTPS") socket.on("data", onData);
      socket.on("end", () => {
        if (settled) return;
        const state = parser.end(elapsed);
        if (state === "done") return finish(parser.result(sentAtMs ?? 0, now()));
        fail(parser.problem);
      });
      socket.on("error", (err: NodeJS.ErrnoException & { reason?: string }) => {
        if (settled) return;
        fail(classifySocketError(err, req.scheme === "HTTPS", connected, !tcpUp, verifyNameOf(req)));
      });
      socket.on("close", () => {
        if (!settled) fail(connected ? "connection closed before the response" : "connect: connection closed");
      });
    });
}

interface Head {
  /** Request line and headers, without the final blank line. */
  text: string;
  /** The whole request, when it carries no per-probe signature. */
  bytes: Buffer | undefined;
}

function verifyNameOf(req: ProbeRequest): string {
  return req.host ? hostName(req.host) : req.address;
}

const UNKNOWN_AUTHORITY = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
]);

/** Names a socket error by phase: before TCP connect, during the TLS handshake, or after. */
export function classifySocketError(
  err: NodeJS.ErrnoException & { reason?: string },
  tls: boolean,
  requestSent: boolean,
  tcpConnecting: boolean,
  verifyName: string,
): string {
  const code = err.code ?? "";
  if (UNKNOWN_AUTHORITY.has(code)) return "TLS: certificate signed by unknown authority";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID") return `TLS: certificate is not valid for ${verifyName}`;
  if (code === "CERT_HAS_EXPIRED") return "TLS: certificate has expired";
  if (code === "CERT_NOT_YET_VALID") return "TLS: certificate is not yet valid";
  if (tcpConnecting) return `connect ${code || err.message}`;
  if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_")) return `TLS: ${err.reason ?? code}`;
  if (tls && !requestSent) return `TLS: handshake failed (${code || err.message})`;
  if (code === "ECONNRESET") return "connection reset by peer";
  return `read ${code || err.message}`;
}

function buildHead(req: ProbeRequest, userAgent: string): string | Error {
  if (!/^\/[\x21-\x7e]*$/.test(req.path)) return new Error(`invalid request path ${JSON.stringify(req.path)}`);
  const defaultPort = req.scheme === "HTTPS" ? 443 : 80;
  const address = req.address.includes(":") ? `[${req.address}]` : req.address;
  const host = req.host || (req.port === defaultPort ? address : `${address}:${req.port}`);
  if (!isFieldValue(host)) return new Error("invalid Host header value");
  let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: ${userAgent}\r\nAccept: */*\r\nConnection: close\r\n`;
  for (const h of req.headers) {
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(h.name)) return new Error(`invalid header name ${JSON.stringify(h.name)}`);
    // Values are secret: name the header, never echo the value.
    if (!isFieldValue(h.value)) return new Error(`invalid value for header ${h.name}`);
    head += `${h.name}: ${h.value}\r\n`;
  }
  return head;
}

function isFieldValue(v: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(v);
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
