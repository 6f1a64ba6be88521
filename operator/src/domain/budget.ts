// Replacement budgets as sliding windows over ledger entries.
//
// An entry charged at t occupies a slot during [t, t + window). A new replacement at `now`
// fits when fewer than `max` entries are charged after `now - window`. Entries later than
// `now` (a clock that stepped back) are counted too: any window that contains `now` can
// only hold entries after `now - window`, so counting all of them keeps every window,
// past or future, within its limit.

export type ReplacementMethod = "Evict" | "Delete";

/** One charged replacement attempt. Times are epoch milliseconds. */
export interface LedgerEntry {
  pod: string;
  uid: string;
  time: number;
  method: ReplacementMethod;
  /** The policy that charged it (the operator-wide ledger records it; a policy's own ledger need not). */
  policy?: string;
  /**
   * The namespace of the pod (and policy) charged, for the per-namespace share of the
   * operator-wide cap. Entries written before shares existed have none: they count against
   * the operator-wide cap only.
   */
  namespace?: string;
}

export const HOUR_MS = 60 * 60 * 1000;
export const TWELVE_HOURS_MS = 12 * HOUR_MS;
export const DAY_MS = 24 * HOUR_MS;

export interface BudgetLimits {
  maxPerHour: number;
  maxPerDay: number;
  /** Names the budget in reasons. */
  policy?: string;
}

export interface BudgetResult {
  fits: boolean;
  usedHour: number;
  usedDay: number;
  /** When `!fits`: the first instant a replacement fits again. Absent when a limit is 0 (never). */
  nextSlotAt?: number;
  reason: string;
}

export interface OperatorBudgetResult {
  fits: boolean;
  used: number;
  nextSlotAt?: number;
  reason: string;
}

/** One sliding window, checked on its own. */
export interface WindowCheck {
  fits: boolean;
  used: number;
  /** When `!fits` and `max > 0`: when enough entries leave the window for one more to fit. */
  nextSlotAt?: number;
}

/**
 * RFC 3339 in UTC; milliseconds only when there are some, so reasons read like
 * `2026-11-30T10:14:00Z` and ledger times round-trip exactly.
 */
export function formatInstant(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}

/** Checks one window of `windowMs` holding at most `max` entries. `max <= 0` never fits. */
export function computeWindow(
  entries: readonly LedgerEntry[],
  now: number,
  windowMs: number,
  max: number,
): WindowCheck {
  const times = entries
    .map((e) => e.time)
    .filter((t) => t > now - windowMs)
    .sort((a, b) => a - b);
  const used = times.length;
  if (!(max > 0)) return { fits: false, used };
  if (used < max) return { fits: true, used };
  // Once the (used - max + 1) oldest entries have left, max - 1 remain and one more fits.
  const freeing = times[used - max] as number;
  return { fits: false, used, nextSlotAt: freeing + windowMs };
}

/** A next slot in whole seconds, rounded up so that it is never before the slot frees. */
export function formatSlot(ms: number): string {
  return formatInstant(Math.ceil(ms / 1000) * 1000);
}

function budgetName(policy: string | undefined): string {
  return policy === undefined || policy === "" ? "the policy" : `policy ${policy}`;
}

function blockedText(kind: string, used: number, max: number, nextSlotAt: number | undefined): string {
  if (!(max > 0)) return `${kind} is 0: replacement never fits`;
  return `${kind} used ${used}/${max}, next slot ${nextSlotAt === undefined ? "unknown" : formatSlot(nextSlotAt)}`;
}

