// Diagnostics kept before a replacement: what the operator stores about a pod just before it
// evicts it (its last log lines, Events, conditions and probe results), as one ConfigMap in the
// policy's namespace. Pure: the name, the labels and the data are computed here from what the
// capture read; the controller only creates it.
import { formatInstant } from "./budget.js";
import type { EpochMs } from "./types.js";

/** Log lines kept per container (and per previous container). */
export const LOG_TAIL_LINES = 200;
/** All log text of one capture together. */
export const LOG_BUDGET_BYTES = 64 * 1024;
/** Newest Events kept, each note cut to EVENT_NOTE_MAX characters. */
export const MAX_EVENTS = 50;
const EVENT_NOTE_MAX = 1024;

export const LABEL_POLICY = "healthprobe.io/policy";
export const LABEL_POD = "healthprobe.io/pod";
export const ANNOTATION_CAPTURED_AT = "healthprobe.io/captured-at";
export const ANNOTATION_POD_UID = "healthprobe.io/pod-uid";
export const ANNOTATION_POD_NAME = "healthprobe.io/pod-name";

/** FNV-1a over the UTF-16 code units, 8 hex digits: enough to tell names apart, pure and fast. */
export function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** Cut to at most n characters, never ending on '-' or '.' (so the result stays DNS-valid when joined). */
export function cut(name: string, n: number): string {
  return name.slice(0, n).replace(/[-.]+$/, "");
}

/**
 * `<policy>-diag-<pod>-<hash>`: deterministic per (policy, pod uid), so a retried replacement of
 * the same pod finds its capture already there. The policy part is cut to 100 characters and the
 * pod part to 130, so the name stays within 253 and a valid DNS subdomain (both inputs are).
 */
export function diagnosticsConfigMapName(policy: string, pod: string, podUid: string): string {
  return `${cut(policy, 100)}-diag-${cut(pod, 130)}-${shortHash(`${policy}\n${podUid}`)}`;
}

/** A label value for a name: itself when it fits (63 characters), else cut with a hash of the whole. */
export function labelValueOf(name: string): string {
  if (name.length <= 63 && /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(name)) return name;
  return `${cut(name, 54)}-${shortHash(name)}`;
}

export interface CapturedLog {
  container: string;
  previous: boolean;
  text?: string;
  /** Why the log could not be read (HTTP status and message, or a timeout). */
  error?: string;
}

export interface CapturedEvent {
  time?: EpochMs | undefined;
  type?: string | undefined;
  reason?: string | undefined;
  note?: string | undefined;
  count?: number | undefined;
}

export interface DiagnosticsCapture {
  policy: { name: string; uid: string; apiVersion: string; kind: string };
  pod: { name: string; uid: string };
  capturedAt: EpochMs;
  /** Why the pod is replaced, as the replacement decided it. */
  verdict: string;
  logs: CapturedLog[];
  events?: CapturedEvent[] | undefined;
  eventsError?: string | undefined;
  /** The pod's conditions and container statuses as the API server had them. */
  podStatus?: { conditions?: unknown[]; containerStatuses?: unknown[] } | undefined;
  podError?: string | undefined;
  /** What the operator's health store has on the pod for this policy. */
  probe?: Record<string, unknown> | undefined;
}

export interface DiagnosticsConfigMap {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller: boolean }>;
  data: Record<string, string>;
  /** What could not be captured, one clause each; empty when everything was. */
  problems: string[];
}

/** The ConfigMap for a capture: data keys `summary`, `logs.<container>[.previous]`, `events`, `conditions`, `probe`. */
export function buildDiagnosticsConfigMap(c: DiagnosticsCapture): DiagnosticsConfigMap {
  const problems: string[] = [];
  const data: Record<string, string> = {};
  const logs = c.logs.filter((l) => l.text !== undefined).map((l) => ({ key: logKey(l), text: l.text! }));
  const fitted = fitLogs(logs, LOG_BUDGET_BYTES, LOG_TAIL_LINES);
  for (const l of fitted.logs) data[l.key] = l.text;
  for (const l of c.logs) if (l.error !== undefined) problems.push(`${logKey(l)}: ${l.error}`);
  if (c.events) data.events = formatEvents(c.events);
  if (c.eventsError !== undefined) problems.push(`events: ${c.eventsError}`);
  if (c.podStatus) data.conditions = JSON.stringify(c.podStatus, null, 2);
  if (c.podError !== undefined) problems.push(`conditions: ${c.podError}`);
  if (c.probe) data.probe = JSON.stringify(c.probe, null, 2);
  data.summary = summaryOf(c, fitted.notes, problems);
  return {
    name: diagnosticsConfigMapName(c.policy.name, c.pod.name, c.pod.uid),
    labels: {
      [LABEL_POLICY]: labelValueOf(c.policy.name),
      [LABEL_POD]: labelValueOf(c.pod.name),
      "app.kubernetes.io/managed-by": "healthprobe-operator",
    },
    annotations: {
      [ANNOTATION_CAPTURED_AT]: new Date(c.capturedAt).toISOString(),
      [ANNOTATION_POD_UID]: c.pod.uid,
      [ANNOTATION_POD_NAME]: c.pod.name,
    },
    ownerReferences: [
      {
        apiVersion: c.policy.apiVersion,
        kind: c.policy.kind,
        name: c.policy.name,
        uid: c.policy.uid,
        controller: true,
      },
    ],
    data,
    problems,
  };
}

