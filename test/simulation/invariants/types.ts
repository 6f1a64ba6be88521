// An invariant: a name, the rule in one sentence, and a pure check over a snapshot that returns
// one line of evidence per violation (empty when the rule holds).
import type { Snapshot } from "../snapshot.js";

export interface Invariant {
  name: string;
  rule: string;
  check(s: Snapshot): string[];
}

export interface Violation {
  invariant: string;
  step: number;
  evidence: string;
}
