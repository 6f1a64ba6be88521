import { compareStrings, DRY_RUN_KEPT } from "./drain.js";
import { findCondition } from "./conditions.js";
import { FAIL_OPEN_NOT_PROBED, type PolicyStatus, type StatusPod } from "./status.js";

export type EventReason =
  | "Drained"
  | "Restored"
  | "DrainCapped"
  | "FailOpen"
  | "FailClosed"
  | "Quarantined"
  | "InvalidSpec"
  | "SecretNotPermitted"
  | "SecretForbidden"
  | "ReplacementBlocked"
  | "GateMissing";

export interface PlannedEvent {
  type: "Normal" | "Warning";
  reason: EventReason;
  note: string;
  regarding: "policy" | { podName: string; podUid: string };
}

/** events.k8s.io/v1 rejects a note over 1 kB. */
export const MAX_NOTE_LENGTH = 1024;

/** What planEvents needs from a status: the pods and the conditions. */
export type EventView = Pick<PolicyStatus, "pods" | "conditions">;

/**
 * Events from the difference between the previous and the next status (level-based:
 * the same status twice gives nothing; after a restart the persisted status is the
 * previous one, so nothing is announced twice).
 *
 * - a pod newly drained: Drained (Normal) on the policy and on the pod;
 * - a drained pod back in rotation (still a target): Restored (Normal), policy and pod;
 *   a pod that left the targets gets nothing: it is gone, not restored;
 * - a pod newly quarantined for flapping (its quarantinedUntil appears or moves on): Quarantined
 *   (Warning), policy and pod, in place of Drained; its return is Restored as for any drained pod;
 * - DrainCapped / FailOpen / FailClosed / GateMissing conditions turning True: a Warning on the policy (not for
 *   FailOpen or FailClosed while no target has been probed yet);
 * - Ready turning to InvalidSpec, or its message changing while invalid: InvalidSpec; the same
 *   for SecretNotPermitted and SecretForbidden (Warnings too);
 * - ReplacementBlocked turning True or changing reason: ReplacementBlocked (Warning).
 *
 * Notes are one clause each: what happened to which pod, then why (verdictClause); the
 * ReplacementBlocked note is the condition's message (its reason is the Event's reason too),
 * with the next slot also given relative to `now` when it is passed.
 *
 * `previous` undefined (no status yet) is treated as an empty one.
 * Policy events come first, then pod events by pod name.
 */
export function planEvents(previous: EventView | undefined, next: EventView, now?: number): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  const prevConditions = previous?.conditions ?? [];
  const policy = (type: PlannedEvent["type"], reason: EventReason, note: string) =>
    events.push({ type, reason, note: clip(note), regarding: "policy" });

  const ready = findCondition(next.conditions, "Ready");
  const wasReady = findCondition(prevConditions, "Ready");
  if (ready?.reason === "InvalidSpec" && (wasReady?.reason !== "InvalidSpec" || wasReady.message !== ready.message)) {
    policy("Warning", "InvalidSpec", ready.message);
  }
  // A refused Secret is the one problem its author may not see coming (the spec is valid).
  for (const reason of ["SecretNotPermitted", "SecretForbidden"] as const) {
    if (ready?.reason === reason && (wasReady?.reason !== reason || wasReady.message !== ready.message))
      policy("Warning", reason, ready.message);
  }
  // Fail open before any probe (a new policy, pods just started) is no outage: not announced,
  // but the first real one after it is.
  const alarming = (c: ReturnType<typeof findCondition>) => c?.status === "True" && c.reason !== FAIL_OPEN_NOT_PROBED;
  for (const type of ["FailOpen", "FailClosed", "DrainCapped", "GateMissing"] as const) {
    const now = findCondition(next.conditions, type);
    if (alarming(now) && !alarming(findCondition(prevConditions, type))) policy("Warning", type, now!.message);
  }
  const blocked = findCondition(next.conditions, "ReplacementBlocked");
  const wasBlocked = findCondition(prevConditions, "ReplacementBlocked");
  if (blocked?.status === "True" && (wasBlocked?.status !== "True" || wasBlocked.reason !== blocked.reason)) {
    policy(
      "Warning",
      "ReplacementBlocked",
      now === undefined ? blocked.message : withRelativeSlots(blocked.message, now),
    );
  }

  const before = new Map((previous?.pods ?? []).map((p) => [p.uid, p]));
  const podEvents: PlannedEvent[] = [];
  for (const pod of [...next.pods].sort((a, b) => compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid))) {
    const was = before.get(pod.uid)?.drained ?? false;
    const quarantined =
      pod.quarantinedUntil !== undefined && pod.quarantinedUntil !== before.get(pod.uid)?.quarantinedUntil;
    if (quarantined) podEvents.push(...both("Quarantined", pod, quarantinedNote(pod), "Warning"));
    if (pod.drained && !was && !(quarantined && pod.reason.startsWith(QUARANTINED))) {
      podEvents.push(...both("Drained", pod, `pod ${pod.name} drained from the Service: ${verdictClause(pod.reason)}`));
    }
    if (!pod.drained && was)
      podEvents.push(...both("Restored", pod, `pod ${pod.name} back in rotation: ${verdictClause(pod.reason)}`));
    // dryRun reports through Events what it would have done, under the same reasons.
    const wouldNow = wouldDrain(pod);
    const wouldBefore = before.has(pod.uid) && wouldDrain(before.get(pod.uid)!);
    if (wouldNow && !wouldBefore)
      podEvents.push(
        ...both(
          "Drained",
          pod,
          `dryRun: pod ${pod.name} would be drained from the Service: ${verdictClause(pod.reason)}`,
        ),
      );
    if (!wouldNow && wouldBefore)
      podEvents.push(
        ...both("Restored", pod, `dryRun: pod ${pod.name} would be back in rotation: ${verdictClause(pod.reason)}`),
      );
  }
  return [...events, ...podEvents];
}

