// A gRPC probe: one grpc.health.v1.Health/Check call on a fresh HTTP/2 connection, closed
// afterwards. Plaintext is h2c with prior knowledge (scheme HTTP); TLS negotiates h2 by ALPN
// (scheme HTTPS), verified against tls.caBundle when set. `host` is the :authority and the SNI;
// the destination is always the pod IP. `headers` are sent as metadata, and a signature as
// x-healthprobe-signature over "<t>.POST./grpc.health.v1.Health/Check".
//
// node:http2 with a hand-written codec (grpc-health-codec.ts) rather than a gRPC library: the
// call is one request message of a few bytes and one response of two.
import {
  connect as http2Connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { connect as tlsConnect } from "node:tls";
import type { ProbeErrorKind, ProbeRequest, RawProbeResult } from "../domain/probe-request.js";
import { decodeHealthCheckResponse, encodeHealthCheckRequest } from "./grpc-health-codec.js";
import { defaultUserAgent, type HttpProberOptions, type ProbeExecutor } from "./http-prober.js";
import { createSecureContextCache, probeSignature, tlsOptionsFor, verifyNameOf } from "./probe-tls.js";
import { classifySocketError } from "./socket-error.js";
import { errorResult, timeoutResult } from "./raw-results.js";

export const GRPC_HEALTH_CHECK_PATH = "/grpc.health.v1.Health/Check";

/** At most this much response body is kept: a HealthCheckResponse is a few bytes. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export function createGrpcProber(opts: HttpProberOptions = {}): ProbeExecutor {
  const userAgent = opts.userAgent ?? defaultUserAgent();
  const now = opts.now ?? Date.now;
  const contextFor = createSecureContextCache();
  return (req, timeoutMs) =>
    new Promise<RawProbeResult>((resolve) => {
      const headers: OutgoingHttpHeaders = {
        ":method": "POST",
        ":path": GRPC_HEALTH_CHECK_PATH,
        ":scheme": req.scheme === "HTTPS" ? "https" : "http",
        ":authority":
          req.host || (req.address.includes(":") ? `[${req.address}]:${req.port}` : `${req.address}:${req.port}`),
        "content-type": "application/grpc",
        te: "trailers",
        "user-agent": userAgent,
        "grpc-timeout": `${Math.min(timeoutMs, 99_999_999)}m`,
      };
      for (const h of req.headers) headers[h.name.toLowerCase()] = h.value;
      if (req.signatureKey)
        headers["x-healthprobe-signature"] = probeSignature(req.signatureKey, now(), "POST", GRPC_HEALTH_CHECK_PATH);
      const socket =
        req.scheme === "HTTPS"
          ? tlsConnect({ ...tlsOptionsFor(req, contextFor(req.caBundle ?? "")), ALPNProtocols: ["h2"] })
          : netConnect({ host: req.address, port: req.port });
      new GrpcAttempt(req, socket, headers, { start: performance.now(), timeoutMs, now }, resolve);
    });
}

interface AttemptOptions {
  /** performance.now() when the probe began: the origin of every offset in the result. */
  start: number;
  timeoutMs: number;
  now: () => number;
}

