import { compareStrings, type DrainPlan, type WhenAllUnhealthy } from "./drain.js";
import { setStatusCondition } from "./conditions.js";
import type { RolloutSuspect } from "./rollout.js";
import type { DisagreementKind } from "./kubelet-disagreement.js";
import type { BlockedReason } from "./replacement-checks.js";
import { CONDITION_ORDER, METHOD_CONDITIONS, computeConditionInputs } from "./status-conditions.js";
import { fromRfc3339, toRfc3339 } from "./status-time.js";
import type { Condition, EpochMs, HealthStateName } from "./types.js";

export { statusEqual } from "./status-equal.js";
export { FAIL_OPEN_NOT_PROBED } from "./status-conditions.js";

export const MAX_STATUS_PODS = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface StatusPod {
  name: string;
  uid: string;
  ip: string;
  state: HealthStateName;
  since: string;
  drained: boolean;
  lastResult?: string;
  unhealthySince?: string;
  replaceAfter?: string;
  /** While the pod is quarantined for flapping: when it ends. */
  quarantinedUntil?: string;
  reason: string;
  disagreesWithKubelet?: { since: string; kind: DisagreementKind };
}

/** One ledger entry, passed through untouched (the replacement core owns its meaning). */
export interface StatusReplacement {
  pod: string;
  uid: string;
  time: string;
  method: string;
}

export interface PolicyStatus {
  observedGeneration: number;
  conditions: Condition[];
  targets: number;
  healthy: number;
  unhealthy: number;
  unknown: number;
  drained: number;
  replacedInLastDay: number;
  /** Drain method ReadinessGate with a serviceName: its endpoints as the built-in controller writes them. */
  serviceEndpoints?: ServiceEndpoints;
  pods: StatusPod[];
  replacements: StatusReplacement[];
  /** Diagnostics ConfigMaps kept for replaced pods, newest first; absent when there are none. */
  diagnostics?: StatusDiagnostics[];
  /** With shards on: the replica acting on the policy's namespace. */
  shard?: string;
}

export interface StatusDiagnostics {
  pod: string;
  configMap: string;
  time: string;
}

export interface ServiceEndpoints {
  name: string;
  ready: number;
  total: number;
}

export type ReadyReason =
  | "Reconciled"
  | "InvalidSpec"
  | "ServiceNotFound"
  | "ServiceHasSelector"
  | "ServiceClaimed"
  | "SecretNotFound"
  | "SecretNotPermitted"
  | "SecretForbidden"
  | "NotSynced";

/** Why the policy is (not) Ready. Reconciled -> True, NotSynced -> Unknown, the rest -> False. */
export interface ReadinessInput {
  reason: ReadyReason;
  /** Defaults to a sentence for the reason; InvalidSpec should name the field. */
  message?: string;
  /** What the operator changed of the spec as it runs it (a timeoutSeconds over --max-probe-timeout), each naming the field: added to the message. */
  notes?: readonly string[];
}

/** The reasons the replacement chain blocks with (replacement-checks.ts). */
export type ReplacementBlockedReason = BlockedReason;

export interface ReplacementBlockedInput {
  blocked: boolean;
  reason?: ReplacementBlockedReason;
  message?: string;
}

export interface StatusPodInput {
  name: string;
  uid: string;
  ip: string;
  /** The health record (or anything with these fields). */
  health: { state: HealthStateName; since: EpochMs; unhealthySince?: EpochMs; stateResult?: string };
  /** From the drain plan; a pod without a decision is reported as not drained. */
  decision?: { drained: boolean; reason: string };
  /** When the replacement window ends, from the replacement core. */
  replaceAfter?: EpochMs;
  /** Why the pod is not probed (its named probe port does not resolve); listed in Ready's message. */
  notProbed?: string;
  /** When the pod's flap quarantine ends, while it lasts. */
  quarantinedUntil?: EpochMs;
  /** A disagreement with kubelet readiness that has lasted one period (the shadow report). */
  disagreement?: { kind: DisagreementKind; since: EpochMs };
}

