// The replacement part: eligibility (the pure planner) -> ledger charge (conditional writes) ->
// eviction -> outcome. It applies the plan it was given and returns what happened, never editing
// the plan; a PodDisruptionBudget refusal is refunded and backed off per pod.
import { computeBudget, type LedgerEntry } from "../domain/budget.js";
import type { Outage } from "../domain/outage.js";
import { rolloutBlockReason, type RolloutSuspect } from "../domain/rollout.js";
import {
  planReplacements,
  type PolicyBudget,
  type ReplacementAttempt,
  type ReplacementCandidate,
  type ReplacementConditionPlan,
  type ReplacementPlan,
  type UnhealthyShare,
} from "../domain/replacement.js";
import type { Clock } from "../runtime/clock.js";
import type { HealthStore } from "../runtime/health-store.js";
import type { Logger } from "../runtime/logger.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import { nameOf, uidOf, type ObjectCache, type PodObject, type PolicyObject } from "./kube-objects.js";
import { otherPolicies, type ParsedPolicy } from "./parsed-policy.js";
import type { PolicyWriter } from "./policy-writer.js";
import type { LedgerStore, OperatorLedger, PolicyLedger } from "./replacement-ledgers.js";
import type { Diagnostics, DiagnosticsOutcome } from "./diagnostics.js";
import type { StatusVersions } from "./status-versions.js";
import { otherViewsOf } from "./other-policy-views.js";

export type Failpoint = (point: "after-charge" | "after-evict") => void;

export interface ReplacerOptions {
  policies: ObjectCache<PolicyObject>;
  pods: ObjectCache<PodObject>;
  health: Pick<HealthStore, "get" | "evidence">;
  /** Whether a policy is probing a pod now: only such a policy may veto its replacement. */
  isProbing: (policyKey: string, uid: string) => boolean;
  writer: Pick<PolicyWriter, "evictPod" | "deletePod">;
  ledgers: LedgerStore;
  /** Policy statuses as this process knows them newest (its own writes while the cache lags). */
  versions: Pick<StatusVersions, "read">;
  clock: Clock;
  metrics?: Pick<OperatorMetrics, "replacementsTotal" | "replacementBudgetRemaining"> | undefined;
  maxReplacementsPer12h: number;
  /** One namespace's share of maxReplacementsPer12h (--max-replacements-per-12h-per-namespace); absent: no share. */
  maxReplacementsPer12hPerNamespace?: number | undefined;
  /** First wait after a PodDisruptionBudget refusal; doubles per refusal up to maxPdbBackoffMs. */
  pdbBackoffMs?: number;
  maxPdbBackoffMs?: number;
  /** Crash-safety tests stop the process at these points: after the ledgers are persisted, after the API call. */
  failpoint?: Failpoint | undefined;
  /** Another policy's targets now, for its breaker's share (ProbeTargets.targetsOf). */
  targetsOf: (policy: ParsedPolicy) => readonly PodObject[];
  /** Keeps the pod's evidence just before its eviction (bounded in time, never failing it). */
  diagnostics?: Pick<Diagnostics, "capture"> | undefined;
}

export type AttemptOutcome =
  | { attempt: ReplacementAttempt; outcome: "evicted" | "gone"; diagnostics?: DiagnosticsOutcome }
  /** Another policy's reconcile is replacing (or has replaced) the pod: nothing charged, nothing sent. */
  | { attempt: ReplacementAttempt; outcome: "taken" }
  | {
      attempt: ReplacementAttempt;
      outcome: "pdb_blocked";
      message: string;
      waitUntil: number;
      backoffMs: number;
      diagnostics?: DiagnosticsOutcome;
    };

export interface ReplacementResult {
  /** The plan as the core made it. */
  plan: ReplacementPlan;
  outcomes: AttemptOutcome[];
  /** The plan's condition, or a PodDisruptionBudget refusal's. */
  condition: ReplacementConditionPlan;
  requeueAt?: number;
  /** The policy's own ledger after the attempts, for status.replacements; absent when it cannot be read. */
  ledger?: LedgerEntry[];
}

/** A policy whose own ledger cannot be read replaces nothing, and says why. */
function unreadable(problem: string): ReplacementResult {
  const condition: ReplacementConditionPlan = {
    blocked: true,
    reason: "Budget",
    message: `${problem}; nothing is replaced until it can be read`,
  };
  return { plan: { attempts: [], blocked: [], condition }, outcomes: [], condition };
}

/** The ledgers one reconcile works on, each at the version it was read (or last written) at. */
interface Ledgers {
  policies: Map<string, PolicyLedger>;
  operator: OperatorLedger;
}

