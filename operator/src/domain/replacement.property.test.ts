// Property tests: random histories of health flips, clock jumps, API failures, crashes and
// restarts, driven through the same steps the controller takes (decode the persisted
// ledgers, plan, persist each charge, then call the API). The world records every real pod
// removal, and the properties are checked against those removals, not against the ledgers.
import { describe, it, expect, afterAll } from "@jest/globals";
import fc from "fast-check";
import { DAY_MS, HOUR_MS, TWELVE_HOURS_MS, pruneLedger, type LedgerEntry, type ReplacementMethod } from "./budget.js";
import {
  chargeLedger,
  decodeOperatorLedger,
  decodePolicyLedger,
  encodeOperatorLedger,
  encodePolicyLedger,
  refundLedger,
  type PolicyLedgerItem,
} from "./ledger.js";
import {
  planReplacements,
  type OtherPolicyView,
  type ReplacementCandidate,
  type ReplacementHealthState,
} from "./replacement.js";

const T0 = Date.parse("2026-11-30T00:00:00Z");
const MIN = 60 * 1000;

interface PolicySpec {
  name: string;
  enabled: boolean;
  dryRun: boolean;
  afterMs: number;
  maxPerHour: number;
  maxPerDay: number;
  method: ReplacementMethod;
}
interface SlotSpec {
  /** Indices of the policies selecting this slot's pods. */
  selectedBy: number[];
  hasController: boolean;
}
type Outcome = "ok" | "failNotApplied" | "failApplied" | "pdb" | "crashBeforeCall" | "crashMidCharge";
type Step =
  | { kind: "advance"; ms: number }
  | { kind: "flip"; slot: number; policy: number; state: ReplacementHealthState }
  /** The pod really breaks: every policy sees it Unhealthy from now on. */
  | { kind: "break"; slot: number }
  | {
      kind: "reconcile";
      policy: number;
      outcomes: Outcome[];
      unreadable: readonly number[];
      operatorUnreadable: boolean;
      chargesBeforeCrash: number;
    }
  /** The clock moves to the instant the last plan asked to be requeued at (plus a small offset). */
  | { kind: "wake"; offsetMs: number }
  | { kind: "restart" }
  | { kind: "sync" };
interface Scenario {
  policies: PolicySpec[];
  max12h: number;
  slots: SlotSpec[];
  steps: Step[];
}

const policyArb = (i: number) =>
  fc
    .record({
      enabled: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      dryRun: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      afterMs: fc.constantFrom(30 * 1000, 5 * MIN, HOUR_MS),
      maxPerHour: fc.integer({ min: 0, max: 3 }),
      extraPerDay: fc.integer({ min: 0, max: 3 }),
      method: fc.constantFrom<ReplacementMethod>("Evict", "Delete"),
    })
    .map(({ extraPerDay, ...p }) => ({ ...p, name: `shop/p${i}`, maxPerDay: p.maxPerHour + extraPerDay }));

