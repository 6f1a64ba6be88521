// One probe = one HTTP/1.1 request on a fresh TCP (or TLS) connection, ended afterwards (socket-close.ts).
//
// Written on node:net/node:tls with a small response parser rather than undici or node:http:
// a probe needs only the status line, two framing headers and at most 64 KiB of body, and
// per-probe CPU is what bounds how many pods one operator can probe (undici costs about twice
// as much per fresh connection). The parser (http-response-parser.ts) handles 1xx interim
// responses, content-length, chunked and close-delimited bodies, and HEAD/204/304 without a
// body. A response counts as complete at the end of its body or at its first 64 KiB, whichever
// comes first, whether or not the body is judged: a body that hangs is a timeout, and latency
// runs to the last byte.
import { connect as netConnect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { connect as tlsConnect, type SecureContext } from "node:tls";
import type { ProbeErrorKind, ProbeRequest, RawProbeResult } from "../domain/probe-request.js";
import { ResponseParser } from "./http-response-parser.js";
import { classifySocketError } from "./socket-error.js";
import { closeProbeSocket } from "./socket-close.js";
import { errorResult, timeoutResult } from "./raw-results.js";
import { createSecureContextCache, probeSignature, tlsOptionsFor, verifyNameOf } from "./probe-tls.js";
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
  const contextFor = createSecureContextCache();

  function headFor(req: ProbeRequest): Head | Error {
    let head = heads.get(req);
    if (head === undefined) {
      const text = buildHead(req, userAgent);
      // Unsigned requests never change: encode them once.
      head =
        typeof text === "string"
          ? { text, bytes: req.signatureKey ? undefined : Buffer.from(`${text}\r\n`, "latin1") }
          : text;
      heads.set(req, head);
    }
    return head;
  }

  return (req, timeoutMs, readBody) => {
    const start = performance.now();
    const head = headFor(req);
    if (head instanceof Error)
      return Promise.resolve({
        kind: "error",
        failureKind: "other",
        error: head.message,
        endAtMs: 0,
        finishedAt: now(),
      });
    let request: Buffer;
    if (head.bytes) request = head.bytes;
    else {
      const signature = probeSignature(req.signatureKey as Uint8Array, now(), req.method, req.path);
      request = Buffer.from(`${head.text}X-Healthprobe-Signature: ${signature}\r\n\r\n`, "latin1");
    }
    const secureContext = req.scheme === "HTTPS" ? contextFor(req.caBundle ?? "") : undefined;
    return new Promise<RawProbeResult>(
      (resolve) => new ProbeAttempt(req, request, { start, timeoutMs, readBody, secureContext, now }, resolve),
    );
  };
}

interface AttemptOptions {
  /** performance.now() when the probe began: the origin of every offset in the result. */
  start: number;
  timeoutMs: number;
  readBody: boolean;
  /** Set for HTTPS. */
  secureContext: SecureContext | undefined;
  now: () => number;
}

// The socket's and timer's callbacks are shared functions that find their attempt through the
// socket (or the timer's argument), not closures made per probe: at a thousand probes a second the
// closures and their allocation were a measurable part of the CPU per probe.
const ATTEMPT = Symbol("probe attempt");
type ProbeSocket = Socket & { [ATTEMPT]: ProbeAttempt };

function onSocketRead(this: ProbeSocket, n: number, buf: Uint8Array): boolean {
  this[ATTEMPT].onData((buf as Buffer).subarray(0, n));
  return true;
}
function onSocketData(this: ProbeSocket, chunk: Buffer): void {
  this[ATTEMPT].onData(chunk);
}
function onSocketConnect(this: ProbeSocket): void {
  this[ATTEMPT].tcpUp = true;
}
function onSocketReady(this: ProbeSocket): void {
  this[ATTEMPT].send();
}
function onSocketEnd(this: ProbeSocket): void {
  this[ATTEMPT].onEnd();
}
function onSocketError(this: ProbeSocket, err: NodeJS.ErrnoException & { reason?: string }): void {
  this[ATTEMPT].onError(err);
}
function onSocketClose(this: ProbeSocket): void {
  this[ATTEMPT].onClose();
}
function onAttemptTimeout(attempt: ProbeAttempt): void {
  attempt.onTimeout();
}

/** One probe in flight: its socket, its timer and its parser, settled exactly once. */
class ProbeAttempt {
  private readonly parser: ResponseParser;
  private readonly timer: NodeJS.Timeout;
  private readonly socket: ProbeSocket;
  private settled = false;
  /** The request was written (after the TLS handshake for HTTPS). */
  private connected = false;
  tcpUp = false;
  private sentAtMs: number | undefined;

