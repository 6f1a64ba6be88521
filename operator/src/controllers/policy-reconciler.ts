// One reconcile per HealthProbePolicy key, level-based, from the caches, the health store and the
// clock: it asks each part in turn (Service ownership, probe targets, the drain plan, endpoints or
// the pods' readiness-gate condition, status and Events) and never looks at which event woke it. Slices of Services a
// policy no longer manages are the ServiceSlices controller's work, on a queue of their own;
// replacement is the replacement controller's (replacement-controller.ts), which this pass meets
// through the status (a pod awaiting replacement wakes it) and whose outcome it reports.
import { formatInstant } from "../domain/budget.js";
import { computeReplaceAfter } from "../domain/replacement.js";
import { computeRecoveredAt, type DrainPlan } from "../domain/drain.js";
import type { QuarantineVerdict } from "../domain/flap-quarantine.js";
import { planGateDrain } from "../domain/gate-plan.js";
import type { ServiceEndpoints, StatusPodInput } from "../domain/status.js";
import type { Clock } from "../runtime/clock.js";
import type { HealthStore } from "../runtime/health-store.js";
import { newReconcileId, type Logger } from "../runtime/logger.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import type { Endpoints } from "./endpoints.js";
import { gateDrainPod, planSliceDrain, quarantinesOf, type KnownPods } from "./drain-targets.js";
import {
  hasReadinessGate,
  nameOf,
  podIPsOf,
  splitKey,
  uidOf,
  type KubeObject,
  type ObjectCache,
  type PodObject,
  type PolicyObject,
  type ServiceObject,
} from "./kube-objects.js";
import { parsePolicy, type ParsedPolicy } from "./parsed-policy.js";
import type { PolicyStatusPart, StatusReport } from "./policy-status.js";
import { shadowOf, type ShadowView } from "./kubelet-shadow.js";
import { MISSING_SECRET_RETRY_MS, type ProbeTargets, type Selection } from "./probe-targets.js";
import type { ReadinessGates } from "./readiness-gates.js";
import type { ReplacementOutcomes } from "./replacement-outcomes.js";
import { gateHolders, holderOf } from "./gate-holders.js";
import type { Rollouts } from "./rollouts.js";
import type { Diagnostics } from "./diagnostics.js";
import { serviceEndpointsOf } from "./service-endpoints.js";
import type { ServiceOwnership } from "./service-ownership.js";

/** What the leader does and the status reports, from the drain plan. */
interface ActPlan {
  drain: DrainPlan;
  notProbed: ReadonlyMap<string, string>;
  quarantines: ReadonlyMap<string, QuarantineVerdict>;
  timeoutCapped: string | undefined;
  gate?: { ungated: string[]; serviceEndpoints?: ServiceEndpoints };
}

/** How soon to look again when the slice cache has not caught up with our own writes (its watch event usually comes first). */
const STALE_SLICES_RETRY_MS = 1_000;

export interface PolicyReconcilerOptions {
  policies: ObjectCache<PolicyObject>;
  services: ObjectCache<ServiceObject>;
  /** Kubernetes' own EndpointSlices (see service-endpoints.ts). */
  builtInSlices: ObjectCache<KubeObject>;
  ownership: ServiceOwnership;
  probeTargets: ProbeTargets;
  endpoints: Endpoints;
  gates: ReadinessGates;
  /** The replacement controller's last outcome for each policy, which status reports. */
  replacements: Pick<ReplacementOutcomes, "outcomeOf">;
  rollouts: Rollouts;
  /** Retention of the diagnostics ConfigMaps, and what status lists of them. */
  diagnostics?: Pick<Diagnostics, "retain"> | undefined;
  status: PolicyStatusPart;
  health: HealthStore;
  metrics?: Pick<OperatorMetrics, "forgetPolicy"> | undefined;
  clock: Clock;
  logger: Logger;
  /** Only the leader writes; everyone probes and evaluates, so a takeover starts warm. */
  isLeader: () => boolean;
}