/** One call in flight: its socket, session, stream and timer, settled exactly once. */
class GrpcAttempt {
  private readonly timer: NodeJS.Timeout;
  private readonly session: ClientHttp2Session;
  private settled = false;
  private tcpUp = false;
  private sentAtMs: number | undefined;
  private httpStatus: number | undefined;
  private grpcStatus: number | undefined;
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(
    private readonly req: ProbeRequest,
    private readonly socket: Socket,
    headers: OutgoingHttpHeaders,
    private readonly o: AttemptOptions,
    private readonly resolve: (result: RawProbeResult) => void,
  ) {
    this.timer = setTimeout(this.onTimeout, o.timeoutMs);
    // HTTP/2 writes the preface, SETTINGS, HEADERS and DATA in several small writes: without
    // this, Nagle holds the later ones back for the server's delayed ACK (~40 ms a call).
    socket.setNoDelay(true);
    socket.once("connect", () => (this.tcpUp = true));
    socket.on("error", this.onSocketError);
    this.session = http2Connect(
      `${req.scheme === "HTTPS" ? "https" : "http"}://${req.address.includes(":") ? `[${req.address}]` : req.address}:${req.port}`,
      {
        createConnection: () => socket,
        settings: { enablePush: false },
      },
    );
    this.session.on("error", this.onSessionError);
    this.session.once("connect", () => (this.sentAtMs = this.elapsed()));
    const stream = this.session.request(headers);
    stream.on("response", this.onHeaders);
    stream.on("trailers", this.onHeaders);
    stream.on("data", this.onData);
    stream.on("error", this.onSessionError);
    stream.on("close", () => this.onClose(stream));
    stream.end(encodeHealthCheckRequest(req.grpcService ?? ""));
  }

  private readonly elapsed = () => performance.now() - this.o.start;

  private readonly onHeaders = (headers: IncomingHttpHeaders) => {
    const status = headers[":status"];
    if (status !== undefined) this.httpStatus = Number(status);
    const grpcStatus = headers["grpc-status"];
    if (typeof grpcStatus === "string" && /^[0-9]+$/.test(grpcStatus)) this.grpcStatus = Number(grpcStatus);
  };

  private readonly onData = (chunk: Buffer) => {
    if (this.received + chunk.length > MAX_RESPONSE_BYTES)
      return this.fail("other", "gRPC: response message over 64 KiB");
    this.chunks.push(chunk);
    this.received += chunk.length;
  };

  private onClose(stream: ClientHttp2Stream): void {
    if (this.settled) return;
    if (this.httpStatus !== undefined && this.httpStatus !== 200)
      return this.fail("other", `not a gRPC answer: HTTP ${this.httpStatus}`);
    if (this.grpcStatus === undefined) {
      const code = stream.rstCode ?? constants.NGHTTP2_NO_ERROR;
      if (this.socket.destroyed || code === constants.NGHTTP2_NO_ERROR)
        return this.fail("connect", "connection closed before the response");
      return this.fail("other", `gRPC: stream reset (HTTP/2 error ${code})`);
    }
    const end = this.elapsed();
    const r: RawProbeResult = {
      kind: "grpc",
      grpcStatus: this.grpcStatus,
      sentAtMs: this.sentAtMs ?? end,
      endAtMs: end,
      finishedAt: this.o.now(),
    };
    if (this.grpcStatus === 0) {
      const status = decodeHealthCheckResponse(Buffer.concat(this.chunks));
      if (status instanceof Error) return this.fail("other", status.message);
      r.servingStatus = status;
    }
    this.finish(r);
  }

  private readonly onSocketError = (err: NodeJS.ErrnoException & { reason?: string }) => {
    if (this.settled) return;
    const failure = classifySocketError(
      err,
      this.req.scheme === "HTTPS",
      this.sentAtMs !== undefined,
      !this.tcpUp,
      verifyNameOf(this.req),
    );
    this.fail(failure.kind, failure.message);
  };

  private readonly onSessionError = (err: NodeJS.ErrnoException) => {
    if (this.settled) return;
    if (
      err.code === "ERR_HTTP2_ERROR" ||
      err.code === "ERR_HTTP2_SESSION_ERROR" ||
      err.code === "ERR_HTTP2_STREAM_ERROR"
    ) {
      return this.fail("other", `not an HTTP/2 server: ${err.message}`);
    }
    this.onSocketError(err);
  };

  private readonly onTimeout = () => this.finish(timeoutResult(this.o.timeoutMs, this.sentAtMs, this.o.now()));

  private fail(failureKind: ProbeErrorKind, error: string): void {
    this.finish(errorResult(failureKind, error, this.elapsed(), this.sentAtMs, this.o.now()));
  }

  private finish(result: RawProbeResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.session.destroy();
    this.socket.destroy();
    this.resolve(result);
  }
}
