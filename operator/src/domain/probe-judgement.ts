import { grpcStatusName, SERVING, servingStatusText } from "./grpc-status.js";
import type {
  ProbeFailureKind,
  ProbeJudgement,
  ProbeOutcome,
  ProbeOutcomeFields,
  RawProbeResult,
} from "./probe-request.js";

/** The 2xx default of spec.probe.match.statusCodes. */
export const DEFAULT_STATUS_CODES: Array<[number, number]> = [[200, 299]];

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Judges one raw result for one owner. Several owners may share a raw result that was fetched
 * with the longest of their timeouts and with the body if any of them needed it, so the owner's
 * own timeout is re-applied here (to the last byte) and the body is only consulted when this
 * owner asks for it. An answer that passes is then held to the owner's maxLatencyMs.
 */
export function computeProbeOutcome(raw: RawProbeResult, judgement: ProbeJudgement): ProbeOutcome {
  const timedOut = () =>
    failed(
      "timeout",
      `timeout after ${formatDuration(judgement.timeoutMs)}`,
      undefined,
      judgement.timeoutMs,
      raw.finishedAt,
      false,
    );
  if (raw.kind === "timeout") return timedOut();
  if (raw.kind === "error") {
    if (raw.endAtMs > judgement.timeoutMs) return timedOut();
    const latency = raw.sentAtMs === undefined ? raw.endAtMs : raw.endAtMs - raw.sentAtMs;
    return failed(raw.failureKind, raw.error, undefined, latency, raw.finishedAt, true);
  }
  // Complete means the whole body or its first 64 KiB, whether or not this owner judges it:
  // the timeout and the latency run to the last byte.
  if (raw.endAtMs > judgement.timeoutMs) return timedOut();
  const answer = judgeAnswer(raw, judgement);
  if (!answer.ok) return failed(answer.kind, answer.reason, answer.statusCode, answer.latency, raw.finishedAt, true);
  const max = judgement.maxLatencyMs;
  // Whole milliseconds, as the result shows them: "slow: 500 ms > 500 ms" would read wrong.
  if (max !== undefined && Math.round(answer.latency) > max) {
    const o = failed("slow", `slow: over ${max} ms`, answer.statusCode, answer.latency, raw.finishedAt, false);
    return { ...o, result: `slow: ${Math.round(o.latencyMs)} ms > ${max} ms` };
  }
  return { success: true, ...fields(answer.statusCode, answer.latency, answer.reason, raw.finishedAt, true) };
}

type Answer = { latency: number; reason: string; statusCode?: number } & (
  { ok: true } | { ok: false; kind: ProbeFailureKind }
);

/** What a complete answer says, before the latency threshold: an HTTP response, a TCP connect, a gRPC call. */
function judgeAnswer(raw: Exclude<RawProbeResult, { kind: "timeout" | "error" }>, judgement: ProbeJudgement): Answer {
  if (raw.kind === "connected") return { ok: true, latency: raw.endAtMs, reason: "TCP connected" };
  const latency = raw.endAtMs - raw.sentAtMs;
  if (raw.kind === "grpc") {
    if (raw.grpcStatus !== 0)
      return { ok: false, kind: "grpc_error", latency, reason: `gRPC ${grpcStatusName(raw.grpcStatus)}` };
    const reason = servingStatusText(raw.servingStatus);
    return raw.servingStatus === SERVING
      ? { ok: true, latency, reason }
      : { ok: false, kind: "grpc_status", latency, reason };
  }
  const statusCode = raw.statusCode;
  const verdict = judgeStatus(statusCode, judgement.statusCodes);
  if (!verdict.ok) return { ok: false, kind: verdict.kind, latency, reason: verdict.reason, statusCode };
  const needsBody = judgement.bodyContains !== undefined && judgement.bodyContains !== "";
  if (needsBody && !(raw.body ?? "").includes(judgement.bodyContains as string)) {
    return {
      ok: false,
      kind: "body",
      latency,
      reason: `body did not contain ${JSON.stringify(judgement.bodyContains)}`,
      statusCode,
    };
  }
  return { ok: true, latency, reason: `HTTP ${statusCode}`, statusCode };
}

/** Whether a status is in the configured codes; an unlisted redirect is named as such. */
export function judgeStatus(
  statusCode: number,
  statusCodes: Array<[number, number]>,
): { ok: true } | { ok: false; kind: "redirect" | "http_status"; reason: string } {
  const ranges = statusCodes.length > 0 ? statusCodes : DEFAULT_STATUS_CODES;
  for (const [lo, hi] of ranges) if (statusCode >= lo && statusCode <= hi) return { ok: true };
  if (REDIRECTS.has(statusCode)) return { ok: false, kind: "redirect", reason: `redirect ${statusCode} not followed` };
  return { ok: false, kind: "http_status", reason: `HTTP ${statusCode}` };
}

/** Whole seconds as "60s" (how the spec states timeouts), anything finer as "300ms". */
export function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function failed(
  failureKind: ProbeFailureKind,
  failureClass: string,
  statusCode: number | undefined,
  latencyMs: number,
  finishedAt: number,
  withLatency: boolean,
): ProbeOutcome {
  return { success: false, failureKind, ...fields(statusCode, latencyMs, failureClass, finishedAt, withLatency) };
}

function fields(
  statusCode: number | undefined,
  latencyMs: number,
  failureClass: string,
  finishedAt: number,
  withLatency: boolean,
): ProbeOutcomeFields {
  // Hundredths of a millisecond are kept for metrics (loopback probes take well under 1 ms);
  // the human-readable result rounds to whole milliseconds.
  const ms = Math.max(0, Math.round(latencyMs * 100) / 100);
  const result = withLatency ? `${failureClass} in ${Math.round(ms)} ms` : failureClass;
  const o: ProbeOutcomeFields = { latencyMs: ms, result, failureClass, finishedAt };
  if (statusCode !== undefined) o.statusCode = statusCode;
  return o;
}
