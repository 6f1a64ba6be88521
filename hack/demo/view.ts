// The demo's live view as plain lines: a pure function of one snapshot and the clock, so it
// can be tested and captured. The terminal side (in-place redraw, keys) is in terminal.ts.
import { computeBudget } from "../../operator/src/domain/budget.js";
import { findCondition } from "../../operator/src/domain/conditions.js";
import { decodePolicyLedger } from "../../operator/src/domain/ledger.js";
import { readinessOf, type Obj } from "../../test/support/kube-objects.js";
import type { Snapshot } from "./snapshot.js";

export interface PodRow {
  /** The number key that breaks and heals this pod, for its whole life (pod-keys.ts). */
  key: number | undefined;
  uid: string;
  name: string;
  /** Created while the demo runs, within the last minute: a replacement or a scale-up. */
  isNew: boolean;
  ip: string;
  /** What the demo pod's /healthz answers. */
  answers: "200" | "503";
  state: string;
  rotation: "in" | "drained" | "out" | "-";
  failures: number | undefined;
  lastProbe: string;
  unhealthyFor: string;
  replacement: string;
  verdict: string;
}

export interface ViewOptions {
  /** Terminal columns: every line is cut to fit. */
  width: number;
  startedAt: number;
  kubectl: string;
  kubeconfig: string;
  operatorLog: string;
  /** The scripted tour's narration, when one runs. */
  tour?: { lines: readonly string[]; running: boolean };
  /** The last thing a key did. */
  notice?: string;
  /** The pods' keys by uid; without them, keys follow age order. */
  keys?: ReadonlyMap<string, number>;
}

/** How long a pod created while the demo runs is marked new. */
const NEW_FOR_MS = 60_000;

const CONDITIONS = ["Ready", "Degraded", "FailOpen", "DrainCapped", "ReplacementBlocked"] as const;

