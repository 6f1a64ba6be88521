import { formatDuration } from "../api/duration.js";
import { formatInstant } from "./budget.js";
import type { EpochMs } from "./types.js";

/** A change of a pod's health state into Healthy or Unhealthy, as the health store saw it. */
export interface FlapTransition {
  at: EpochMs;
  to: "Healthy" | "Unhealthy";
}

/** spec.evaluation.flapQuarantine, in milliseconds. */
export interface FlapQuarantineSettings {
  flaps: number;
  windowMs: EpochMs;
  maxBackoffMs: EpochMs;
}

/** A pod held out of rotation for flapping: until when, and why in words. */
export interface QuarantineVerdict {
  until: EpochMs;
  /** Flaps inside the window when the quarantine that ends last began (0 when restored from status). */
  flaps: number;
  /** `quarantined: 4 flaps in 10m, back at 2026-01-01T00:12:00Z`. */
  reason: string;
}

/** The first quarantine lasts this long (or maxBackoff if shorter), doubling with each further flap. */
export const BASE_BACKOFF_MS = 60_000;

/**
 * Transitions kept per pod: the largest `flaps` (100) needs 2 per flap plus the Unhealthy spell
 * before the first; older ones, and ones older than the longest window (24 h), are dropped.
 */
export const MAX_FLAP_TRANSITIONS = 2 * 100 + 2;
export const MAX_FLAP_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The history with `t` appended, bounded in count and in age (relative to `t`). */
export function appendTransition(history: readonly FlapTransition[], t: FlapTransition): FlapTransition[] {
  const cutoff = t.at - MAX_FLAP_WINDOW_MS;
  const kept = history.filter((h) => h.at > cutoff);
  kept.push(t);
  return kept.length > MAX_FLAP_TRANSITIONS ? kept.slice(kept.length - MAX_FLAP_TRANSITIONS) : kept;
}

/**
 * When the pod flapped. A flap is a relapse: a transition to Unhealthy whose previous transition
 * was to Healthy, itself preceded by one to Unhealthy (Unhealthy → Healthy → Unhealthy). A pod
 * that was Healthy from the start and turns Unhealthy once has not flapped; each later relapse
 * after a recovery is one flap, dated at the relapse.
 */
export function flapTimes(history: readonly FlapTransition[]): EpochMs[] {
  const out: EpochMs[] = [];
  for (let i = 2; i < history.length; i++) {
    if (history[i]!.to === "Unhealthy" && history[i - 1]!.to === "Healthy" && history[i - 2]!.to === "Unhealthy")
      out.push(history[i]!.at);
  }
  return out;
}

/** The back-off of the k-th quarantining flap (k = 0 for the flap that reaches `flaps`). */
export function backoffMs(k: number, maxBackoffMs: EpochMs): EpochMs {
  const base = Math.min(BASE_BACKOFF_MS, maxBackoffMs);
  // 2^k overflows nothing that matters: the cap is at most 24 h, reached by k = 11 from 1m.
  return Math.min(base * 2 ** Math.min(k, 40), maxBackoffMs);
}

/**
 * Whether a pod is quarantined at `now`, from its transition history (and a quarantine restored
 * from status after a restart, `restoredUntil`).
 *
 * Each flap at time f with n flaps inside (f − window, f] (itself included) and n ≥ `flaps`
 * quarantines the pod until f + min(base × 2^(n − flaps), maxBackoff) (rounded up to the second),
 * base = min(1m, maxBackoff):
 * the back-off doubles with each further flap inside the window. The pod is quarantined while
 * now is before the latest such end. The verdict does not depend on the window sliding past
 * the flaps later: a quarantine, once begun, runs its back-off.
 */
export function judgeQuarantine(
  history: readonly FlapTransition[],
  settings: FlapQuarantineSettings,
  now: EpochMs,
  restoredUntil?: EpochMs,
): QuarantineVerdict | undefined {
  const flaps = flapTimes(history).filter((f) => f <= now);
  let best: { until: EpochMs; flaps: number } | undefined;
  let first = 0;
  for (let i = 0; i < flaps.length; i++) {
    const f = flaps[i]!;
    while (flaps[first]! <= f - settings.windowMs) first++;
    const n = i - first + 1;
    if (n < settings.flaps) continue;
    // Whole seconds, rounded up: status keeps seconds, so a restored quarantine ends at the same instant.
    const until = Math.ceil((f + backoffMs(n - settings.flaps, settings.maxBackoffMs)) / 1000) * 1000;
    if (!best || until >= best.until) best = { until, flaps: n };
  }
  const window = formatDuration(settings.windowMs);
  if (best && best.until > now && (restoredUntil === undefined || best.until >= restoredUntil)) {
    return {
      until: best.until,
      flaps: best.flaps,
      reason: `quarantined: ${best.flaps} flaps in ${window}, back at ${formatInstant(best.until)}`,
    };
  }
  if (restoredUntil !== undefined && restoredUntil > now) {
    return {
      until: restoredUntil,
      flaps: 0,
      reason: `quarantined: flapping (restored from status), back at ${formatInstant(restoredUntil)}`,
    };
  }
  return undefined;
}