/** The per-policy budget: `maxPerHour` in any sliding 60 minutes and `maxPerDay` in any sliding 24 hours. */
export function computeBudget(entries: readonly LedgerEntry[], now: number, limits: BudgetLimits): BudgetResult {
  const name = budgetName(limits.policy);
  const hour = computeWindow(entries, now, HOUR_MS, limits.maxPerHour);
  const day = computeWindow(entries, now, DAY_MS, limits.maxPerDay);
  if (hour.fits && day.fits) {
    return {
      fits: true,
      usedHour: hour.used,
      usedDay: day.used,
      reason: `budget of ${name} fits: hourly ${hour.used}/${limits.maxPerHour}, daily ${day.used}/${limits.maxPerDay}`,
    };
  }
  const parts: string[] = [];
  if (!hour.fits) parts.push(blockedText(`hourly budget of ${name}`, hour.used, limits.maxPerHour, hour.nextSlotAt));
  if (!day.fits) parts.push(blockedText(`daily budget of ${name}`, day.used, limits.maxPerDay, day.nextSlotAt));
  // Entries only ever leave the windows, so both fit again at the later of the two instants.
  const blocking = [hour, day].filter((w) => !w.fits);
  const never = blocking.some((w) => w.nextSlotAt === undefined);
  const result: BudgetResult = { fits: false, usedHour: hour.used, usedDay: day.used, reason: parts.join("; ") };
  if (!never) result.nextSlotAt = Math.max(...blocking.map((w) => w.nextSlotAt as number));
  return result;
}

/** The operator-wide cap: at most `max12h` replacements in any sliding 12 hours, across all policies. */
export function computeOperatorBudget(
  entries: readonly LedgerEntry[],
  now: number,
  max12h: number,
): OperatorBudgetResult {
  const w = computeWindow(entries, now, TWELVE_HOURS_MS, max12h);
  if (w.fits) return { fits: true, used: w.used, reason: `operator-wide budget fits: ${w.used}/${max12h} in 12h` };
  const reason = !(max12h > 0)
    ? "operator-wide budget is 0 in 12h: replacement never fits"
    : `operator-wide budget used ${w.used}/${max12h} in 12h, next slot ${formatSlot(w.nextSlotAt as number)}`;
  const result: OperatorBudgetResult = { fits: false, used: w.used, reason };
  if (w.nextSlotAt !== undefined) result.nextSlotAt = w.nextSlotAt;
  return result;
}

/** The per-namespace share of the operator-wide cap (--max-replacements-per-12h-per-namespace). */
export interface NamespaceShare {
  namespace: string;
  /** Replacements one namespace may make in any sliding 12 hours. */
  max12h: number;
  /** The operator-wide cap the share is part of, named in reasons. */
  operatorMax12h: number;
}

/**
 * One namespace's share of the operator-wide ledger: at most `share.max12h` of its entries
 * (those recorded with this namespace) in any sliding 12 hours, so one tenant cannot spend
 * the whole operator-wide cap and leave none for the others.
 */
export function computeNamespaceBudget(
  entries: readonly LedgerEntry[],
  now: number,
  share: NamespaceShare,
): OperatorBudgetResult {
  const own = entries.filter((e) => e.namespace === share.namespace);
  const w = computeWindow(own, now, TWELVE_HOURS_MS, share.max12h);
  const flag = `--max-replacements-per-12h-per-namespace=${share.max12h}`;
  if (w.fits)
    return {
      fits: true,
      used: w.used,
      reason: `share of namespace ${share.namespace} fits: ${w.used}/${share.max12h} in 12h`,
    };
  const reason = !(share.max12h > 0)
    ? `namespace ${share.namespace} has no share of the operator-wide replacements per 12h (${flag})`
    : `namespace ${share.namespace} used its ${share.max12h} of the operator-wide ${share.operatorMax12h} replacements per 12h (${flag}), next slot ${formatSlot(w.nextSlotAt as number)}`;
  const result: OperatorBudgetResult = { fits: false, used: w.used, reason };
  if (w.nextSlotAt !== undefined) result.nextSlotAt = w.nextSlotAt;
  return result;
}

/** The namespace part of a policy key ("namespace/name"); undefined for a key without one. */
export function namespaceOfKey(key: string): string | undefined {
  const slash = key.indexOf("/");
  return slash > 0 ? key.slice(0, slash) : undefined;
}

/**
 * Drops entries that no window can count any more: keeps those after `now - keepMs`
 * (24 hours for a policy ledger, 12 hours for the operator-wide one), oldest first.
 */
export function pruneLedger(entries: readonly LedgerEntry[], now: number, keepMs: number): LedgerEntry[] {
  return sortLedger(entries.filter((e) => e.time > now - keepMs));
}

/** Oldest first, ties by uid, so encoded ledgers are stable and compare equal. */
export function sortLedger(entries: readonly LedgerEntry[]): LedgerEntry[] {
  return [...entries].sort((a, b) => a.time - b.time || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
}
