// What goes on the wire for one probe, and what a raw response looks like before judging.
// Plain data only: the prober (adapters) sends it, the scheduler (runtime) deduplicates it,
// the judgement (domain) reads the raw result.

export interface ProbeHeader {
  name: string;
  value: string;
}

export interface ProbeRequest {
  scheme: "HTTP" | "HTTPS";
  /** Pod IP, v4 or v6. The destination is always this address. */
  address: string;
  port: number;
  path: string;
  method: "GET" | "HEAD";
  /** Host header and TLS SNI; never changes the destination. */
  host?: string;
  /** Secret values already resolved by the caller; never logged. */
  headers: ProbeHeader[];
  /** PEM. When set the chain is verified and the name checked against host (or address). */
  caBundle?: string;
  /** HMAC-SHA256 key for X-Healthprobe-Signature. */
  signatureKey?: Uint8Array;
}

export interface ProbeJudgement {
  timeoutMs: number;
  /** Inclusive [lo, hi] ranges. */
  statusCodes: Array<[number, number]>;
  bodyContains?: string;
}

/**
 * Why a probe failed, as a closed set fit for a metric label; the human message says the rest.
 * http_status: a status outside the configured codes; redirect: an unlisted 3xx redirect;
 * body: the body lacked the expected text; timeout: no complete response within the timeout;
 * connect: the connection could not be made, or broke (reset, closed) before a complete
 * response; tls: the handshake or the certificate failed; other: anything else (a response
 * that is not HTTP, a request that cannot be sent).
 */
export const PROBE_FAILURE_KINDS = ["http_status", "connect", "timeout", "tls", "body", "redirect", "other"] as const;
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
  | { kind: "timeout"; timeoutMs: number; sentAtMs?: number; finishedAt: number };