export class Replacer {
  private readonly pdbBlocked = new Map<string, { until: number; backoffMs: number }>();
  /** Pods this process removed, by uid, until the cache shows them terminating or gone: a lagging cache must not get them evicted twice. */
  private readonly removed = new Map<string, { namespace: string; name: string }>();
  /** Pods an attempt is under way for: two policies' workers may both plan one pod; the first to start takes it. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly o: ReplacerOptions) {}

  /**
   * Plans and applies the policy's replacements; nothing, and a Budget condition, when its own ledger cannot be read.
   * From the policy's drain (replacement-controller.ts): `failOpen` or `failClosed` (then nothing is replaced) and `recoveredAt`,
   * when fail-open (or fail-closed) last ended (a replacement needs a probe result newer than it).
   */
  async run(
    log: Logger,
    policy: ParsedPolicy,
    targets: readonly PodObject[],
    now: number,
    drain: { failOpen: boolean; failClosed?: boolean; recoveredAt?: number; rollouts?: readonly RolloutSuspect[] },
  ): Promise<ReplacementResult> {
    const read = this.o.ledgers.policy(policy.obj);
    if (read.entries === null) return unreadable(read.problem ?? "the replacement ledger cannot be read");
    // A ledger not yet in the policy's own ConfigMap (status.replacements of an earlier version) moves there now.
    const own = await this.o.ledgers.persistPending(read, now);
    const ownEntries = own.entries ?? read.entries;
    this.forgetRemovedPods();
    // Other policies' budgets, breakers and views bear only on Unhealthy pods: with none, each
    // reconcile would otherwise look at every policy of the namespace for nothing.
    const anyUnhealthy = targets.some((p) => this.o.health.get(policy.key, uidOf(p))?.state === "Unhealthy");
    const others = anyUnhealthy ? otherPolicies(this.o.policies, policy) : [];
    const ledgers: Ledgers = {
      policies: new Map([[policy.key, own]]),
      operator: { entries: [], resourceVersion: undefined },
    };
    for (const o of others) ledgers.policies.set(o.key, this.o.ledgers.policy(o.obj));
    const suspects = new Map(
      (drain.rollouts ?? []).flatMap((s) => s.pods.map((p) => [p.uid, rolloutBlockReason(s)] as const)),
    );
    const outages = new Map<string, Outage | undefined>();
    let candidates = targets
      .map((p) => this.candidateOf(policy, others, p, now, outages))
      .filter((c): c is ReplacementCandidate => c !== undefined)
      .map((c) => (suspects.has(c.uid) ? { ...c, rolloutSuspect: suspects.get(c.uid)! } : c));
    this.recordBudget(policy, ownEntries, now);

    const spec = policy.spec;
    // The operator-wide ledger is read fresh, and only when some pod is due: no reads at steady state.
    const due = candidates.some((c) => c.unhealthySince !== undefined && c.unhealthySince + policy.afterMs <= now);
    if (due && spec.replacement.enabled && !spec.dryRun) {
      candidates = this.withBreakers(others, candidates);
      ledgers.operator = await this.o.ledgers.readOperator(log, now);
    }
    const otherBudgets: PolicyBudget[] = others.map((o) => ({
      policy: o.key,
      maxPerHour: o.spec.replacement.maxPerHour,
      maxPerDay: o.spec.replacement.maxPerDay,
      ledger: ledgers.policies.get(o.key)!.entries,
    }));
    const plan = planReplacements({
      now,
      failOpen: drain.failOpen,
      ...(drain.failClosed ? { failClosed: true } : {}),
      share: this.shareOf(policy, targets),
      ...(drain.recoveredAt !== undefined ? { recoveredAt: drain.recoveredAt } : {}),
      policy: {
        policy: policy.key,
        maxPerHour: spec.replacement.maxPerHour,
        maxPerDay: spec.replacement.maxPerDay,
        replacementEnabled: spec.replacement.enabled,
        dryRun: spec.dryRun,
        afterMs: policy.afterMs,
        method: spec.replacement.method,
        ledger: ownEntries,
        pauseAboveUnhealthyPercent: spec.replacement.pauseAboveUnhealthyPercent,
      },
      candidates,
      otherPolicies: otherBudgets,
      operatorLedger: ledgers.operator.entries,
      max12h: this.o.maxReplacementsPer12h,
      ...(this.o.maxReplacementsPer12hPerNamespace !== undefined
        ? { maxPerNamespace12h: this.o.maxReplacementsPer12hPerNamespace }
        : {}),
    });

    const result = await this.apply(log, policy, plan, ledgers, now);
    return { ...result, ledger: ledgers.policies.get(policy.key)!.entries ?? ownEntries };
  }