/** "42s", "1m05s", "2h03m". Negative durations read as "0s". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Epoch ms of an API timestamp: client-node hands typed kinds' times over as Dates, others as strings. */
export function toMs(t: unknown): number | undefined {
  if (t instanceof Date) return t.getTime();
  if (typeof t !== "string" || t === "") return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The pods the demo lists, oldest first: the number keys address them in this order. */
export function orderedPods(s: Snapshot): Obj[] {
  return [...s.pods].sort(
    (a, b) =>
      (toMs(a.metadata?.creationTimestamp) ?? 0) - (toMs(b.metadata?.creationTimestamp) ?? 0) ||
      String(a.metadata?.name).localeCompare(String(b.metadata?.name)),
  );
}

/** Endpoint readiness by pod name across the Service's slices. */
export function endpointReadiness(s: Snapshot): Map<string, boolean> {
  return readinessOf(s.slices);
}

/**
 * One row per pod, ordered by key. STATE and VERDICT both come from the policy's status (the
 * verdict was decided on that state), never one from the live figures and the other from a
 * status not yet written; FAILS and LAST PROBE are live. UNHEALTHY FOR and REPLACE are whole
 * seconds of one window, so they add up to `replacement.after`.
 */
export function computePodRows(
  s: Snapshot,
  o: { keys?: ReadonlyMap<string, number>; startedAt?: number } = {},
): PodRow[] {
  const status = s.policy?.status ?? {};
  const statusPods = new Map<string, Record<string, any>>(
    (status.pods ?? []).map((p: Record<string, any>) => [p.name, p]),
  );
  const live = new Map((s.targets ?? []).map((t) => [t.pod, t]));
  const ready = endpointReadiness(s);
  const replacedUids = new Set((status.replacements ?? []).map((r: { uid: string }) => r.uid));
  const replacementOn = s.policy?.spec?.replacement?.enabled !== false && s.policy?.spec?.dryRun !== true;
  const pods = orderedPods(s);
  const keys = o.keys ?? new Map(pods.slice(0, 9).map((p, i) => [String(p.metadata?.uid), i + 1]));
  const rows = pods.map((pod): PodRow => {
    const name = String(pod.metadata?.name);
    const uid = String(pod.metadata?.uid);
    const d = live.get(name);
    const p = statusPods.get(name);
    const terminating = pod.metadata?.deletionTimestamp !== undefined;
    const state = terminating ? "Terminating" : (p?.state ?? (pod.status?.podIP ? "Unknown" : "Pending"));
    const inSlice = ready.get(name);
    const rotation: PodRow["rotation"] = inSlice === undefined ? "-" : inSlice ? "in" : p?.drained ? "drained" : "out";
    const window = unhealthyWindow(s.at, toMs(p?.unhealthySince), toMs(p?.replaceAfter));
    let replacement = "-";
    if (terminating && replacedUids.has(pod.metadata?.uid)) replacement = "replaced";
    else if (replacementOn && window?.remainingS !== undefined && state === "Unhealthy")
      replacement = window.remainingS > 0 ? `in ${formatDuration(window.remainingS * 1000)}` : "due";
    const created = toMs(pod.metadata?.creationTimestamp) ?? 0;
    return {
      key: keys.get(uid),
      uid,
      name,
      isNew: o.startedAt !== undefined && created > o.startedAt && s.at - created < NEW_FOR_MS,
      ip: String(pod.status?.podIP ?? "-"),
      answers: s.broken.has(name) ? "503" : "200",
      state,
      rotation,
      failures: d?.consecutiveFailures,
      lastProbe: d?.result ?? p?.lastResult ?? "-",
      unhealthyFor: window !== undefined && state === "Unhealthy" ? formatDuration(window.elapsedS * 1000) : "-",
      replacement,
      verdict: terminating
        ? String(p?.reason ?? "") || "terminating"
        : String(p?.reason ?? "not in the policy's status yet"),
    };
  });
  const byKey = (r: PodRow) => r.key ?? Number.POSITIVE_INFINITY;
  return rows.sort((a, b) => byKey(a) - byKey(b));
}

/** Whole seconds since unhealthySince and left of the window, from one clock reading: they add up. */
function unhealthyWindow(
  at: number,
  since: number | undefined,
  replaceAfter: number | undefined,
): { elapsedS: number; remainingS?: number } | undefined {
  if (since === undefined) return undefined;
  const elapsedS = Math.max(0, Math.floor((at - since) / 1000));
  if (replaceAfter === undefined) return { elapsedS };
  return { elapsedS, remainingS: Math.round((replaceAfter - since) / 1000) - elapsedS };
}

/** The budget line: per-policy hourly and daily windows from the policy's own ledger. */
export function computeBudgetLine(s: Snapshot): string {
  const spec = s.policy?.spec?.replacement;
  if (!spec) return "-";
  if (spec.enabled === false) return "replacement disabled";
  const ledger = decodePolicyLedger(s.policy?.status?.replacements);
  if (!ledger.ok) return ledger.error;
  const b = computeBudget(ledger.entries, s.at, { maxPerHour: spec.maxPerHour, maxPerDay: spec.maxPerDay });
  const next = b.nextSlotAt !== undefined ? ` · next slot in ${formatDuration(b.nextSlotAt - s.at)}` : "";
  return `hourly ${b.usedHour}/${spec.maxPerHour} · daily ${b.usedDay}/${spec.maxPerDay}${next} · replaced in 24h: ${s.policy?.status?.replacedInLastDay ?? 0}`;
}

function describePolicy(policy: Obj | undefined): string {
  const sp = policy?.spec;
  if (!sp) return "policy not found";
  const p = sp.probe ?? {};
  const e = sp.evaluation ?? {};
  const judge = e.window
    ? `Healthy while ${e.window.successfulSamplesRequired} of the last ${e.window.sampleSize} probes succeed`
    : `Unhealthy after ${e.failureThreshold} failures, Healthy after ${e.successThreshold}`;
  const drain = sp.drain?.enabled === false ? "drain off" : `drain at most ${sp.drain?.maxUnhealthyPercent}%`;
  const replace = sp.replacement?.enabled === false ? "replacement off" : `replace after ${sp.replacement?.after}`;
  return `${p.method ?? "GET"} ${String(p.scheme ?? "HTTP").toLowerCase()}://<pod>:${p.port}${p.path} every ${p.periodSeconds}s · ${judge} · ${drain} · ${replace}${sp.dryRun ? " · dryRun" : ""}`;
}

/** When an Event last happened: its series' last observation, else its own time. */
export function eventTime(e: Obj): number {
  return (
    toMs(e.series?.lastObservedTime) ??
    toMs(e.eventTime) ??
    toMs(e.deprecatedLastTimestamp) ??
    toMs(e.metadata?.creationTimestamp) ??
    0
  );
}

/**
 * The newest Events of the namespace, newest last. The operator records a pod's Drained,
 * Restored and Replaced both on the policy and on the pod with the same note: shown once.
 */
export function latestEvents(s: Snapshot, count: number): Obj[] {
  const seen = new Set<string>();
  const unique = [...s.events]
    .sort(
      (a, b) =>
        eventTime(a) - eventTime(b) || (a.regarding?.kind === "Pod" ? 1 : 0) - (b.regarding?.kind === "Pod" ? 1 : 0),
    )
    .filter((e) => {
      const key = `${e.reason}\n${e.note}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return unique.slice(-count);
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  // The last column is free text: not padded.
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

export function renderView(s: Snapshot, o: ViewOptions): string[] {
  const status = s.policy?.status ?? {};
  const ns = s.namespace;
  const name = s.policy?.metadata?.name ?? "?";
  const lines: string[] = [];
  const operator = s.targets === undefined ? "operator: not answering" : "operator: running";
  lines.push(
    `healthprobe-operator demo · HealthProbePolicy ${ns}/${name} → Service ${ns}/${s.policy?.spec?.serviceName ?? "?"} · up ${formatDuration(s.at - o.startedAt)} · ${operator}`,
  );
  lines.push(`  ${describePolicy(s.policy)}`);
  lines.push(
    `  targets ${status.targets ?? 0} · healthy ${status.healthy ?? 0} · unhealthy ${status.unhealthy ?? 0} · unknown ${status.unknown ?? 0} · drained ${status.drained ?? 0}`,
  );
  lines.push("");
  const rows = computePodRows(s, { ...(o.keys ? { keys: o.keys } : {}), startedAt: o.startedAt });
  lines.push(...podTable(rows, o.width));
  lines.push("");
  lines.push("CONDITIONS");
  lines.push(
    ...table(
      CONDITIONS.map((type) => {
        const c = findCondition(status.conditions, type);
        return [type, c?.status ?? "-", c?.reason ?? "", c?.message ?? ""];
      }),
    ).map((l) => `  ${l}`),
  );
  lines.push(`BUDGET  ${computeBudgetLine(s)}`);
  lines.push("");
  lines.push("EVENTS");
  const events = latestEvents(s, 6);
  if (events.length === 0) lines.push("  (none yet)");
  lines.push(
    ...events.map((e) => {
      const count = e.series?.count ? ` (x${e.series.count})` : "";
      const regarding = `${String(e.regarding?.kind ?? "").toLowerCase() === "pod" ? "pod" : "hpp"}/${e.regarding?.name ?? "?"}`;
      return `  ${clock(eventTime(e))}  ${String(e.type).padEnd(7)}  ${String(e.reason).padEnd(18)}  ${regarding.padEnd(16)}  ${e.note ?? ""}${count}`;
    }),
  );
  if (o.tour) {
    lines.push("");
    lines.push(o.tour.running ? "TOUR (keys other than q wait until it ends)" : "TOUR");
    lines.push(...o.tour.lines.slice(-8).map((l) => `  ${l}`));
  }
  lines.push("");
  if (o.notice) lines.push(`> ${o.notice}`);
  const keys = rows.map((r) => r.key).filter((k) => k !== undefined);
  const range =
    keys.length === 0
      ? ""
      : keys.length === 1
        ? `${keys[0]} break/heal that pod · `
        : `${keyList(keys)} break/heal that pod · `;
  lines.push(`keys  ${range}a break all · h heal all · q quit`);
  lines.push(`try   ${o.kubectl} --kubeconfig ${o.kubeconfig} get hpp -n ${ns} -o wide`);
  lines.push(`      operator log: ${o.operatorLog}`);
  return lines.map((l) => cut(l, o.width));
}

/** "1-5", or "2-6" and "1 3-6" once a pod is gone. */
function keyList(keys: number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < keys.length;) {
    let j = i;
    while (j + 1 < keys.length && keys[j + 1] === keys[j]! + 1) j++;
    runs.push(j === i ? String(keys[i]) : `${keys[i]}-${keys[j]}`);
    i = j + 1;
  }
  return runs.join(" ");
}

/**
 * The pod table: every column when it fits the width; else a narrow layout that keeps what
 * says what the operator did (POD, ANSWERS, STATE, ROTATION, VERDICT) and cuts only the verdict.
 */
function podTable(rows: readonly PodRow[], width: number): string[] {
  const name = (r: PodRow) => (r.isNew ? `${r.name} new` : r.name);
  const key = (r: PodRow) => (r.key === undefined ? "-" : String(r.key));
  const wide = table([
    ["#", "POD", "IP", "ANSWERS", "STATE", "ROTATION", "FAILS", "LAST PROBE", "UNHEALTHY FOR", "REPLACE", "VERDICT"],
    ...rows.map((r) => [
      key(r),
      name(r),
      r.ip,
      r.answers,
      r.state,
      r.rotation,
      r.failures === undefined ? "-" : String(r.failures),
      r.lastProbe,
      r.unhealthyFor,
      r.replacement,
      r.verdict,
    ]),
  ]).map((l) => ` ${l}`);
  // The wide table fits when no row needs its verdict cut below 30 columns.
  const verdictStart = (wide[0] ?? "").indexOf("VERDICT");
  if (verdictStart + 30 <= width) return wide;
  return table([
    ["#", "POD", "ANSWERS", "STATE", "ROTATION", "VERDICT"],
    ...rows.map((r) => [key(r), name(r), r.answers, r.state, r.rotation, r.verdict]),
  ]).map((l) => ` ${l}`);
}

function cut(line: string, width: number): string {
  if (line.length <= width) return line;
  return width > 1 ? `${line.slice(0, width - 1)}…` : line.slice(0, width);
}
