// The raw results every prober ends a failed attempt with.
import type { ProbeErrorKind, RawProbeResult } from "../domain/probe-request.js";

/** No complete answer within the timeout; `sentAtMs` when the request (or call) had gone out. */
export function timeoutResult(timeoutMs: number, sentAtMs: number | undefined, finishedAt: number): RawProbeResult {
  const r: RawProbeResult = { kind: "timeout", timeoutMs, finishedAt };
  if (sentAtMs !== undefined) r.sentAtMs = sentAtMs;
  return r;
}

/** A failure the prober names, at `endAtMs` from the start of the attempt. */
export function errorResult(
  failureKind: ProbeErrorKind,
  error: string,
  endAtMs: number,
  sentAtMs: number | undefined,
  finishedAt: number,
): RawProbeResult {
  const r: RawProbeResult = { kind: "error", failureKind, error, endAtMs, finishedAt };
  if (sentAtMs !== undefined) r.sentAtMs = sentAtMs;
  return r;
}