/**
 * The why of a verdict without its what: the note already says "drained from the Service",
 * so `drained: longest unhealthy, …` becomes `longest unhealthy, …`, and dryRun's
 * `kept: dryRun (would be drained: …)` becomes `…`.
 */
export function verdictClause(reason: string): string {
  const dryRun =
    reason.startsWith(DRY_RUN_KEPT) && reason.endsWith(")") ? reason.slice(DRY_RUN_KEPT.length, -1) : reason;
  const prefix = /^(drained|kept|admitted|not admitted): /.exec(dryRun);
  return prefix ? dryRun.slice(prefix[0].length) : dryRun;
}

/** The note of a Replaced Event. */
export function replacedNote(podName: string, method: "Evict" | "Delete", after: string, diagnostics?: string): string {
  const kept = diagnostics !== undefined ? `; diagnostics kept in ConfigMap ${diagnostics}` : "";
  return `pod ${podName} ${method === "Delete" ? "deleted" : "evicted through the Eviction API"} after being Unhealthy for ${after}${kept}`;
}

/** The note of a DiagnosticsFailed Event: what could not be captured, and where the rest is; undefined when all was. */
export function diagnosticsProblemNote(
  podName: string,
  d: { configMap?: string | undefined; problems: readonly string[] },
): string | undefined {
  if (d.configMap !== undefined && d.problems.length === 0) return undefined;
  const what = d.problems.join("; ");
  if (d.configMap === undefined) return `diagnostics of pod ${podName} not kept (the replacement went on): ${what}`;
  return `diagnostics of pod ${podName} incomplete (the replacement went on; the rest is in ConfigMap ${d.configMap}): ${what}`;
}

const INSTANT = /next slot (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)/g;

/**
 * An Event is read later than it is written, so its note says when the next slot frees both
 * ways: `next slot in 59m48s (2026-12-01T09:51:34Z)`. A condition keeps only the instant: a
 * relative time in a stored status would be wrong a minute later.
 */
export function withRelativeSlots(text: string, now: number): string {
  return text.replace(INSTANT, (whole, instant: string) => {
    const at = Date.parse(instant);
    return Number.isNaN(at) || at < now ? whole : `next slot in ${formatWait(at - now)} (${instant})`;
  });
}

/** `45s`, `59m48s`, `2h05m`, `3d04h`. */
export function formatWait(ms: number): string {
  const s = Math.ceil(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad(Math.floor((s % 86_400) / 3600))}h`;
}

function wouldDrain(pod: StatusPod): boolean {
  return pod.reason.startsWith(`${DRY_RUN_KEPT}drained`);
}

function both(
  reason: "Drained" | "Restored" | "Quarantined",
  pod: StatusPod,
  note: string,
  type: PlannedEvent["type"] = "Normal",
): PlannedEvent[] {
  return [
    { type, reason, note: clip(note), regarding: "policy" },
    { type, reason, note: clip(note), regarding: { podName: pod.name, podUid: pod.uid } },
  ];
}

const QUARANTINED = "quarantined: ";

/** `pod web-a quarantined: 3 flaps in 10m, back at T (1 of 2 allowed …)`, from the verdict wherever it says so. */
function quarantinedNote(pod: StatusPod): string {
  const dryRun = pod.reason.startsWith(DRY_RUN_KEPT);
  const at = pod.reason.indexOf(QUARANTINED);
  const clause =
    at < 0
      ? `quarantined until ${pod.quarantinedUntil}`
      : pod.reason.slice(at, dryRun && pod.reason.endsWith(")") ? -1 : undefined);
  return dryRun ? `dryRun: pod ${pod.name} would be ${clause}` : `pod ${pod.name} ${clause}`;
}

function clip(note: string): string {
  return note.length <= MAX_NOTE_LENGTH ? note : `${note.slice(0, MAX_NOTE_LENGTH - 3)}...`;
}