export interface StatusInput {
  generation: number;
  /** With shards on: the identity of the replica writing, which owns the namespace. */
  shard?: string;
  now: EpochMs;
  /** The status as last written: keeps condition transition times. */
  previous?: Pick<PolicyStatus, "conditions"> | undefined;
  readiness: ReadinessInput;
  pods: readonly StatusPodInput[];
  drain?:
    | (Pick<DrainPlan, "failOpen" | "capped" | "allowed" | "mode" | "maxUnhealthyPercent" | "wouldDrain"> &
        Partial<Pick<DrainPlan, "failClosed" | "whenAllUnhealthy">>)
    | undefined;
  /** spec.drain.whenAllUnhealthy, when there is no drain plan: FailClosed reports a FailClosed condition in place of FailOpen. */
  whenAllUnhealthy?: WhenAllUnhealthy;
  replacements?: readonly StatusReplacement[];
  replacementBlocked?: ReplacementBlockedInput;
  /** Drain method ReadinessGate: the selected pods without the readiness gate (GateMissing); absent otherwise. */
  gateMissing?: GateMissingInput;
  /** Suspect rollouts among the targets (rollout.ts): the RolloutSuspect condition. */
  rolloutSuspects?: readonly RolloutSuspect[];
  /** Diagnostics ConfigMaps kept, newest first, as the retention plan keeps them. */
  diagnostics?: readonly StatusDiagnostics[];
  serviceEndpoints?: ServiceEndpoints;
}

export interface GateMissingInput {
  /** Names of the selected pods without the gate. */
  ungated: readonly string[];
  /** Selected pods, not terminating. */
  selected: number;
}

/**
 * The whole status of a policy from plain inputs. Every time in the output comes from
 * the inputs, so the same inputs give a deep-equal status: compare with statusEqual and
 * write only on a difference.
 *
 * When the policy is not Ready, the other conditions are Unknown (reason NotEvaluated):
 * nothing is decided for a policy that is not running.
 */
export function computeStatus(input: StatusInput): PolicyStatus {
  const gen = input.generation;
  const pods = input.pods.map(toStatusPod).sort(nonHealthyFirst);
  const count = (s: HealthStateName) => pods.filter((p) => p.state === s).length;
  const replacements = [...(input.replacements ?? [])];
  const dayAgo = input.now - DAY_MS;
  const replacedInLastDay = replacements.filter(
    (r) => (fromRfc3339(r.time) ?? Number.NEGATIVE_INFINITY) > dayAgo,
  ).length;

  const wanted = computeConditionInputs(input, pods);
  const previous = input.previous?.conditions ?? [];
  let conditions: Condition[] = previous.filter(
    (c) => !CONDITION_ORDER.includes(c.type) && !METHOD_CONDITIONS.includes(c.type),
  );
  const ours: Condition[] = [];
  for (const c of wanted) {
    const set = setStatusCondition(previous, c, gen, input.now);
    ours.push(set.find((x) => x.type === c.type)!);
  }
  conditions = [...ours, ...conditions.sort((a, b) => compareStrings(a.type, b.type))];

  const status: PolicyStatus = {
    observedGeneration: gen,
    conditions,
    targets: pods.length,
    healthy: count("Healthy"),
    unhealthy: count("Unhealthy"),
    unknown: count("Unknown"),
    drained: pods.filter((p) => p.drained).length,
    replacedInLastDay,
    pods: pods.slice(0, MAX_STATUS_PODS),
    replacements,
  };
  if (input.serviceEndpoints) status.serviceEndpoints = { ...input.serviceEndpoints };
  if (input.diagnostics && input.diagnostics.length > 0) status.diagnostics = [...input.diagnostics];
  if (input.shard !== undefined) status.shard = input.shard;
  return status;
}

function toStatusPod(p: StatusPodInput): StatusPod {
  const out: StatusPod = {
    name: p.name,
    uid: p.uid,
    ip: p.ip,
    state: p.health.state,
    since: toRfc3339(p.health.since),
    drained: p.decision?.drained ?? false,
    reason: p.decision?.reason ?? "",
  };
  if (p.health.stateResult !== undefined) out.lastResult = p.health.stateResult;
  if (p.health.state === "Unhealthy" && p.health.unhealthySince !== undefined) {
    out.unhealthySince = toRfc3339(p.health.unhealthySince);
  }
  if (p.replaceAfter !== undefined) out.replaceAfter = toRfc3339(p.replaceAfter);
  if (p.quarantinedUntil !== undefined) out.quarantinedUntil = toRfc3339(p.quarantinedUntil);
  if (p.disagreement) out.disagreesWithKubelet = { since: toRfc3339(p.disagreement.since), kind: p.disagreement.kind };
  return out;
}

const STATE_RANK: Record<HealthStateName, number> = { Unhealthy: 0, Unknown: 1, Healthy: 2 };

/** Unhealthy, then Unknown, then Healthy; by name, then uid. */
function nonHealthyFirst(a: StatusPod, b: StatusPod): number {
  return STATE_RANK[a.state] - STATE_RANK[b.state] || compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid);
}
