// The policy's conditions, each computed from the status inputs and the pods as reported: what
// it says, why, and in which order.
import { compareStrings } from "./drain.js";
import type { ConditionInput } from "./conditions.js";
import { rolloutConditionMessage, type RolloutSuspect } from "./rollout.js";
import { disagreesWithKubelet } from "./kubelet-disagreement.js";
import type {
  GateMissingInput,
  ReadyReason,
  ReplacementBlockedInput,
  StatusInput,
  StatusPod,
  StatusPodInput,
} from "./status.js";

export const CONDITION_ORDER = [
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
export const METHOD_CONDITIONS = ["GateMissing"];

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

export function computeConditionInputs(input: StatusInput, pods: readonly StatusPod[]): ConditionInput[] {
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