function logKey(l: Pick<CapturedLog, "container" | "previous">): string {
  return `logs.${l.container}${l.previous ? ".previous" : ""}`;
}

function summaryOf(c: DiagnosticsCapture, truncation: string[], problems: string[]): string {
  const lines = [
    `pod ${c.pod.name} (uid ${c.pod.uid}), captured ${formatInstant(c.capturedAt)} by HealthProbePolicy ${c.policy.name} just before replacing it`,
    `verdict: ${c.verdict}`,
    `logs: the last ${LOG_TAIL_LINES} lines per container (and of the previous container when it restarted), ${LOG_BUDGET_BYTES / 1024} KiB in all`,
  ];
  for (const t of truncation) lines.push(`truncated: ${t}`);
  for (const p of problems) lines.push(`not captured: ${p}`);
  return lines.join("\n") + "\n";
}

function formatEvents(events: readonly CapturedEvent[]): string {
  const sorted = [...events].sort((a, b) => (a.time ?? 0) - (b.time ?? 0)).slice(-MAX_EVENTS);
  const lines = sorted.map((e) => {
    const when = e.time !== undefined ? formatInstant(e.time) : "-";
    const count = e.count !== undefined && e.count > 1 ? ` (x${e.count})` : "";
    return `${when} ${e.type ?? "-"} ${e.reason ?? "-"}: ${(e.note ?? "").slice(0, EVENT_NOTE_MAX)}${count}`;
  });
  return lines.length > 0 ? lines.join("\n") + "\n" : "";
}

export interface FittedLogs {
  logs: Array<{ key: string; text: string }>;
  /** One note per log that was cut: which, and how much was kept. */
  notes: string[];
}

/**
 * Keeps the last `maxLines` lines of each log, then fits them all into `budget` bytes fairly:
 * each log gets an equal share, and a share a short log does not use goes to the longer ones
 * (water-filling, smallest first). A cut log keeps its newest whole lines.
 */
export function fitLogs(
  logs: ReadonlyArray<{ key: string; text: string }>,
  budget: number,
  maxLines: number,
): FittedLogs {
  const tailed = logs.map((l) => ({ key: l.key, text: tailLines(l.text, maxLines) }));
  const sizes = tailed.map((l) => Buffer.byteLength(l.text));
  const order = tailed
    .map((_, i) => i)
    .sort((a, b) => sizes[a]! - sizes[b]! || (tailed[a]!.key < tailed[b]!.key ? -1 : 1));
  const allowance = new Array<number>(tailed.length).fill(0);
  let remaining = budget;
  order.forEach((i, n) => {
    const share = Math.floor(remaining / (order.length - n));
    allowance[i] = Math.min(sizes[i]!, share);
    remaining -= allowance[i]!;
  });
  const notes: string[] = [];
  const out = tailed.map((l, i) => {
    if (sizes[i]! <= allowance[i]!) return l;
    const text = lastBytes(l.text, allowance[i]!);
    notes.push(
      `${l.key}: kept the last ${countLines(text)} of ${countLines(l.text)} lines (${Buffer.byteLength(text)} of ${sizes[i]} bytes; ${budget / 1024} KiB shared by ${tailed.length} logs)`,
    );
    return { key: l.key, text };
  });
  return { logs: out, notes };
}

function tailLines(text: string, max: number): string {
  const lines = text.split("\n");
  const trailing = lines[lines.length - 1] === "" ? 1 : 0;
  if (lines.length - trailing <= max) return text;
  return lines.slice(lines.length - trailing - max).join("\n");
}

function countLines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** The newest whole lines within `n` bytes; a single last line longer than that keeps its tail (never half a UTF-8 character). */
function lastBytes(text: string, n: number): string {
  const buf = Buffer.from(text);
  if (buf.length <= n) return text;
  if (n <= 0) return "";
  let start = buf.length - n;
  const newline = buf.indexOf(0x0a, start - 1);
  if (newline !== -1 && newline >= start - 1 && newline < buf.length - 1) start = newline + 1;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString();
}
