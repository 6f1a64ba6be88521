// Whether two statuses say the same: the status part writes only when they do not.
import { compareStrings } from "./drain.js";
import type { PolicyStatus } from "./status.js";

/**
 * Deep equality after normalising order (conditions by type, pods by uid, replacements by
 * time then uid) and ignoring keys whose value is undefined: true means nothing to write.
 */
export function statusEqual(a: PolicyStatus | undefined, b: PolicyStatus | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return deepEqual(normalise(a), normalise(b));
}

function normalise(s: PolicyStatus): unknown {
  return {
    ...s,
    conditions: [...(s.conditions ?? [])].sort((x, y) => compareStrings(x.type, y.type)),
    pods: [...(s.pods ?? [])].sort((x, y) => compareStrings(x.uid, y.uid) || compareStrings(x.name, y.name)),
    replacements: [...(s.replacements ?? [])].sort(
      (x, y) => compareStrings(x.time, y.time) || compareStrings(x.uid, y.uid) || compareStrings(x.pod, y.pod),
    ),
  };
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) {
    if (!deepEqual(ao[k], bo[k])) return false;
  }
  return true;
}