  forget(policyKey: string): void {
    this.o.ledgers.forget(policyKey);
  }

  /** Makes the plan's attempts in turn; a PodDisruptionBudget refusal becomes the condition and a requeue. */
  private async apply(
    log: Logger,
    policy: ParsedPolicy,
    plan: ReplacementPlan,
    ledgers: Ledgers,
    now: number,
  ): Promise<ReplacementResult> {
    const result: ReplacementResult = { plan, outcomes: [], condition: plan.condition };
    if (plan.requeueAt !== undefined) result.requeueAt = plan.requeueAt;
    for (const attempt of plan.attempts) {
      const outcome = await this.attempt(log, policy, attempt, ledgers, now);
      result.outcomes.push(outcome);
      if (outcome.outcome !== "pdb_blocked") continue;
      result.requeueAt = Math.min(result.requeueAt ?? Infinity, outcome.waitUntil);
      result.condition = {
        blocked: true,
        reason: "PodDisruptionBudget",
        message: `${attempt.podName}: eviction refused by a PodDisruptionBudget (${outcome.message}); retrying after ${Math.round(outcome.backoffMs / 1000)}s`,
      };
    }
    return result;
  }

  /** 1. charge every ledger over the version it was read at, 2. evict (uid precondition), 3. refund a PDB refusal. */
  private async attempt(
    log: Logger,
    policy: ParsedPolicy,
    attempt: ReplacementAttempt,
    ledgers: Ledgers,
    now: number,
  ): Promise<AttemptOutcome> {
    // Checked and taken before the first await, so no other worker can get between them.
    if (this.inFlight.has(attempt.podUid) || this.removed.has(attempt.podUid)) return { attempt, outcome: "taken" };
    this.inFlight.add(attempt.podUid);
    try {
      return await this.charged(log, policy, attempt, ledgers, now);
    } finally {
      this.inFlight.delete(attempt.podUid);
    }
  }

  private async charged(
    log: Logger,
    policy: ParsedPolicy,
    attempt: ReplacementAttempt,
    ledgers: Ledgers,
    now: number,
  ): Promise<AttemptOutcome> {
    await this.change(ledgers, attempt, "charge", now);
    this.o.failpoint?.("after-charge");
    // After the charge is persisted (a crash here keeps it: never over budget), before the eviction
    // takes the pod and its logs away. Bounded by its own deadline; a failure is reported, not fatal.
    const diagnostics = await this.o.diagnostics?.capture(
      log,
      policy,
      { name: attempt.podName, uid: attempt.podUid },
      this.o.clock.now(),
    );
    const kept = diagnostics ? { diagnostics } : {};
    const ns = policy.obj.metadata.namespace;
    const outcome =
      attempt.method === "Delete"
        ? await this.o.writer.deletePod(ns, attempt.podName, attempt.podUid)
        : await this.o.writer.evictPod(ns, attempt.podName, attempt.podUid);
    this.o.failpoint?.("after-evict");
    this.o.metrics?.replacementsTotal.inc({
      policy: policy.key,
      outcome: outcome.outcome === "blocked" ? "pdb_blocked" : outcome.outcome,
    });
    if (outcome.outcome === "blocked") {
      // A PodDisruptionBudget refusal uses no budget: refund, and wait with backoff.
      await this.change(ledgers, attempt, "refund", now);
      const prev = this.pdbBlocked.get(attempt.podUid);
      const backoffMs = Math.min(
        prev ? prev.backoffMs * 2 : (this.o.pdbBackoffMs ?? 5_000),
        this.o.maxPdbBackoffMs ?? 300_000,
      );
      this.pdbBlocked.set(attempt.podUid, { until: now + backoffMs, backoffMs });
      return {
        attempt,
        outcome: "pdb_blocked",
        message: outcome.message,
        waitUntil: now + backoffMs,
        backoffMs,
        ...kept,
      };
    }
    this.pdbBlocked.delete(attempt.podUid);
    this.removed.set(attempt.podUid, { namespace: ns, name: attempt.podName });
    log.info(
      {
        pod: attempt.podName,
        uid: attempt.podUid,
        method: attempt.method,
        outcome: outcome.outcome,
        diagnostics: diagnostics?.configMap,
      },
      "pod replaced",
    );
    return { attempt, outcome: outcome.outcome, ...kept };
  }

