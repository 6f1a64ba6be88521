// The status-and-Events part: a policy's conditions, counts and per-pod verdicts, computed by the
// core and written only when they changed, at most once per interval per policy (the leader
// only), with the Events the change calls for; and the Events and gauges of replacements.
import { API_VERSION, KIND } from "../api/group.js";
import type { DrainPlan, WhenAllUnhealthy } from "../domain/drain.js";
import { findCondition } from "../domain/conditions.js";
import { DISAGREEMENT_KINDS } from "../domain/kubelet-disagreement.js";
import { diagnosticsProblemNote, planEvents, replacedNote, type PlannedEvent } from "../domain/events.js";
import type { LedgerEntry } from "../domain/budget.js";
import { planStatusLedger } from "../domain/ledger.js";
import { newSuspects, rolloutEventNote, type RolloutSuspect } from "../domain/rollout.js";
import {
  computeStatus,
  statusEqual,
  type GateMissingInput,
  type PolicyStatus,
  type ServiceEndpoints,
  type ReadinessInput,
  type StatusDiagnostics,
  type StatusPodInput,
} from "../domain/status.js";
import type { Condition } from "../domain/types.js";
import type { Logger } from "../runtime/logger.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import type { ReconcileResult } from "../runtime/work-queue.js";
import type { EventInput, ObjectRef } from "../adapters/event-recorder.js";
import { keyOf, type NamedPolicy } from "./kube-objects.js";
import type { AttemptOutcome } from "./replacer.js";
import type { StatusVersions } from "./status-versions.js";

const DRAIN_EVENTS = new Set<string>(["Drained", "Restored", "DrainCapped", "FailOpen", "FailClosed", "Quarantined"]);

export interface PolicyStatusOptions {
  versions: StatusVersions;
  events: { record(input: EventInput): void };
  metrics?:
    Pick<OperatorMetrics, "targets" | "drainedTargets" | "quarantinedTargets" | "kubeletDisagreements"> | undefined;
  isLeader: () => boolean;
  /** Minimum spacing of status writes per policy. */
  statusIntervalMs?: number;
  /** With shards on: this replica's identity, written as status.shard. */
  shardIdentity?: string | undefined;
}

/** What a reconcile found, for the status. */
export interface StatusReport {
  readiness: ReadinessInput;
  pods?: StatusPodInput[];
  drain?: DrainPlan;
  /** spec.drain.whenAllUnhealthy when there is no drain plan (the policy is not Ready): which of FailOpen or FailClosed to report. */
  whenAllUnhealthy?: WhenAllUnhealthy;
  /** The replacement condition when the replacement part ran; "unchanged" keeps the last one written. */
  replacementCondition?: { blocked: boolean; reason: string; message: string } | "unchanged";
  /** Drain method ReadinessGate: the selected pods without the gate. */
  gateMissing?: GateMissingInput;
  /** Suspect rollouts among the targets: the RolloutSuspect condition and its Warnings. */
  rollouts?: readonly RolloutSuspect[];
  /** The policy's ledger (its ConfigMap) after the replacement part ran: status.replacements mirrors it. */
  ledger?: readonly LedgerEntry[];
  /** The diagnostics ConfigMaps kept, newest first; absent keeps what status lists. */
  diagnostics?: StatusDiagnostics[];
  /** Drain method ReadinessGate with a serviceName: its endpoints as Kubernetes serves them. */
  serviceEndpoints?: ServiceEndpoints;
}

export class PolicyStatusPart {
  constructor(private readonly o: PolicyStatusOptions) {}

  /** Writes the status when it changed (leader only, throttled); returns when to look again if throttled. */
  async write(log: Logger, obj: NamedPolicy, report: StatusReport, now: number): Promise<ReconcileResult> {
    const key = keyOf(obj);
    const over = this.o.versions.read(obj);
    const previous = over.status as PolicyStatus | undefined;
    const input: Parameters<typeof computeStatus>[0] = {
      generation: obj.metadata.generation ?? 0,
      now,
      previous,
      readiness: report.readiness,
      pods: report.pods ?? [],
      drain: report.drain,
    };
    if (this.o.shardIdentity !== undefined) input.shard = this.o.shardIdentity;
    if (report.whenAllUnhealthy !== undefined) input.whenAllUnhealthy = report.whenAllUnhealthy;
    // status.replacements mirrors the ledger ConfigMap as the replacement part last read or wrote
    // it; without one (not the leader, or the ledger unreadable) it stays as it is. An unreadable
    // one is kept as it is and, while there is no ConfigMap, blocks every replacement.
    const statusLedger = planStatusLedger(previous?.replacements, now, report.ledger);
    input.replacements = statusLedger.replacements as PolicyStatus["replacements"];
    if (report.gateMissing) input.gateMissing = report.gateMissing;
    const diagnostics = report.diagnostics ?? previous?.diagnostics;
    if (diagnostics) input.diagnostics = diagnostics;
    if (report.serviceEndpoints) input.serviceEndpoints = report.serviceEndpoints;
    const cond =
      report.replacementCondition === "unchanged" ? lastReplacementCondition(previous) : report.replacementCondition;
    if (statusLedger.unreadable !== undefined) {
      input.replacementBlocked = {
        blocked: true,
        reason: "Budget",
        message: `status.replacements cannot be read (${statusLedger.unreadable}); nothing is replaced until it can be`,
      };
    } else if (cond) {
      input.replacementBlocked = cond.blocked
        ? { blocked: true, reason: cond.reason as "Budget", message: cond.message }
        : { blocked: false, message: cond.message };
    }
    if (report.rollouts) input.rolloutSuspects = report.rollouts;
    const next = computeStatus(input);
    if (statusEqual(previous, next) || !this.o.isLeader()) return;
    const last = this.o.versions.lastWriteAt(key);
    const interval = this.o.statusIntervalMs ?? 1000;
    if (last !== undefined && now - last < interval) return { requeueAfterMs: interval - (now - last) };

    await this.o.versions.write(over, next);
    log.debug({ targets: next.targets, healthy: next.healthy, drained: next.drained }, "status written");
    for (const e of planEvents(previous, next, now)) this.emit(obj, e);
    this.announceRollouts(obj, previous, report.rollouts ?? []);
    return;
  }