export class PolicyReconciler {
  constructor(private readonly o: PolicyReconcilerOptions) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const log = this.o.logger.child({ policy: key, reconcileId: newReconcileId() });
    log.debug({}, "reconcile started");
    const obj = this.o.policies.get(namespace, name);
    if (!obj || obj.metadata?.deletionTimestamp) return this.forget(key);
    const now = this.o.clock.now();
    const parsed = parsePolicy(obj);
    if (!parsed.ok) {
      this.o.probeTargets.stop(key);
      return this.o.status.write(
        log,
        obj as ParsedPolicy["obj"],
        { readiness: { reason: "InvalidSpec", message: parsed.message } },
        now,
      );
    }
    const policy = parsed.policy;
    const serviceName = policy.spec.serviceName;
    const gated = policy.spec.drain.method === "ReadinessGate";
    const problem =
      gated || serviceName === undefined ? undefined : this.o.ownership.problemFor(namespace, name, serviceName);
    const whenAllUnhealthy = policy.spec.drain.whenAllUnhealthy;
    if (problem) {
      this.o.probeTargets.stop(key);
      return this.o.status.write(log, policy.obj, { readiness: problem, whenAllUnhealthy }, now);
    }

    // Probes first: a Secret that cannot be read stops this policy only, with the field named.
    const selection = this.o.probeTargets.select(key, namespace, policy.spec);
    const probes = await this.o.probeTargets.plan(namespace, name, policy.spec, selection.targets);
    if (!probes.ok) {
      this.o.probeTargets.stop(key);
      // A missing Secret, one that does not allow this policy, or one the operator may not read is
      // not an invalid spec: Ready=False, SecretNotFound, SecretNotPermitted or SecretForbidden, until it heals.
      const reason = probes.reason === "PortNotResolved" ? "InvalidSpec" : probes.reason;
      if (!gated) await this.letGo(log, namespace, serviceName!, selection);
      const result = await this.o.status.write(
        log,
        policy.obj,
        { readiness: { reason, message: `${probes.field}: ${probes.message}` }, whenAllUnhealthy },
        now,
      );
      // Nothing wakes the policy when the Secret is created or annotated: retry, so it heals by itself.
      return { requeueAfterMs: Math.min(result?.requeueAfterMs ?? MISSING_SECRET_RETRY_MS, MISSING_SECRET_RETRY_MS) };
    }
    const probing = this.o.probeTargets.start(key, policy.obj, policy.spec, selection.targets, probes.targets, now);
    // When fail-open (fail-closed for a policy that fails closed: its condition stands in for
    // FailOpen) last ended: a verdict from before it drains nothing (nor replaces anything: replacement-controller.ts).
    const lastOutage = this.o.status.lastCondition(policy.obj, whenAllUnhealthy);
    const known: KnownPods = {
      probing,
      notProbed: probes.notProbed,
      recoveredAt: computeRecoveredAt(lastOutage, now),
      quarantines: quarantinesOf(this.o.health, policy, selection.targets, now),
      timeoutCapped: probes.timeoutCapped,
    };
    if (gated) return this.reconcileGated(log, policy, selection, known, now);
    return this.reconcileSlices(log, policy, selection, known, now);
  }

  /** Drain through the Service's EndpointSlices, which the operator writes. */
  private async reconcileSlices(
    log: Logger,
    policy: ParsedPolicy,
    selection: Selection,
    known: KnownPods,
    now: number,
  ): Promise<ReconcileResult> {
    const namespace = policy.obj.metadata.namespace;
    const serviceName = policy.spec.serviceName!;
    const slices = this.o.endpoints.current(namespace, serviceName);
    const drain = planSliceDrain(this.o.health, policy, selection, slices, known);
    this.recheck(policy.key, drain);
    // No slice and no replacement is planned from a slice cache older than our own writes; its
    // watch event wakes the policy again (the status, which does not depend on it, goes on).
    const stale = this.o.isLeader() && this.o.endpoints.isStale(namespace, serviceName, slices);
    const service = this.o.services.get(namespace, serviceName)!;
    const rotate = stale
      ? undefined
      : () =>
          this.o.endpoints.apply(log, {
            service,
            pods: selection.selected,
            admitted: admittedBy(policy, drain),
            existing: slices,
          });
    const result = await this.act(
      log,
      policy,
      selection,
      rotate,
      {
        drain,
        notProbed: known.notProbed,
        quarantines: known.quarantines,
        timeoutCapped: known.timeoutCapped,
      },
      now,
    );
    return stale
      ? { requeueAfterMs: Math.min(result?.requeueAfterMs ?? STALE_SLICES_RETRY_MS, STALE_SLICES_RETRY_MS) }
      : result;
  }

  /**
   * A policy that cannot probe lets go of its Service: the endpoints follow kubelet readiness
   * until it probes again, never frozen with its last verdicts (pods it drained kept out, pods
   * created since never listed). A slice cache behind our writes waits for its watch event.
   */
  private async letGo(log: Logger, namespace: string, serviceName: string, selection: Selection): Promise<void> {
    const service = this.o.services.get(namespace, serviceName);
    const slices = this.o.endpoints.current(namespace, serviceName);
    if (!service || !this.o.isLeader() || this.o.endpoints.isStale(namespace, serviceName, slices)) return;
    await this.o.endpoints.apply(log, { service, pods: selection.selected, admitted: () => true, existing: slices });
  }

  /**
   * Drain method ReadinessGate: the same drain plan over the selected pods, carried out through the
   * pod condition healthprobe.io/ready. A pod that cannot be written is retried (the error is
   * thrown after the status is written), and never holds the others back.
   */
  private async reconcileGated(
    log: Logger,
    policy: ParsedPolicy,
    selection: Selection,
    known: KnownPods,
    now: number,
  ): Promise<ReconcileResult> {
    const namespace = policy.obj.metadata.namespace;
    const { drain, gate: conditions } = planGateDrain({
      pods: selection.targets.map((p) => gateDrainPod(this.o.health, this.o.gates, policy, p, known)),
      maxUnhealthyPercent: policy.spec.drain.maxUnhealthyPercent,
      drainEnabled: policy.spec.drain.enabled,
      dryRun: policy.spec.dryRun,
      recoveredAt: known.recoveredAt,
      whenAllUnhealthy: policy.spec.drain.whenAllUnhealthy,
    });
    this.recheck(policy.key, drain);
    let failed: unknown;
    const rotate = async () => {
      try {
        // Pods an older ReadinessGate policy holds are that policy's to write.
        const holders = gateHolders(this.o.policies, namespace);
        const mine = selection.targets.filter((p) => holderOf(holders, p) === policy.key);
        await this.o.gates.apply(log, namespace, mine, conditions.patches);
      } catch (err) {
        failed = err;
      }
    };
    const ungated = selection.selected
      .filter((p) => !p.metadata?.deletionTimestamp && !hasReadinessGate(p))
      .map(nameOf);
    const serviceName = policy.spec.serviceName;
    const gate = {
      ungated,
      ...(serviceName ? { serviceEndpoints: serviceEndpointsOf(this.o.builtInSlices, namespace, serviceName) } : {}),
    };
    const plan: ActPlan = {
      drain,
      notProbed: known.notProbed,
      quarantines: known.quarantines,
      timeoutCapped: known.timeoutCapped,
      gate,
    };
    const result = await this.act(log, policy, selection, rotate, plan, now);
    if (failed !== undefined) throw failed;
    return result;
  }

  /** Recovery sweep: pods still Unhealthy from the outage are probed again now, and the policy looks again at their next result. */
  private recheck(key: string, drain: DrainPlan): void {
    if (drain.recheck.length === 0) return;
    this.o.health.wakeOnNextResult(key, drain.recheck);
    this.o.probeTargets.probeNow(key, drain.recheck);
  }

  /** The leader's writes (rotation; `rotate` undefined on a stale cache), then the status everyone computes. */
  private async act(
    log: Logger,
    policy: ParsedPolicy,
    selection: Selection,
    rotate: (() => Promise<void>) | undefined,
    plan: ActPlan,
    now: number,
  ): Promise<ReconcileResult> {
    const { drain, notProbed } = plan;
    const namespace = policy.obj.metadata.namespace;
    // A Deployment's newest ReplicaSet failing while an older one is Healthy: its pods are not replaced.
    const rollouts = this.o.rollouts.suspects(policy.key, namespace, selection.targets);
    if (this.o.isLeader() && rotate) await rotate();
    const shadow = shadowOf(policy, selection.targets, this.o.health, now);
    const pods = this.statusPods(policy, selection.targets, drain, notProbed, plan.quarantines, shadow);
    this.o.status.recordTargets(policy.key, pods, drain);
    const report: StatusReport = {
      readiness: { reason: "Reconciled", ...(plan.timeoutCapped !== undefined ? { notes: [plan.timeoutCapped] } : {}) },
      pods,
      drain,
      rollouts,
    };
    if (plan.gate)
      report.gateMissing = {
        ungated: plan.gate.ungated,
        selected: selection.selected.filter((p) => !p.metadata?.deletionTimestamp).length,
      };
    const kept = await this.o.diagnostics?.retain(log, policy, now, this.o.isLeader());
    if (kept) report.diagnostics = kept.diagnostics;
    if (plan.gate?.serviceEndpoints) report.serviceEndpoints = plan.gate.serviceEndpoints;
    if (this.o.isLeader()) this.reportReplacement(policy, report);
    const result = await this.o.status.write(log, policy.obj, report, now);
    const requeues = [
      result?.requeueAfterMs,
      shadow.nextAt !== undefined ? shadow.nextAt - now : undefined,
      kept?.requeueAt !== undefined ? kept.requeueAt - now : undefined,
    ];
    // So is the end of a flap quarantine: the pod returns to rotation then.
    for (const q of plan.quarantines.values()) requeues.push(q.until - now);
    const delays = requeues.filter((d): d is number => d !== undefined && d >= 0);
    return delays.length > 0 ? { requeueAfterMs: Math.max(1, Math.min(...delays)) } : undefined;
  }

  /** What the replacement controller last decided, and its ledger (both kept as written until it has run). */
  private reportReplacement(policy: ParsedPolicy, report: StatusReport): void {
    const outcome = this.o.replacements.outcomeOf(policy.key);
    report.replacementCondition = outcome?.condition ?? "unchanged";
    if (outcome?.ledger) report.ledger = outcome.ledger;
  }

  private statusPods(
    policy: ParsedPolicy,
    targets: readonly PodObject[],
    drain: DrainPlan,
    notProbed: ReadonlyMap<string, string>,
    quarantines: ReadonlyMap<string, QuarantineVerdict>,
    shadow: ShadowView,
  ): StatusPodInput[] {
    return targets.map((p) => {
      const uid = uidOf(p);
      const h = this.o.health.get(policy.key, uid)!;
      const input: StatusPodInput = { name: nameOf(p), uid, ip: podIPsOf(p)[0] ?? "", health: h };
      const why = notProbed.get(uid);
      if (why !== undefined) input.notProbed = why;
      const d = drain.decisions.get(uid);
      if (d) input.decision = d;
      const quarantine = quarantines.get(uid);
      if (quarantine) input.quarantinedUntil = quarantine.until;
      const disagreement = shadow.reportable.get(uid);
      if (disagreement) input.disagreement = disagreement;
      if (policy.spec.replacement.enabled && h.state === "Unhealthy") {
        const after = computeReplaceAfter(h.unhealthySince, policy.afterMs);
        if (after !== undefined) input.replaceAfter = after;
        // dryRun replaces nothing, and says when it would have.
        if (after !== undefined && policy.spec.dryRun && input.decision)
          input.decision = {
            ...input.decision,
            reason: `${input.decision.reason}; would be replaced at ${formatInstant(after)}`,
          };
      }
      return input;
    });
  }

  private forget(key: string): ReconcileResult {
    this.o.probeTargets.forget(key);
    this.o.status.forget(key);
    void this.o.metrics?.forgetPolicy(key);
    return;
  }
}

/** Whether the policy admits a selected pod to rotation. */
function admittedBy(policy: ParsedPolicy, drain: DrainPlan): (uid: string) => boolean {
  const previous = new Map(
    ((policy.obj.status?.pods ?? []) as Array<{ uid: string; state: string; drained?: boolean }>).map((p) => [
      p.uid,
      p,
    ]),
  );
  return (uid) => {
    const d = drain.decisions.get(uid);
    if (d) return d.admitted;
    // Not a target (terminating, not running): keep what it last had, never newly admit.
    const prev = previous.get(uid);
    return prev !== undefined && prev.state === "Healthy" && !prev.drained;
  };
}