  private async change(
    ledgers: Ledgers,
    attempt: ReplacementAttempt,
    change: "charge" | "refund",
    now: number,
  ): Promise<void> {
    const entry = attempt.charge.entry;
    for (const key of attempt.charge.policies) {
      const ledger = ledgers.policies.get(key);
      if (ledger && ledger.entries !== null)
        ledgers.policies.set(key, await this.o.ledgers.updatePolicy(ledger, change, entry, now));
    }
    if (attempt.charge.operator)
      ledgers.operator = await this.o.ledgers.updateOperator(ledgers.operator, change, entry, now);
  }

  /**
   * Adds each other selecting policy's breaker to the views that can pause a replacement (probing,
   * replacing). Only when some pod is due: a share costs a pass over that policy's targets.
   */
  private withBreakers(others: readonly ParsedPolicy[], candidates: ReplacementCandidate[]): ReplacementCandidate[] {
    const counts = new Set(
      candidates.flatMap((c) => c.otherViews.filter((v) => v.probing && v.replacementEnabled).map((v) => v.policy)),
    );
    const breakers = new Map(
      others
        .filter((o) => counts.has(o.key))
        .map(
          (o) =>
            [
              o.key,
              {
                share: this.shareOf(o, this.o.targetsOf(o)),
                pauseAboveUnhealthyPercent: o.spec.replacement.pauseAboveUnhealthyPercent,
              },
            ] as const,
        ),
    );
    return candidates.map((c) => ({
      ...c,
      otherViews: c.otherViews.map((v) => (breakers.has(v.policy) ? { ...v, breaker: breakers.get(v.policy)! } : v)),
    }));
  }

  /** The breaker's share: every target, Unhealthy as this policy's health store says (as status counts them). */
  private shareOf(policy: ParsedPolicy, targets: readonly PodObject[]): UnhealthyShare {
    const unhealthy = targets.filter((p) => this.o.health.get(policy.key, uidOf(p))?.state === "Unhealthy").length;
    return { unhealthy, targets: targets.length };
  }

  private candidateOf(
    policy: ParsedPolicy,
    others: readonly ParsedPolicy[],
    pod: PodObject,
    now: number,
    outages: Map<string, Outage | undefined>,
  ): ReplacementCandidate | undefined {
    const uid = uidOf(pod);
    // Only a pod the policy probes now is its to replace: one it stopped probing has no fresh verdict.
    if (!this.o.isProbing(policy.key, uid)) return undefined;
    const h = this.o.health.get(policy.key, uid);
    const evidence = this.o.health.evidence(policy.key, uid);
    if (!h || !evidence || h.state !== "Unhealthy") return undefined;
    const c: ReplacementCandidate = {
      uid,
      name: nameOf(pod),
      state: h.state,
      ownerReferences: pod.metadata?.ownerReferences ?? [],
      terminating: this.isTerminating(pod),
      probingSince: evidence.probingSince,
      otherViews: otherViewsOf(this.o, others, pod, outages),
    };
    if (h.unhealthySince !== undefined) c.unhealthySince = h.unhealthySince;
    if (evidence.lastResultAt !== undefined) c.lastResultAt = evidence.lastResultAt;
    const pdb = this.pdbBlocked.get(uid);
    if (pdb && pdb.until > now) c.pdbBlockedUntil = pdb.until;
    return c;
  }

  /**
   * From the cache as it is now, not the reconcile's list read before its awaits: by the time
   * replacement runs, an eviction made since (by this or another worker) may have reached the
   * cache, and the list would have the pod evicted twice.
   */
  private isTerminating(pod: PodObject): boolean {
    const uid = uidOf(pod);
    const live = this.o.pods.get(pod.metadata?.namespace, nameOf(pod));
    const gone = !live || uidOf(live) !== uid || !!live.metadata?.deletionTimestamp;
    return gone || !!pod.metadata?.deletionTimestamp || this.removed.has(uid) || this.inFlight.has(uid);
  }

  private forgetRemovedPods(): void {
    for (const [uid, ref] of this.removed) {
      const cached = this.o.pods.get(ref.namespace, ref.name);
      if (!cached || uidOf(cached) !== uid || cached.metadata?.deletionTimestamp) this.removed.delete(uid);
    }
  }

  private recordBudget(policy: ParsedPolicy, ledger: readonly LedgerEntry[], now: number): void {
    const m = this.o.metrics;
    if (!m) return;
    const { maxPerHour, maxPerDay } = policy.spec.replacement;
    const b = computeBudget(ledger, now, { maxPerHour, maxPerDay });
    m.replacementBudgetRemaining.set({ policy: policy.key, window: "hour" }, Math.max(0, maxPerHour - b.usedHour));
    m.replacementBudgetRemaining.set({ policy: policy.key, window: "day" }, Math.max(0, maxPerDay - b.usedDay));
  }
}