const scenarioArb: fc.Arbitrary<Scenario> = fc.integer({ min: 1, max: 3 }).chain((policyCount) =>
  fc.record({
    policies: fc.tuple(...Array.from({ length: policyCount }, (_, i) => policyArb(i))),
    max12h: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constant(100)),
    slots: fc.array(
      fc.record({
        selectedBy: fc.uniqueArray(fc.integer({ min: 0, max: policyCount - 1 }), {
          minLength: 1,
          maxLength: policyCount,
        }),
        hasController: fc.oneof(
          { weight: 6, arbitrary: fc.constant(true) },
          { weight: 1, arbitrary: fc.constant(false) },
        ),
      }),
      { minLength: 1, maxLength: 6 },
    ),
    steps: fc.array(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.record({
            kind: fc.constant("advance" as const),
            ms: fc.oneof(
              fc.constantFrom(0, 1, 30 * 1000, 5 * MIN, 59 * MIN, HOUR_MS, 2 * HOUR_MS),
              fc.integer({ min: 0, max: 3 * HOUR_MS }),
              fc.integer({ min: 12 * HOUR_MS, max: 30 * HOUR_MS }),
            ),
          }),
        },
        {
          weight: 4,
          arbitrary: fc.record({
            kind: fc.constant("flip" as const),
            slot: fc.nat(5),
            policy: fc.nat(2),
            state: fc.constantFrom<ReplacementHealthState>("Unhealthy", "Unhealthy", "Healthy", "Unknown"),
          }),
        },
        {
          weight: 5,
          arbitrary: fc.record({
            kind: fc.constant("reconcile" as const),
            policy: fc.nat(2),
            outcomes: fc.array(
              fc.constantFrom<Outcome>(
                "ok",
                "ok",
                "ok",
                "failNotApplied",
                "failApplied",
                "pdb",
                "crashBeforeCall",
                "crashMidCharge",
              ),
              { maxLength: 4 },
            ),
            unreadable: fc.oneof(
              { weight: 6, arbitrary: fc.constant<number[]>([]) },
              { weight: 1, arbitrary: fc.array(fc.nat(2), { maxLength: 2 }) },
            ),
            operatorUnreadable: fc.oneof(
              { weight: 8, arbitrary: fc.constant(false) },
              { weight: 1, arbitrary: fc.constant(true) },
            ),
            chargesBeforeCrash: fc.nat(3),
          }),
        },
        { weight: 3, arbitrary: fc.record({ kind: fc.constant("break" as const), slot: fc.nat(5) }) },
        {
          weight: 3,
          arbitrary: fc.record({ kind: fc.constant("wake" as const), offsetMs: fc.constantFrom(-1, 0, 0, 0, 1) }),
        },
        { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
        { weight: 1, arbitrary: fc.constant({ kind: "sync" as const }) },
      ),
      { minLength: 10, maxLength: 80, size: "max" },
    ),
  }),
);

interface Removal {
  time: number;
  slot: number;
}

interface World {
  now: number;
  gen: number[];
  /** The pod of the slot was removed, but the controller's cache still shows it. */
  stale: boolean[];
  health: Array<Array<{ state: ReplacementHealthState; unhealthySince?: number }>>;
  policyLedgers: PolicyLedgerItem[][];
  operatorData: Record<string, string>;
  pdbBlockedUntil: Map<string, number>;
  removals: Removal[];
  requeueAt?: number;
}

let totalRemovals = 0;
let totalWaits = 0;
let totalReattempts = 0;

function uidOf(world: World, slot: number): string {
  return `slot${slot}-gen${world.gen[slot]}`;
}

function decodeOk(result: ReturnType<typeof decodePolicyLedger>): LedgerEntry[] {
  if (!result.ok) throw new Error(`persisted ledger became unreadable: ${result.error}`);
  return result.entries;
}

/** Removes the pod for real: its controller recreates it with a new uid, health starts over. */
function removePod(world: World, scenario: Scenario, slot: number, keepStale: boolean): void {
  world.removals.push({ time: world.now, slot });
  totalRemovals += 1;
  if (keepStale) {
    world.stale[slot] = true;
    return;
  }
  recreate(world, scenario, slot);
}

function recreate(world: World, scenario: Scenario, slot: number): void {
  world.gen[slot]! += 1;
  world.stale[slot] = false;
  world.health[slot] = scenario.policies.map(() => ({ state: "Unknown" as const }));
}

function assertAgreementAt(world: World, scenario: Scenario, slot: number, deciding: number): void {
  const spec = scenario.slots[slot]!;
  expect(spec.hasController).toBe(true);
  const p = scenario.policies[deciding]!;
  expect(p.enabled && !p.dryRun).toBe(true);
  for (const q of spec.selectedBy) {
    const qs = scenario.policies[q]!;
    if (!qs.enabled && q !== deciding) continue;
    const h = world.health[slot]![q]!;
    expect(h.state).toBe("Unhealthy");
    expect(world.now - (h.unhealthySince as number)).toBeGreaterThanOrEqual(qs.afterMs);
  }
}

