// What goes on the wire for one probe, and what a raw response looks like before judging.
// Plain data only: the prober (adapters) sends it, the scheduler (runtime) deduplicates it,
// the judgement (domain) reads the raw result.

export interface ProbeHeader {
  name: string;
  value: string;
}

/** What a probe speaks: an HTTP request, a bare TCP connect, or grpc.health.v1.Health/Check. */
export type ProbeType = "HTTP" | "TCP" | "GRPC";

export interface ProbeRequest {
  /** Absent: HTTP. */
  type?: ProbeType;
  /** HTTP or HTTPS; for GRPC, plaintext (h2c) or TLS; not used by TCP. */
  scheme: "HTTP" | "HTTPS";
  /** Pod IP, v4 or v6. The destination is always this address. */
  address: string;
  port: number;
  /** HTTP only ("" for the other types). */
  path: string;
  /** HTTP only. */
  method: "GET" | "HEAD";
  /** Host header (gRPC :authority) and TLS SNI; never changes the destination. */
  host?: string;
  /** Secret values already resolved by the caller; never logged. */
  headers: ProbeHeader[];
  /** PEM. When set the chain is verified and the name checked against host (or address). */
  caBundle?: string;
  /** HMAC-SHA256 key for X-Healthprobe-Signature. */
  signatureKey?: Uint8Array;
  /** GRPC only: the service asked about; "" is the server's overall health. */
  grpcService?: string;
}

export interface ProbeJudgement {
  timeoutMs: number;
  /** Inclusive [lo, hi] ranges. */
  statusCodes: Array<[number, number]>;
  bodyContains?: string;
  /** A success slower than this (same clock as latencyMs) is a failure of kind "slow". */
  maxLatencyMs?: number;
}

/**
 * Why a probe failed, as a closed set fit for a metric label; the human message says the rest.
 * http_status: a status outside the configured codes; redirect: an unlisted 3xx redirect;
 * body: the body lacked the expected text; timeout: no complete response within the timeout;
 * connect: the connection could not be made, or broke (reset, closed) before a complete
 * response; tls: the handshake or the certificate failed; other: anything else (a response
 * that is not HTTP, a request that cannot be sent); grpc_status: a gRPC health answer other
 * than SERVING; grpc_error: a gRPC call that ended with a grpc-status other than OK; slow: an
 * answer that would have passed, slower than match.maxLatencyMilliseconds.
 */
export const PROBE_FAILURE_KINDS = [
  "http_status",
  "connect",
  "timeout",
  "tls",
  "body",
  "redirect",
  "other",
  "grpc_status",
  "grpc_error",
  "slow",
] as const;
export type ProbeFailureKind = (typeof PROBE_FAILURE_KINDS)[number];

/** The kinds a prober error can have: the others come from judging a response or from the clock. */
export type ProbeErrorKind = Extract<ProbeFailureKind, "connect" | "tls" | "other">;

/** What every judged probe carries, success or not. */
export interface ProbeOutcomeFields {
  statusCode?: number;
  /** Send to last byte, in ms with two decimals. */
  latencyMs: number;
  /** The failure class with the latency: "HTTP 503 in 12 ms". */
  result: string;
  /**
   * The outcome in words, stable across probes (no latency): "HTTP 503", "connect ECONNREFUSED",
   * "timeout after 60s"; on a success "HTTP 200". Metrics use failureKind, never this text.
   */
  failureClass: string;
  /** Epoch ms. */
  finishedAt: number;
}

/** A judged probe; a failure carries its kind beside the message in failureClass. */
export type ProbeOutcome = ProbeOutcomeFields & ({ success: true } | { success: false; failureKind: ProbeFailureKind });

/** At most this much of a body is read and searched. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * What the prober saw, before any owner's judgement. Times are ms offsets from the start
 * of the connection attempt, so each owner can apply its own (shorter) timeout to it.
 */
export type RawProbeResult =
  | {
      kind: "response";
      statusCode: number;
      /** Request written (after connect and TLS handshake): where latency starts. */
      sentAtMs: number;
      /** Last header byte received. */
      headersAtMs: number;
      /** Last body byte read; equals headersAtMs when the body was not read. */
      endAtMs: number;
      /** Set only when the body was read: at most MAX_BODY_BYTES of it, decoded as UTF-8. */
      body?: string;
      finishedAt: number;
    }
  | {
      kind: "error";
      /** "connect ECONNREFUSED", "TLS: certificate signed by unknown authority", "invalid HTTP response", ... */
      error: string;
      failureKind: ProbeErrorKind;
      sentAtMs?: number;
      endAtMs: number;
      finishedAt: number;
    }
  | {
      /** TCP: the connection was accepted (and closed at once); endAtMs is the connect time. */
      kind: "connected";
      endAtMs: number;
      finishedAt: number;
    }
  | {
      /** GRPC: a complete call (trailers received). */
      kind: "grpc";
      /** The request stream opened (after connect and TLS handshake): where latency starts. */
      sentAtMs: number;
      /** Trailers (or a trailers-only answer) received. */
      endAtMs: number;
      /** grpc-status: 0 is OK. */
      grpcStatus: number;
      /** HealthCheckResponse.status when grpcStatus is 0 (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING, 3 SERVICE_UNKNOWN). */
      servingStatus?: number;
      finishedAt: number;
    }
  | { kind: "timeout"; timeoutMs: number; sentAtMs?: number; finishedAt: number };
