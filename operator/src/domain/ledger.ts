// Replacement ledgers: what is persisted, how it is read back, and how a charge is recorded.
//
// Crash safety. The invariant is "every pod removal is preceded by a persisted entry for
// that pod's uid, in every ledger whose budget it uses, and that entry stays counted for at
// least a full window after the removal". It holds because:
//  1. The controller persists the charge (`chargeLedger`) to every policy ledger named in
//     the decision and to the operator-wide ledger BEFORE calling the Eviction/Delete API,
//     and calls the API only when all writes succeeded. A crash or an API error anywhere
//     before the call leaves at most a charge without a removal: over-counted, never under.
//  2. A ledger holds at most one entry per pod uid. Re-attempting the same uid (the pod
//     still exists after a charged attempt: crash between charge and call, or a failed
//     call) never adds a second entry: `chargeLedger` replaces it with one at the new
//     attempt time. The budget check for that attempt leaves the pod's own entry out
//     (see `withoutPod`), because the pod still existing and not terminating shows the
//     earlier attempt removed nothing. Moving the entry forward keeps it counted at least
//     as long as the real removal would need, even when the earlier call did succeed and
//     the cache had not caught up (the second call then removes nothing).
//  3. A pod uid is removed at most once, and the API calls carry a uid precondition, so a
//     StatefulSet pod recreated under the same name is never hit by a stale attempt.
//  4. An entry is dropped before its time only by `refundLedger`, and only after the API
//     answered that nothing was removed (HTTP 429: a PodDisruptionBudget refusal). The
//     Eviction API skips PodDisruptionBudgets for a pod that is already terminating, so a
//     429 (with the uid precondition) means this very pod is alive and was left alone.
//  5. A ledger that cannot be decoded is an error, never an empty ledger: the chain
//     then blocks every replacement that would need it.
//  6. A policy's ledger is its ConfigMap; while it has none, status.replacements (what an
//     earlier version kept there, or the mirror) counts in its place (policy-ledger.ts).
// Hence in any window, removals <= distinct uids charged in that window <= the budget.

import { DAY_MS, formatInstant, pruneLedger, sortLedger, type LedgerEntry, type ReplacementMethod } from "./budget.js";

export type LedgerResult = { ok: true; entries: LedgerEntry[] } | { ok: false; error: string };

/** One item of a policy's `status.replacements`. */
export interface PolicyLedgerItem {
  pod: string;
  uid: string;
  time: string;
  method: ReplacementMethod;
}

/** One item of the operator-wide ledger. */
export interface OperatorLedgerItem extends PolicyLedgerItem {
  policy: string;
  /** Absent in entries written before per-namespace shares: those count against the operator-wide cap only. */
  namespace?: string;
}

/** The ConfigMap `data` key that holds the operator-wide ledger as a JSON array. */
export const OPERATOR_LEDGER_KEY = "ledger";

// RFC 3339 date-time with optional fraction and a zone; Date.parse alone accepts too much.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function decodeItem(raw: unknown, index: number, withPolicy: boolean): LedgerEntry | string {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return `entry ${index} is not an object`;
  const item = raw as Record<string, unknown>;
  for (const field of ["pod", "uid"] as const) {
    if (typeof item[field] !== "string" || item[field] === "")
      return `entry ${index}: ${field} must be a non-empty string`;
  }
  if (typeof item.time !== "string" || !RFC3339.test(item.time))
    return `entry ${index}: time must be an RFC 3339 date-time`;
  const time = Date.parse(item.time);
  if (Number.isNaN(time)) return `entry ${index}: time ${item.time} is not a valid date-time`;
  if (item.method !== "Evict" && item.method !== "Delete") return `entry ${index}: method must be Evict or Delete`;
  const entry: LedgerEntry = { pod: item.pod as string, uid: item.uid as string, time, method: item.method };
  if (withPolicy) {
    if (typeof item.policy !== "string") return `entry ${index}: policy must be a string`;
    entry.policy = item.policy;
    if (item.namespace !== undefined) {
      if (typeof item.namespace !== "string" || item.namespace === "")
        return `entry ${index}: namespace must be a non-empty string when set`;
      entry.namespace = item.namespace;
    }
  }
  return entry;
}

function decodeItems(raw: unknown, withPolicy: boolean, what: string): LedgerResult {
  if (!Array.isArray(raw)) return { ok: false, error: `${what} is not a list` };
  const entries: LedgerEntry[] = [];
  for (const [index, item] of raw.entries()) {
    const decoded = decodeItem(item, index, withPolicy);
    if (typeof decoded === "string") return { ok: false, error: `${what}: ${decoded}` };
    entries.push(decoded);
  }
  return { ok: true, entries: sortLedger(entries) };
}

