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

export interface ProbeOutcome {
  success: boolean;
  statusCode?: number;
  /** Send to last byte, in ms with two decimals. */
  latencyMs: number;
  /** The failure class with the latency: "HTTP 503 in 12 ms". */
  result: string;
  /** Stable across probes (no latency): "HTTP 503", "connect ECONNREFUSED", "timeout after 60s". */
  failureClass: string;
  /** Epoch ms. */
  finishedAt: number;
}

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
      sentAtMs?: number;
      endAtMs: number;
      finishedAt: number;
    }
  | { kind: "timeout"; timeoutMs: number; sentAtMs?: number; finishedAt: number };
