import type { Condition, EpochMs } from "./types.js";
import { toRfc3339 } from "./status-time.js";

export type ConditionInput = Omit<Condition, "lastTransitionTime" | "observedGeneration">;

/**
 * Mirrors apimachinery's meta.SetStatusCondition: reason, message and observedGeneration
 * always take the new values; lastTransitionTime moves to `now` only when the status
 * changes (or the condition is new), otherwise it is copied from the previous one.
 * Returns a new list; conditions of other types are kept.
 */
export function computeCondition(
  previous: readonly Condition[] | undefined,
  next: ConditionInput,
  observedGeneration: number,
  now: EpochMs,
): Condition {
  const old = previous?.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : toRfc3339(now);
  return { ...next, lastTransitionTime, observedGeneration };
}

export function setStatusCondition(
  conditions: readonly Condition[],
  next: ConditionInput,
  observedGeneration: number,
  now: EpochMs,
): Condition[] {
  const updated = computeCondition(conditions, next, observedGeneration, now);
  const i = conditions.findIndex((c) => c.type === next.type);
  if (i < 0) return [...conditions, updated];
  return conditions.map((c, j) => (j === i ? updated : c));
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}