/** Returns false when the controller crashed. */
function reconcile(world: World, scenario: Scenario, step: Extract<Step, { kind: "reconcile" }>): boolean {
  const pi = step.policy % scenario.policies.length;
  const spec = scenario.policies[pi]!;
  const ledgerOf = (i: number): LedgerEntry[] | null =>
    step.unreadable.includes(i) ? null : decodeOk(decodePolicyLedger(world.policyLedgers[i]));
  const candidates: ReplacementCandidate[] = [];
  scenario.slots.forEach((slotSpec, slot) => {
    if (!slotSpec.selectedBy.includes(pi)) return;
    const h = world.health[slot]![pi]!;
    const uid = uidOf(world, slot);
    const otherViews: OtherPolicyView[] = slotSpec.selectedBy
      .filter((q) => q !== pi)
      .map((q) => {
        const qh = world.health[slot]![q]!;
        const view: OtherPolicyView = {
          policy: scenario.policies[q]!.name,
          probing: true,
          replacementEnabled: scenario.policies[q]!.enabled,
          state: qh.state,
          afterMs: scenario.policies[q]!.afterMs,
        };
        if (qh.unhealthySince !== undefined) view.unhealthySince = qh.unhealthySince;
        return view;
      });
    const candidate: ReplacementCandidate = {
      uid,
      name: `web-${slot}`,
      state: h.state,
      ownerReferences: slotSpec.hasController ? [{ kind: "ReplicaSet", name: "web", controller: true }] : [],
      terminating: false,
      // Fresh evidence and fail-open have their own properties (replacement-safety.property.test.ts).
      probingSince: T0 - 1,
      lastResultAt: world.now,
      otherViews,
    };
    if (h.unhealthySince !== undefined) candidate.unhealthySince = h.unhealthySince;
    const pdb = world.pdbBlockedUntil.get(uid);
    if (pdb !== undefined) candidate.pdbBlockedUntil = pdb;
    candidates.push(candidate);
  });

  const plan = planReplacements({
    now: world.now,
    failOpen: false,
    // The breaker is off here (100 is never exceeded): these properties are about the budgets.
    share: { unhealthy: candidates.filter((c) => c.state === "Unhealthy").length, targets: candidates.length },
    policy: {
      policy: spec.name,
      replacementEnabled: spec.enabled,
      dryRun: spec.dryRun,
      afterMs: spec.afterMs,
      maxPerHour: spec.maxPerHour,
      maxPerDay: spec.maxPerDay,
      method: spec.method,
      ledger: ledgerOf(pi),
      pauseAboveUnhealthyPercent: 100,
    },
    candidates,
    otherPolicies: scenario.policies
      .map((q, i) => ({ q, i }))
      .filter(({ i }) => i !== pi)
      .map(({ q, i }) => ({ policy: q.name, maxPerHour: q.maxPerHour, maxPerDay: q.maxPerDay, ledger: ledgerOf(i) })),
    operatorLedger: step.operatorUnreadable ? null : decodeOk(decodeOperatorLedger(world.operatorData)),
    max12h: scenario.max12h,
  });

  for (const b of plan.blocked) {
    if (b.waitUntil !== undefined) {
      expect(b.waitUntil).toBeGreaterThan(world.now);
      totalWaits += 1;
    }
  }
  if (plan.requeueAt !== undefined) {
    expect(plan.requeueAt).toBeGreaterThan(world.now);
    world.requeueAt = plan.requeueAt;
  }
  if (spec.dryRun || !spec.enabled) expect(plan.attempts).toEqual([]);

  const indexByName = new Map(scenario.policies.map((p, i) => [p.name, i]));
  for (const [n, attempt] of plan.attempts.entries()) {
    const outcome = step.outcomes[n] ?? "ok";
    if (attempt.charge.reattempt) totalReattempts += 1;
    const slot = Number(/^slot(\d+)-/.exec(attempt.podUid)![1]);
    // Persist every charge before the call; a crash part-way leaves some written.
    const writes: Array<() => void> = attempt.charge.policies.map((name) => () => {
      const i = indexByName.get(name)!;
      const charged = chargeLedger(decodeOk(decodePolicyLedger(world.policyLedgers[i])), attempt.charge.entry);
      world.policyLedgers[i] = encodePolicyLedger(pruneLedger(charged, world.now, DAY_MS));
    });
    if (attempt.charge.operator) {
      writes.push(() => {
        const charged = chargeLedger(decodeOk(decodeOperatorLedger(world.operatorData)), attempt.charge.entry);
        world.operatorData = encodeOperatorLedger(pruneLedger(charged, world.now, TWELVE_HOURS_MS));
      });
    }
    if (outcome === "crashMidCharge") {
      writes.slice(0, step.chargesBeforeCrash % writes.length).forEach((w) => w());
      return false;
    }
    writes.forEach((w) => w());
    if (outcome === "crashBeforeCall") return false;

    const alive = !world.stale[slot] && uidOf(world, slot) === attempt.podUid;
    if (!alive) continue; // the API answers 404: nothing removed, the charge stays
    if (outcome === "ok" || outcome === "failApplied") {
      assertAgreementAt(world, scenario, slot, pi);
      removePod(world, scenario, slot, outcome === "failApplied");
    } else if (outcome === "pdb") {
      // HTTP 429: nothing removed, the attempt uses no budget.
      const { uid, time } = attempt.charge.entry;
      for (const name of attempt.charge.policies) {
        const i = indexByName.get(name)!;
        world.policyLedgers[i] = encodePolicyLedger(
          refundLedger(decodeOk(decodePolicyLedger(world.policyLedgers[i])), uid, time),
        );
      }
      world.operatorData = encodeOperatorLedger(
        refundLedger(decodeOk(decodeOperatorLedger(world.operatorData)), uid, time),
      );
      world.pdbBlockedUntil.set(uid, world.now + 5 * MIN);
    }
  }
  return true;
}

