// One probe = one HTTP/1.1 request on a fresh TCP (or TLS) connection, closed afterwards.
//
// Written on node:net/node:tls with a small response parser rather than undici or node:http:
// a probe needs only the status line, two framing headers and at most 64 KiB of body, and
// per-probe CPU is what bounds how many pods one operator can probe (undici costs about twice
// as much per fresh connection). The parser handles 1xx interim responses, content-length,
// chunked and close-delimited bodies, and HEAD/204/304 without a body. A response counts as
// complete at the end of its body or at its first 64 KiB, whichever comes first, whether or
// not the body is judged: a body that hangs is a timeout, and latency runs to the last byte.
import { createHmac } from "node:crypto";
import { connect as netConnect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { checkServerIdentity, connect as tlsConnect, createSecureContext, type SecureContext } from "node:tls";
import { MAX_BODY_BYTES, type ProbeRequest, type RawProbeResult } from "../domain/probe-request.js";
import { operatorVersion } from "../version.js";

/** Sends one probe: `timeoutMs` bounds everything from connect to the last byte read; `readBody` keeps the body for judging. */
export type ProbeExecutor = (req: ProbeRequest, timeoutMs: number, readBody: boolean) => Promise<RawProbeResult>;

export interface HttpProberOptions {
  /** Defaults to healthprobe-operator/<version of package.json>. */
  userAgent?: string;
  /** Epoch ms, for finishedAt and the signature timestamp. */
  now?: () => number;
}

const MAX_HEAD_BYTES = 16 * 1024;
// Safe to share: each read is parsed synchronously in its callback before the next one.
const readBuffer = Buffer.allocUnsafe(64 * 1024);
const MAX_CHUNK_LINE = 1024;

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

type ParseState = "more" | "done" | "invalid";

/** "HTTP/" so far, for however many bytes have arrived. */
function startsLikeHttp(buf: Buffer): boolean {
  const n = Math.min(buf.length, 5);
  for (let i = 0; i < n; i++) if (buf[i] !== HTTP_PREFIX[i]) return false;
  return true;
}
const HTTP_PREFIX = [0x48, 0x54, 0x54, 0x50, 0x2f];

/** Offset just past the blank line ending a response head (CRLF or bare LF), or -1. */
function headEnd(buf: Buffer): number {
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) {
    if (buf[i + 1] === 10) return i + 2;
    if (buf[i + 1] === 13 && buf[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** The code of "HTTP/1.x NNN[ reason]", or -1. */
function statusOf(buf: Buffer): number {
  if (buf[5] !== 0x31 || buf[6] !== 0x2e || (buf[7] !== 0x30 && buf[7] !== 0x31) || buf[8] !== 0x20) return -1;
  const a = (buf[9] as number) - 0x30;
  const b = (buf[10] as number) - 0x30;
  const c = (buf[11] as number) - 0x30;
  if (a < 1 || a > 5 || b < 0 || b > 9 || c < 0 || c > 9) return -1;
  const after = buf[12];
  if (after !== 0x20 && after !== 13 && after !== 10) return -1;
  return a * 100 + b * 10 + c;
}
type BodyMode = "none" | "length" | "chunked" | "close";

/**
 * Incremental HTTP/1.1 response parser for probes: status line, framing headers, body up to
 * MAX_BODY_BYTES. The body is always read to its end or that limit (a response is complete
 * only then); it is kept only when `keepBody`. `expectBody` is false for HEAD.
 * Exported for its own tests.
 */
export class ResponseParser {
  problem = "invalid HTTP response";
  statusCode = 0;
  headersAtMs = 0;
  endAtMs = 0;
  private head: Buffer | undefined;
  private mode: BodyMode = "none";
  private remaining = 0; // length mode: bytes left; chunked: bytes left in the current chunk
  private chunkState: "size" | "data" | "crlf" = "size";
  private chunkLine = "";
  private body: Buffer[] = [];
  private bodyBytes = 0;
  private finished = false;

  constructor(
    private readonly keepBody: boolean,
    private readonly expectBody = true,
  ) {}

  push(chunk: Buffer, elapsed: () => number): ParseState {
    if (this.finished) return "done";
    if (this.statusCode === 0) {
      const buf = this.head ? (this.head = Buffer.concat([this.head, chunk])) : chunk;
      const state = this.parseHead(buf, elapsed);
      if (state !== "done") return state;
      if (this.statusCode === 0) return "more";
      if (this.finished) return "done";
      if (this.mode === "none") return this.complete(elapsed);
      return "more";
    }
    return this.pushBody(chunk, elapsed);
  }

  /** The peer closed its side. */
  end(elapsed: () => number): ParseState {
    if (this.finished) return "done";
    if (this.statusCode === 0) {
      this.problem = this.head && this.head.length > 0 ? "invalid HTTP response: truncated headers" : "connection closed before the response";
      return "invalid";
    }
    if (this.mode === "close") return this.complete(elapsed);
    this.problem = "connection closed before the end of the body";
    return "invalid";
  }

  result(sentAtMs: number, finishedAt: number): RawProbeResult {
    const r: RawProbeResult = {
      kind: "response",
      statusCode: this.statusCode,
      sentAtMs,
      headersAtMs: this.headersAtMs,
      endAtMs: this.endAtMs,
      finishedAt,
    };
    if (this.keepBody) r.body = Buffer.concat(this.body).toString("utf8");
    return r;
  }

  private complete(elapsed: () => number): ParseState {
    this.finished = true;
    this.endAtMs = this.mode !== "none" ? elapsed() : this.headersAtMs;
    return "done";
  }

  /** Returns "done" when a final response head was parsed (statusCode set), or when only 1xx heads were consumed and more is needed (statusCode 0). */
  private parseHead(buf: Buffer, elapsed: () => number): ParseState {
    // Byte-level: the common case (status only, no body) allocates no strings.
    for (;;) {
      if (!startsLikeHttp(buf)) return "invalid";
      const end = headEnd(buf);
      if (end < 0) {
        if (buf.length > MAX_HEAD_BYTES) {
          this.problem = "invalid HTTP response: headers too large";
          return "invalid";
        }
        // The read buffer may be reused by the socket: keep a copy.
        this.head = this.head === buf ? buf : Buffer.from(buf);
        return "more";
      }
      if (end > MAX_HEAD_BYTES) {
        this.problem = "invalid HTTP response: headers too large";
        return "invalid";
      }
      const code = statusOf(buf);
      if (code < 0) return "invalid";
      const rest = buf.subarray(end);
      if (code >= 100 && code < 200 && code !== 101) {
        // Interim response (100 Continue, 103 Early Hints): the final one follows.
        buf = rest;
        this.head = undefined;
        if (buf.length === 0) return "more";
        continue;
      }
      this.statusCode = code;
      this.head = undefined;
      this.headersAtMs = elapsed();
      if (!this.expectBody || code === 204 || code === 304 || code === 101) {
        this.mode = "none";
        return "done";
      }
      const framing = this.framing(buf.toString("latin1", 0, end).split(/\r?\n/));
      if (framing === "invalid") {
        this.statusCode = 0;
        return "invalid";
      }
      if (this.mode !== "none" && rest.length > 0) {
        const state = this.pushBody(rest, elapsed);
        if (state === "invalid") {
          this.statusCode = 0;
          return "invalid";
        }
      }
      return "done";
    }
  }

  private framing(lines: string[]): "ok" | "invalid" {
    let length: number | undefined;
    let chunked = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      const colon = line.indexOf(":");
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "transfer-encoding") {
        const codings = value.toLowerCase().split(",").map((s) => s.trim());
        chunked = codings[codings.length - 1] === "chunked";
      } else if (name === "content-length") {
        if (!/^[0-9]+$/.test(value) || (length !== undefined && length !== Number(value))) {
          this.problem = "invalid HTTP response: bad content-length";
          return "invalid";
        }
        length = Number(value);
      }
    }
    // Transfer-Encoding overrides Content-Length (RFC 9112 6.3).
    if (chunked) this.mode = "chunked";
    else if (length !== undefined) {
      this.mode = length === 0 ? "none" : "length";
      this.remaining = length;
    } else this.mode = "close";
    return "ok";
  }

  private take(bytes: Buffer): boolean {
    const room = MAX_BODY_BYTES - this.bodyBytes;
    if (bytes.length >= room) {
      if (this.keepBody) this.body.push(Buffer.from(bytes.subarray(0, room)));
      this.bodyBytes = MAX_BODY_BYTES;
      return true; // the limit: stop reading
    }
    // A copy: the socket may reuse its read buffer. A body nobody judges is only counted.
    if (this.keepBody) this.body.push(Buffer.from(bytes));
    this.bodyBytes += bytes.length;
    return false;
  }

  private pushBody(chunk: Buffer, elapsed: () => number): ParseState {
    if (this.finished) return "done";
    if (this.mode === "close") return this.take(chunk) ? this.complete(elapsed) : "more";
    if (this.mode === "length") {
      const part = chunk.length > this.remaining ? chunk.subarray(0, this.remaining) : chunk;
      this.remaining -= part.length;
      if (this.take(part) || this.remaining === 0) return this.complete(elapsed);
      return "more";
    }
    if (this.mode === "none") return this.complete(elapsed);
    let i = 0;
    while (i < chunk.length) {
      if (this.chunkState === "size") {
        const nl = chunk.indexOf(10, i);
        const end = nl < 0 ? chunk.length : nl;
        this.chunkLine += chunk.toString("latin1", i, end);
        if (this.chunkLine.length > MAX_CHUNK_LINE) {
          this.problem = "invalid HTTP response: bad chunk size";
          return "invalid";
        }
        if (nl < 0) return "more";
        i = nl + 1;
        const sizeText = this.chunkLine.replace(/\r$/, "").split(";")[0]?.trim() ?? "";
        this.chunkLine = "";
        if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) {
          this.problem = "invalid HTTP response: bad chunk size";
          return "invalid";
        }
        this.remaining = parseInt(sizeText, 16);
        // The last chunk: trailers, if any, carry nothing a probe needs.
        if (this.remaining === 0) return this.complete(elapsed);
        this.chunkState = "data";
      } else if (this.chunkState === "data") {
        const n = Math.min(this.remaining, chunk.length - i);
        if (this.take(chunk.subarray(i, i + n))) return this.complete(elapsed);
        this.remaining -= n;
        i += n;
        if (this.remaining === 0) this.chunkState = "crlf";
      } else {
        // The CRLF after chunk data; tolerate a bare LF.
        const c = chunk[i] as number;
        i++;
        if (c === 10) this.chunkState = "size";
        else if (c !== 13) {
          this.problem = "invalid HTTP response: bad chunk framing";
          return "invalid";
        }
      }
    }
    return "more";
  }
}
