// Every invariant the simulation checks after each step, in one list.
import { drainCap, adoptionFree, dryRunRouting, neverDark, quarantineWithinCap } from "./routing.js";
import { gateDrainCap, gateNeverDark } from "./gate-routing.js";
import {
  dryRunEvictions,
  freshEvidence,
  namespaceShare,
  noEvictionInFailOpen,
  operatorBudget,
  policyBudgets,
  replaceableOnly,
} from "./replacement.js";
import { noEvictionAboveBreaker } from "./breaker.js";
import { converged, noFrozenSlices } from "./settled.js";
import { handoverAcknowledged, ownerGap, singleOwnerWrites } from "./shards.js";
import type { Invariant, Violation } from "./types.js";
import type { Snapshot } from "../snapshot.js";

export type { Invariant, Violation } from "./types.js";

export const INVARIANTS: readonly Invariant[] = [
  neverDark,
  drainCap,
  quarantineWithinCap,
  adoptionFree,
  dryRunRouting,
  gateNeverDark,
  gateDrainCap,
  policyBudgets,
  operatorBudget,
  namespaceShare,
  replaceableOnly,
  noEvictionInFailOpen,
  noEvictionAboveBreaker,
  freshEvidence,
  dryRunEvictions,
  noFrozenSlices,
  converged,
  singleOwnerWrites,
  handoverAcknowledged,
  ownerGap,
];

/** Checks every invariant not in `skip` against the snapshot. */
export function checkAll(s: Snapshot, skip: ReadonlySet<string> = new Set()): Violation[] {
  const out: Violation[] = [];
  for (const inv of INVARIANTS) {
    if (skip.has(inv.name)) continue;
    for (const evidence of inv.check(s)) out.push({ invariant: inv.name, step: s.step, evidence });
  }
  return out;
}