  /** A Warning on the Deployment and on the policy for each suspect rollout the status did not name yet. */
  private announceRollouts(
    obj: NamedPolicy,
    previous: PolicyStatus | undefined,
    suspects: readonly RolloutSuspect[],
  ): void {
    const was = findCondition(previous?.conditions, "RolloutSuspect");
    const policyRef = policyRefOf(obj);
    for (const s of newSuspects(was?.status === "True" ? was.message : undefined, suspects)) {
      const deployment: ObjectRef = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: obj.metadata.namespace,
        name: s.deployment.name,
      };
      if (s.deployment.uid !== undefined) deployment.uid = s.deployment.uid;
      const e = {
        type: "Warning" as const,
        reason: "RolloutSuspect",
        action: "Replace",
        note: rolloutEventNote(s, keyOf(obj)),
      };
      this.o.events.record({ regarding: deployment, related: policyRef, ...e });
      this.o.events.record({ regarding: policyRef, related: deployment, ...e });
    }
  }

  /** Events for what the replacement part did. */
  recordReplacements(obj: NamedPolicy, after: string, outcomes: readonly AttemptOutcome[]): void {
    for (const o of outcomes) {
      const { podName, podUid, method } = o.attempt;
      if (o.outcome === "pdb_blocked") {
        this.podEvent(obj, podName, podUid, {
          type: "Warning",
          reason: "ReplacementBlocked",
          note: `eviction of pod ${podName} refused by a PodDisruptionBudget: ${o.message}`,
        });
      } else if (o.outcome === "evicted") {
        this.podEvent(obj, podName, podUid, {
          type: "Normal",
          reason: "Replaced",
          note: replacedNote(podName, method, after, o.diagnostics?.configMap),
        });
      }
      const problem = "diagnostics" in o && o.diagnostics ? diagnosticsProblemNote(podName, o.diagnostics) : undefined;
      if (problem)
        this.o.events.record({
          regarding: policyRefOf(obj),
          related: { apiVersion: "v1", kind: "Pod", namespace: obj.metadata.namespace, name: podName, uid: podUid },
          type: "Warning",
          reason: "DiagnosticsFailed",
          action: "Replace",
          note: problem,
        });
    }
  }

  /** A condition of the status as last written (this process's own write while the cache lags). */
  lastCondition(obj: NamedPolicy, type: string): Condition | undefined {
    return findCondition(this.o.versions.read(obj).status?.conditions, type);
  }

  recordTargets(key: string, pods: readonly StatusPodInput[], drain: DrainPlan): void {
    const m = this.o.metrics;
    if (!m) return;
    for (const state of ["Healthy", "Unhealthy", "Unknown"] as const)
      m.targets.set({ policy: key, state }, pods.filter((p) => p.health.state === state).length);
    m.drainedTargets.set({ policy: key }, drain.drainedCount);
    m.quarantinedTargets.set({ policy: key }, pods.filter((p) => p.quarantinedUntil !== undefined).length);
    for (const kind of DISAGREEMENT_KINDS)
      m.kubeletDisagreements.set({ policy: key, kind }, pods.filter((p) => p.disagreement?.kind === kind).length);
  }

  forget(key: string): void {
    this.o.versions.forget(key);
  }

  private emit(obj: NamedPolicy, e: PlannedEvent): void {
    const action = DRAIN_EVENTS.has(e.reason) ? "Drain" : e.reason === "ReplacementBlocked" ? "Replace" : "Validate";
    const policyRef = policyRefOf(obj);
    if (e.regarding === "policy") {
      this.o.events.record({ regarding: policyRef, type: e.type, reason: e.reason, action, note: e.note });
      return;
    }
    const podRef: ObjectRef = {
      apiVersion: "v1",
      kind: "Pod",
      namespace: obj.metadata.namespace,
      name: e.regarding.podName,
      uid: e.regarding.podUid,
    };
    this.o.events.record({
      regarding: podRef,
      related: policyRef,
      type: e.type,
      reason: e.reason,
      action,
      note: e.note,
    });
  }

  private podEvent(
    obj: NamedPolicy,
    podName: string,
    podUid: string,
    e: { type: "Normal" | "Warning"; reason: string; note: string },
  ): void {
    const policyRef = policyRefOf(obj);
    const podRef: ObjectRef = {
      apiVersion: "v1",
      kind: "Pod",
      namespace: obj.metadata.namespace,
      name: podName,
      uid: podUid,
    };
    this.o.events.record({ regarding: policyRef, related: podRef, action: "Replace", ...e });
    this.o.events.record({ regarding: podRef, related: policyRef, action: "Replace", ...e });
  }
}

function policyRefOf(obj: NamedPolicy): ObjectRef {
  const ref: ObjectRef = {
    apiVersion: API_VERSION,
    kind: KIND,
    namespace: obj.metadata.namespace,
    name: obj.metadata.name,
  };
  if (obj.metadata.uid) ref.uid = obj.metadata.uid;
  return ref;
}

function lastReplacementCondition(
  status: Partial<PolicyStatus> | undefined,
): { blocked: boolean; reason: string; message: string } | undefined {
  const c = status?.conditions?.find((x) => x.type === "ReplacementBlocked");
  return c ? { blocked: c.status === "True", reason: c.reason, message: c.message } : undefined;
}
