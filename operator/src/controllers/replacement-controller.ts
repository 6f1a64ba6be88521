// The replacement controller: one reconcile per policy key on a queue of its own, woken when the
// policy's status lists a pod awaiting replacement (wake-rules.ts), by a verdict change and by its
// own requeues (a window, a budget freeing, a PodDisruptionBudget back-off). It gathers a fresh
// snapshot (the caches, the health store, the status as newest known, the clock), runs the
// replacement part (replacer.ts: the named checks, the conditional charges, the evictions) and
// hands its outcome to the status pass (replacement-outcomes.ts): it never writes the status.
import { findCondition } from "../domain/conditions.js";
import { computeRecoveredAt } from "../domain/drain.js";
import { outageFlags, reportedOutage, standingOutage } from "../domain/outage.js";
import type { Clock } from "../runtime/clock.js";
import type { HealthStore } from "../runtime/health-store.js";
import { newReconcileId, type Logger } from "../runtime/logger.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import type { Endpoints } from "./endpoints.js";
import { splitKey, type ObjectCache, type PodObject, type PolicyObject } from "./kube-objects.js";
import { currentOutageOf } from "./other-policy-views.js";
import { parsePolicy, type ParsedPolicy } from "./parsed-policy.js";
import type { PolicyStatusPart } from "./policy-status.js";
import type { ProbeTargets } from "./probe-targets.js";
import type { ReplacementOutcomes } from "./replacement-outcomes.js";
import type { Replacer } from "./replacer.js";
import type { Rollouts } from "./rollouts.js";
import type { ServiceOwnership } from "./service-ownership.js";
import type { StatusVersions } from "./status-versions.js";

/** How soon to look again when the slice cache has not caught up with our own writes. */
const STALE_SLICES_RETRY_MS = 1_000;

export interface ReplacementControllerOptions {
  policies: ObjectCache<PolicyObject>;
  ownership: Pick<ServiceOwnership, "problemFor">;
  probeTargets: Pick<ProbeTargets, "targetsOf" | "isProbing">;
  endpoints: Pick<Endpoints, "current" | "isStale">;
  rollouts: Pick<Rollouts, "suspects">;
  replacer: Pick<Replacer, "run" | "forget">;
  outcomes: ReplacementOutcomes;
  /** The Events of each attempt (the status part records them; it alone writes the status). */
  status: Pick<PolicyStatusPart, "recordReplacements">;
  /** Policy statuses as this process knows them newest (its own writes while the cache lags). */
  versions: Pick<StatusVersions, "read">;
  health: Pick<HealthStore, "get">;
  clock: Clock;
  logger: Logger;
  /** Only the leader replaces (with shards, the reconcile is gated and every write fenced as well). */
  isLeader: () => boolean;
}

/** What one reconcile acts on, read at its start. */
interface Snapshot {
  targets: PodObject[];
  drain: Parameters<Replacer["run"]>[4];
}

export class ReplacementController {
  constructor(private readonly o: ReplacementControllerOptions) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const obj = this.o.policies.get(namespace, name);
    if (!obj || obj.metadata?.deletionTimestamp) {
      this.o.replacer.forget(key);
      this.o.outcomes.forget(key);
      return;
    }
    if (!this.o.isLeader()) return;
    const parsed = parsePolicy(obj);
    // An invalid spec replaces nothing; the policy's own pass reports it.
    if (!parsed.ok) return;
    const policy = parsed.policy;
    const now = this.o.clock.now();
    const snapshot = this.snapshot(policy, now);
    if (snapshot === "stale") return { requeueAfterMs: STALE_SLICES_RETRY_MS };
    if (snapshot === undefined) return;
    const log = this.o.logger.child({ policy: key, reconcileId: newReconcileId(), controller: "replacement" });
    // The ledgers are charged and persisted before any eviction (replacer.ts).
    const result = await this.o.replacer.run(log, policy, snapshot.targets, now, snapshot.drain);
    this.o.status.recordReplacements(policy.obj, policy.spec.replacement.after, result.outcomes);
    this.o.outcomes.record(key, { condition: result.condition, ...(result.ledger ? { ledger: result.ledger } : {}) });
    if (result.requeueAt === undefined) return;
    return { requeueAfterMs: Math.max(1, result.requeueAt - now) };
  }

  /**
   * The policy's targets and what its drain says of them now: undefined while its status does not
   * say Ready (its own pass found it invalid, its Service claimed or missing, a Secret unreadable)
   * or while its Service is another policy's; "stale" while the slice cache is older than our own
   * writes. The outage is the one found now or, until the status says it ended, the one reported;
   * evidence must be newer than its end (recoveredAt), as in the drain plan.
   */
  private snapshot(policy: ParsedPolicy, now: number): Snapshot | "stale" | undefined {
    const { namespace, name } = policy.obj.metadata;
    const status = this.o.versions.read(policy.obj).status;
    if (findCondition(status?.conditions, "Ready")?.status !== "True") return undefined;
    const serviceName = policy.spec.serviceName;
    if (policy.spec.drain.method !== "ReadinessGate" && serviceName !== undefined) {
      if (this.o.ownership.problemFor(namespace, name, serviceName)) return undefined;
      const slices = this.o.endpoints.current(namespace, serviceName);
      if (this.o.endpoints.isStale(namespace, serviceName, slices)) return "stale";
    }
    const targets = this.o.probeTargets.targetsOf(policy.key, namespace, policy.spec);
    const whenAllUnhealthy = policy.spec.drain.whenAllUnhealthy;
    const last = findCondition(status?.conditions, whenAllUnhealthy);
    const current = currentOutageOf(
      {
        isProbing: (key, uid) => this.o.probeTargets.isProbing(key, uid),
        versions: this.o.versions,
        targetsOf: (p) => this.o.probeTargets.targetsOf(p.key, p.obj.metadata.namespace, p.spec),
        health: this.o.health,
      },
      policy,
      new Map(),
    );
    const outage = standingOutage(current, reportedOutage(last ? [last] : [], [whenAllUnhealthy]));
    return {
      targets,
      drain: {
        ...outageFlags(outage),
        recoveredAt: computeRecoveredAt(last, now),
        rollouts: this.o.rollouts.suspects(policy.key, namespace, targets),
      },
    };
  }
}