function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}

function run(scenario: Scenario): World {
  const slots = scenario.slots.length;
  const world: World = {
    now: T0,
    gen: Array.from({ length: slots }, () => 0),
    stale: Array.from({ length: slots }, () => false),
    health: Array.from({ length: slots }, () => scenario.policies.map(() => ({ state: "Unknown" as const }))),
    policyLedgers: scenario.policies.map(() => []),
    operatorData: {},
    pdbBlockedUntil: new Map(),
    removals: [],
  };
  const restart = () => world.pdbBlockedUntil.clear(); // in-memory only; ledgers and health are persisted
  for (const step of scenario.steps) {
    switch (step.kind) {
      case "advance":
        world.now += step.ms;
        break;
      case "flip": {
        const slot = step.slot % slots;
        const h = world.health[slot]![step.policy % scenario.policies.length]!;
        if (step.state === "Unhealthy") {
          if (h.state !== "Unhealthy") h.unhealthySince = world.now;
        } else {
          delete h.unhealthySince;
        }
        h.state = step.state;
        break;
      }
      case "break":
        for (const h of world.health[step.slot % slots]!) {
          if (h.state !== "Unhealthy") h.unhealthySince = world.now;
          h.state = "Unhealthy";
        }
        break;
      case "reconcile":
        if (!reconcile(world, scenario, step)) restart();
        break;
      case "wake":
        if (world.requeueAt !== undefined) world.now = Math.max(world.now, world.requeueAt + step.offsetMs);
        break;
      case "restart":
        restart();
        break;
      case "sync":
        world.stale.forEach((stale, slot) => stale && recreate(world, scenario, slot));
        break;
    }
  }
  return world;
}

describe("replacement under random histories", () => {
  afterAll(() => {
    // The histories must actually replace pods and wait on budgets, or the properties say nothing.
    expect(totalRemovals).toBeGreaterThan(100);
    expect(totalWaits).toBeGreaterThan(100);
    expect(totalReattempts).toBeGreaterThan(10);
  });

  it("never exceeds any policy's hourly or daily budget, nor the 12-hour cap, in any window", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const world = run(scenario);
        scenario.policies.forEach((p, i) => {
          const times = world.removals.filter((r) => scenario.slots[r.slot]!.selectedBy.includes(i)).map((r) => r.time);
          expect(maxInWindow(times, HOUR_MS)).toBeLessThanOrEqual(p.maxPerHour);
          expect(maxInWindow(times, DAY_MS)).toBeLessThanOrEqual(p.maxPerDay);
        });
        expect(
          maxInWindow(
            world.removals.map((r) => r.time),
            TWELVE_HOURS_MS,
          ),
        ).toBeLessThanOrEqual(scenario.max12h);
      }),
      { numRuns: 400 },
    );
  });

  it("replaces nothing while every policy is in dryRun, whatever else happens", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const dry = { ...scenario, policies: scenario.policies.map((p) => ({ ...p, dryRun: true })) };
        expect(run(dry).removals).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it("never removes a bare pod, and never removes one that cannot be recreated even with generous budgets", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const bare = {
          ...scenario,
          max12h: 100,
          policies: scenario.policies.map((p) => ({ ...p, maxPerHour: 100, maxPerDay: 100 })),
          slots: scenario.slots.map((s) => ({ ...s, hasController: false })),
        };
        expect(run(bare).removals).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});