/**
 * Reads a policy's `status.replacements`. Absent (a policy that never replaced anything)
 * is an empty ledger; anything malformed is an error.
 */
export function decodePolicyLedger(raw: unknown): LedgerResult {
  if (raw === undefined || raw === null) return { ok: true, entries: [] };
  return decodeItems(raw, false, "status.replacements");
}

/** Writes a policy ledger as `status.replacements`, oldest first. */
export function encodePolicyLedger(entries: readonly LedgerEntry[]): PolicyLedgerItem[] {
  return sortLedger(entries).map((e) => ({ pod: e.pod, uid: e.uid, time: formatInstant(e.time), method: e.method }));
}

/**
 * Reads the operator-wide ledger from a ConfigMap's `data`. A ConfigMap without data or
 * without the key has recorded nothing yet; a key that does not hold a valid JSON list
 * of entries is an error.
 */
export function decodeOperatorLedger(data: Readonly<Record<string, string>> | undefined | null): LedgerResult {
  return decodeLedgerData(data, "operator-wide ledger");
}

/** Reads a ledger ConfigMap's `data` (the operator-wide one, or a policy's): `what` names it in errors. */
export function decodeLedgerData(
  data: Readonly<Record<string, string>> | undefined | null,
  what: string,
): LedgerResult {
  const text = data?.[OPERATOR_LEDGER_KEY];
  if (text === undefined) return { ok: true, entries: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    return { ok: false, error: `${what} is not JSON: ${(cause as Error).message}` };
  }
  return decodeItems(raw, true, what);
}

/** Writes the operator-wide ledger as ConfigMap `data`, oldest first. */
export function encodeOperatorLedger(entries: readonly LedgerEntry[]): Record<string, string> {
  const items: OperatorLedgerItem[] = sortLedger(entries).map((e) => ({
    policy: e.policy ?? "",
    ...(e.namespace !== undefined ? { namespace: e.namespace } : {}),
    pod: e.pod,
    uid: e.uid,
    time: formatInstant(e.time),
    method: e.method,
  }));
  return { [OPERATOR_LEDGER_KEY]: JSON.stringify(items) };
}

/**
 * Records an attempt. One entry per pod uid: an earlier entry for the same uid is replaced
 * by this one (a re-attempt moves the charge forward instead of charging twice).
 */
export function chargeLedger(entries: readonly LedgerEntry[], entry: LedgerEntry): LedgerEntry[] {
  return sortLedger([...withoutPod(entries, entry.uid), { ...entry }]);
}

/** Whether an attempt on this pod uid was charged at or after `since`. */
export function isCharged(entries: readonly LedgerEntry[], podUid: string, since: number): boolean {
  return entries.some((e) => e.uid === podUid && e.time >= since);
}

/**
 * Takes back the charge made at `time` for this pod uid, after the API refused the
 * removal outright (PodDisruptionBudget, HTTP 429): that attempt uses no budget. A later
 * charge for the same uid is left alone.
 */
export function refundLedger(entries: readonly LedgerEntry[], podUid: string, time: number): LedgerEntry[] {
  return entries.filter((e) => !(e.uid === podUid && e.time === time));
}

/** The ledger without the entries of one pod uid: what its own re-attempt is checked against. */
export function withoutPod(entries: readonly LedgerEntry[], podUid: string): LedgerEntry[] {
  return entries.filter((e) => e.uid !== podUid);
}

/**
 * What `status.replacements` holds after a reconcile: the policy's ledger as the reconcile read
 * or wrote its ConfigMap (when it had one), else what status held, pruned to the last 24 hours.
 * A status ledger that cannot be read is kept exactly as it is, never rewritten as an empty list:
 * while there is no ConfigMap it is the baseline (policy-ledger.ts), and an empty one would reset
 * the budgets; `unreadable` then says why, so nothing is replaced until someone repairs it.
 */
export function planStatusLedger(
  persisted: unknown,
  now: number,
  current?: readonly LedgerEntry[],
): { replacements: unknown[]; unreadable?: string } {
  if (current) return { replacements: encodePolicyLedger(pruneLedger(current, now, DAY_MS)) };
  const decoded = decodePolicyLedger(persisted);
  if (decoded.ok) return { replacements: encodePolicyLedger(pruneLedger(decoded.entries, now, DAY_MS)) };
  return { replacements: Array.isArray(persisted) ? [...persisted] : [], unreadable: decoded.error };
}
