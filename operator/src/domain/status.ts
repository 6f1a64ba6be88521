import { compareStrings, type DrainPlan, type WhenAllUnhealthy } from "./drain.js";
import { setStatusCondition, type ConditionInput } from "./conditions.js";
import { rolloutConditionMessage, type RolloutSuspect } from "./rollout.js";
import { disagreesWithKubelet, type DisagreementKind } from "./kubelet-disagreement.js";
import { fromRfc3339, toRfc3339 } from "./status-time.js";
import type { Condition, EpochMs, HealthStateName } from "./types.js";

export { statusEqual } from "./status-equal.js";

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

export type ReplacementBlockedReason =
  "Budget" | "PodDisruptionBudget" | "Veto" | "NoController" | "FailOpen" | "FailClosed" | "MassFailure" | "Rollout";

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

const CONDITION_ORDER = [
  "Ready",
  "Degraded",
  "FailOpen",
  "FailClosed",
  "DrainCapped",
  "ReplacementBlocked",
  "RolloutSuspect",
  "DisagreesWithKubelet",
];
/** Conditions of one drain method only: dropped when the policy uses the other one. */
const METHOD_CONDITIONS = ["GateMissing"];

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

const READY_MESSAGES: Record<ReadyReason, string> = {
  Reconciled: "spec valid, Service found and selector-less, probing running",
  InvalidSpec: "the spec is invalid",
  ServiceNotFound: "the Service does not exist",
  ServiceHasSelector: "the Service has a spec.selector: its endpoints belong to the built-in controller",
  ServiceClaimed: "another HealthProbePolicy already manages this Service",
  SecretNotFound: "a Secret the probe needs does not exist; retrying",
  SecretNotPermitted:
    "a Secret the probe needs does not allow this policy (annotation healthprobe.io/allowed-policies); retrying",
  SecretForbidden: "the API server refuses the operator a Secret the probe needs (403 Forbidden); retrying",
  NotSynced: "waiting for the caches to sync",
};

function computeConditionInputs(input: StatusInput, pods: readonly StatusPod[]): ConditionInput[] {
  const r = input.readiness;
  const readyStatus = r.reason === "Reconciled" ? "True" : r.reason === "NotSynced" ? "Unknown" : "False";
  const readyMessage = [r.message ?? READY_MESSAGES[r.reason], ...(r.notes ?? [])].join("; ");
  const ready: ConditionInput = {
    type: "Ready",
    status: readyStatus,
    reason: r.reason,
    message: withNotProbed(readyMessage, input.pods),
  };
  // A policy that fails closed reports FailClosed in place of FailOpen: it never fails open.
  const closed = (input.drain?.whenAllUnhealthy ?? input.whenAllUnhealthy) === "FailClosed";
  if (readyStatus !== "True") {
    const message = `not evaluated: the policy is not Ready (${r.reason})`;
    return [
      ready,
      ...CONDITION_ORDER.slice(1)
        .filter((type) => type !== (closed ? "FailOpen" : "FailClosed"))
        .map((type): ConditionInput => ({ type, status: "Unknown", reason: "NotEvaluated", message })),
    ];
  }
  const all = [
    ready,
    degraded(pods),
    closed ? failClosed(input, pods) : failOpen(input, pods),
    drainCapped(input),
    replacementBlocked(input.replacementBlocked),
    rolloutSuspect(input.rolloutSuspects),
    disagreesWithKubelet(pods, listNames),
  ];
  if (input.gateMissing) all.push(gateMissing(input.gateMissing));
  return all;
}

/** GateMissing: selected pods the ReadinessGate method cannot drain, for want of the gate. */
function gateMissing(g: GateMissingInput): ConditionInput {
  if (g.ungated.length === 0) {
    return {
      type: "GateMissing",
      status: "False",
      reason: "AllPodsGated",
      message: `all ${g.selected} selected pods have the readiness gate healthprobe.io/ready`,
    };
  }
  const names = [...g.ungated].sort(compareStrings);
  return {
    type: "GateMissing",
    status: "True",
    reason: "PodsWithoutGate",
    message: `${names.length} of ${g.selected} selected pods lack readinessGates [{conditionType: healthprobe.io/ready}] and cannot be drained: ${listNames(names)}`,
  };
}

/** Targets that cannot be probed are named in Ready's message, with why. */
function withNotProbed(message: string, pods: readonly StatusPodInput[]): string {
  const notProbed = pods.filter((p) => p.notProbed !== undefined).sort((a, b) => compareStrings(a.name, b.name));
  if (notProbed.length === 0) return message;
  const noun = notProbed.length === 1 ? "target is" : "targets are";
  return `${message}; ${notProbed.length} ${noun} not probed: ${listNames(notProbed.map((p) => `${p.name} (${p.notProbed})`))}`;
}

