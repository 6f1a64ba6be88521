// How long diagnostics ConfigMaps are kept: none older than the policy's diagnosticsRetention,
// and at most MAX_DIAGNOSTICS per policy, the oldest deleted first.
import { formatDuration } from "../api/duration.js";
import { compareStrings } from "./drain.js";
import type { EpochMs } from "./types.js";

export const MAX_DIAGNOSTICS = 20;

export interface StoredDiagnostics {
  name: string;
  uid: string;
  pod: string;
  capturedAt: EpochMs;
}

export interface RetentionInput {
  items: readonly StoredDiagnostics[];
  now: EpochMs;
  retentionMs: number;
  max?: number;
}

export interface RetentionPlan {
  /** Newest first: what status.diagnostics lists. */
  keep: StoredDiagnostics[];
  delete: Array<StoredDiagnostics & { reason: string }>;
  /** When the oldest kept one expires: the next look. */
  requeueAt?: EpochMs;
}

/** Newest first (ties by name, so two replicas plan alike); expired ones and those past `max` are deleted. */
export function planDiagnosticsRetention(input: RetentionInput): RetentionPlan {
  const max = input.max ?? MAX_DIAGNOSTICS;
  const sorted = [...input.items].sort((a, b) => b.capturedAt - a.capturedAt || compareStrings(a.name, b.name));
  const plan: RetentionPlan = { keep: [], delete: [] };
  for (const item of sorted) {
    if (item.capturedAt + input.retentionMs <= input.now) {
      plan.delete.push({ ...item, reason: `older than diagnosticsRetention ${formatDuration(input.retentionMs)}` });
    } else if (plan.keep.length >= max) {
      plan.delete.push({ ...item, reason: `more than ${max} kept for the policy: the oldest go first` });
    } else {
      plan.keep.push(item);
    }
  }
  const expiries = plan.keep.map((k) => k.capturedAt + input.retentionMs);
  if (expiries.length > 0) plan.requeueAt = Math.min(...expiries);
  return plan;
}