  constructor(
    private readonly req: ProbeRequest,
    private readonly request: Buffer,
    private readonly o: AttemptOptions,
    private readonly resolve: (result: RawProbeResult) => void,
  ) {
    this.parser = new ResponseParser(o.readBody && req.method === "GET", req.method !== "HEAD");
    this.timer = setTimeout(onAttemptTimeout, o.timeoutMs, this);
    const socket = (o.secureContext ? this.connectTls(o.secureContext) : this.connectTcp()) as ProbeSocket;
    socket[ATTEMPT] = this;
    socket.on("end", onSocketEnd);
    socket.on("error", onSocketError);
    socket.on("close", onSocketClose);
    this.socket = socket;
  }

  private connectTls(secureContext: SecureContext): Socket {
    const socket = tlsConnect(tlsOptionsFor(this.req, secureContext));
    socket.on("connect", onSocketConnect);
    socket.on("secureConnect", onSocketReady);
    socket.on("data", onSocketData);
    return socket;
  }

  private connectTcp(): Socket {
    // Reads land in one shared buffer (the parser copies what it keeps): no allocation per read.
    // No TCP_NODELAY: the request is a single write, which Nagle never holds back.
    const socket = netConnect({
      host: this.req.address,
      port: this.req.port,
      onread: { buffer: readBuffer, callback: onSocketRead },
    });
    socket.on("connect", onSocketReady);
    return socket;
  }

  /** Handed to the parser, which stamps the head and the end with it. */
  private readonly elapsed = () => performance.now() - this.o.start;

  send(): void {
    this.tcpUp = true;
    this.connected = true;
    this.sentAtMs = this.elapsed();
    this.socket.write(this.request);
  }

  onData(chunk: Buffer): void {
    if (this.settled) return;
    const state = this.parser.push(chunk, this.elapsed);
    if (state === "more") return;
    if (state === "invalid") return this.fail(this.parser.problemKind, this.parser.problem);
    this.finish(this.parser.result(this.sentAtMs ?? 0, this.o.now()));
  }

  onEnd(): void {
    if (this.settled) return;
    if (this.parser.end(this.elapsed) === "done")
      return this.finish(this.parser.result(this.sentAtMs ?? 0, this.o.now()));
    this.fail(this.parser.problemKind, this.parser.problem);
  }

  onError(err: NodeJS.ErrnoException & { reason?: string }): void {
    if (this.settled) return;
    const failure = classifySocketError(
      err,
      this.req.scheme === "HTTPS",
      this.connected,
      !this.tcpUp,
      verifyNameOf(this.req),
    );
    this.fail(failure.kind, failure.message);
  }

  onClose(): void {
    if (this.settled) return;
    this.fail("connect", this.connected ? "connection closed before the response" : "connect: connection closed");
  }

  onTimeout(): void {
    this.finish(timeoutResult(this.o.timeoutMs, this.sentAtMs, this.o.now()));
  }

  private fail(failureKind: ProbeErrorKind, error: string): void {
    this.finish(errorResult(failureKind, error, this.elapsed(), this.sentAtMs, this.o.now()));
  }

  private finish(result: RawProbeResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    closeProbeSocket(this.socket, this.o.secureContext !== undefined);
    this.resolve(result);
  }
}

interface Head {
  /** Request line and headers, without the final blank line. */
  text: string;
  /** The whole request, when it carries no per-probe signature. */
  bytes: Buffer | undefined;
}

function buildHead(req: ProbeRequest, userAgent: string): string | Error {
  if (!/^\/[\x21-\x7e]*$/.test(req.path)) return new Error(`invalid request path ${JSON.stringify(req.path)}`);
  const defaultPort = req.scheme === "HTTPS" ? 443 : 80;
  const address = req.address.includes(":") ? `[${req.address}]` : req.address;
  const host = req.host || (req.port === defaultPort ? address : `${address}:${req.port}`);
  if (!isFieldValue(host)) return new Error("invalid Host header value");
  let head = `${req.method} ${req.path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: ${userAgent}\r\nAccept: */*\r\nConnection: close\r\n`;
  for (const h of req.headers) {
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(h.name))
      return new Error(`invalid header name ${JSON.stringify(h.name)}`);
    // Values are secret: name the header, never echo the value.
    if (!isFieldValue(h.value)) return new Error(`invalid value for header ${h.name}`);
    head += `${h.name}: ${h.value}\r\n`;
  }
  return head;
}

function isFieldValue(v: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(v);
}