function degraded(pods: readonly StatusPod[]): ConditionInput {
  const bad = pods.filter((p) => p.state === "Unhealthy");
  if (bad.length === 0) {
    return {
      type: "Degraded",
      status: "False",
      reason: "NoUnhealthyTargets",
      message: `no target is Unhealthy (${pods.length} targets)`,
    };
  }
  return {
    type: "Degraded",
    status: "True",
    reason: "UnhealthyTargets",
    message: `${bad.length} of ${pods.length} targets Unhealthy: ${listNames(bad.map((p) => p.name))}`,
  };
}

/** FailOpen's reason while no target has been probed yet: true, but not an outage, so no Warning. */
export const FAIL_OPEN_NOT_PROBED = "NoTargetProbedYet";

function failOpen(input: StatusInput, pods: readonly StatusPod[]): ConditionInput {
  if (input.drain?.failOpen && pods.every((p) => p.state === "Unknown")) {
    return {
      type: "FailOpen",
      status: "True",
      reason: FAIL_OPEN_NOT_PROBED,
      message: `no target probed yet: all ${pods.length} targets kept in rotation as kubelet says until their first probes`,
    };
  }
  if (input.drain?.failOpen) {
    return {
      type: "FailOpen",
      status: "True",
      reason: "NoHealthyTarget",
      message: `no target is both Healthy and kubelet-Ready: all ${pods.length} targets kept in rotation as kubelet says`,
    };
  }
  if (pods.length === 0) return { type: "FailOpen", status: "False", reason: "NoTargets", message: "no targets" };
  return { type: "FailOpen", status: "False", reason: "HealthyTargets", message: "at least one target is Healthy" };
}

function failClosed(input: StatusInput, pods: readonly StatusPod[]): ConditionInput {
  const d = input.drain;
  const nothing =
    d?.mode === "dryRun"
      ? " (dryRun: nothing is drained)"
      : d?.mode === "disabled"
        ? " (drain disabled: nothing is drained)"
        : "";
  if (d?.failClosed && pods.every((p) => p.state === "Unknown")) {
    return {
      type: "FailClosed",
      status: "True",
      reason: FAIL_OPEN_NOT_PROBED,
      message: `no target probed yet: targets in rotation stay until their first probes, new ones wait for their first success${nothing}`,
    };
  }
  if (d?.failClosed) {
    const n = d.wouldDrain.length;
    return {
      type: "FailClosed",
      status: "True",
      reason: "NoHealthyTarget",
      message:
        `no target is both Healthy and kubelet-Ready: ${n} Unhealthy ${n === 1 ? "target" : "targets"} drained whatever maxUnhealthyPercent says ` +
        `(whenAllUnhealthy=FailClosed); the Service may have no ready endpoint${nothing}`,
    };
  }
  if (pods.length === 0) return { type: "FailClosed", status: "False", reason: "NoTargets", message: "no targets" };
  return { type: "FailClosed", status: "False", reason: "HealthyTargets", message: "at least one target is Healthy" };
}

function drainCapped(input: StatusInput): ConditionInput {
  const d = input.drain;
  if (!d || d.capped.length === 0) {
    return {
      type: "DrainCapped",
      status: "False",
      reason: "WithinCap",
      message: "no Unhealthy target is kept in rotation by the cap",
    };
  }
  const dry = d.mode === "dryRun" ? " (dryRun: nothing is drained)" : "";
  return {
    type: "DrainCapped",
    status: "True",
    reason: "MaxUnhealthyPercent",
    message:
      `${d.capped.length} Unhealthy ${d.capped.length === 1 ? "target" : "targets"} kept in rotation: maxUnhealthyPercent=${d.maxUnhealthyPercent} ` +
      `allows ${d.allowed} drained${dry}`,
  };
}

function replacementBlocked(b: ReplacementBlockedInput | undefined): ConditionInput {
  if (!b?.blocked) {
    return {
      type: "ReplacementBlocked",
      status: "False",
      reason: "NotBlocked",
      message: "no due replacement is waiting",
    };
  }
  const reason = b.reason ?? "Budget";
  return {
    type: "ReplacementBlocked",
    status: "True",
    reason,
    message: b.message ?? `a due replacement is waiting: ${reason}`,
  };
}

function rolloutSuspect(suspects: readonly RolloutSuspect[] | undefined): ConditionInput {
  if (!suspects || suspects.length === 0) {
    return {
      type: "RolloutSuspect",
      status: "False",
      reason: "NoSuspectRollout",
      message: "no Deployment's newest ReplicaSet is failing while an older one is Healthy",
    };
  }
  return {
    type: "RolloutSuspect",
    status: "True",
    reason: "NewReplicaSetUnhealthy",
    message: rolloutConditionMessage(suspects),
  };
}

/** At most five names, so a large policy does not rewrite a long message on every change. */
function listNames(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(", ");
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown;
}
