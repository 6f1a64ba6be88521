// What the replacement controller last decided for each policy (its ReplacementBlocked condition)
// and the policy's ledger as it last read or wrote it, handed to the policy's status pass: the
// status has one writer (policy-status.ts), so the replacement controller leaves its outcome
// here, and a change wakes the policy. The ledger is handed over only once the run is done (its
// evictions made), so status.replacements never shows a charge before the run that made it ends.
import type { LedgerEntry } from "../domain/budget.js";
import type { ReplacementConditionPlan } from "../domain/replacement.js";

export interface ReplacementOutcome {
  condition: ReplacementConditionPlan;
  /** Absent when the policy's ledger cannot be read: status.replacements stays as it is. */
  ledger?: readonly LedgerEntry[];
}

export class ReplacementOutcomes {
  private readonly outcomes = new Map<string, { outcome: ReplacementOutcome; text: string }>();

  /** `wakePolicy` queues the policy's status pass. */
  constructor(private readonly wakePolicy: (key: string) => void = () => {}) {}

  /** Keeps the policy's outcome; wakes the policy when it changed. */
  record(key: string, outcome: ReplacementOutcome): void {
    const text = JSON.stringify(outcome);
    if (this.outcomes.get(key)?.text === text) return;
    this.outcomes.set(key, { outcome, text });
    this.wakePolicy(key);
  }

  /** The outcome last recorded; undefined before the replacement controller has run for the policy. */
  outcomeOf(key: string): ReplacementOutcome | undefined {
    return this.outcomes.get(key)?.outcome;
  }

  forget(key: string): void {
    this.outcomes.delete(key);
  }
}
