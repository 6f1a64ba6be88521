// Drain method ReadinessGate: the drain plan (drain.ts) turned into the pod condition
// healthprobe.io/ready on each selected pod. The kubelet folds that condition into the pod's
// Ready for pods that carry the readiness gate, and every EndpointSlice controller then follows.
import {
  compareStrings,
  planDrain,
  type DrainDecision,
  type DrainInput,
  type DrainPlan,
  type DrainTarget,
} from "./drain.js";

export type GateReason = "Admitted" | "Unhealthy" | "WarmingUp" | "Quarantined" | "NoPolicy";

/** The condition as the operator writes it: True admits the pod, False keeps it out. */
export interface GateCondition {
  status: "True" | "False";
  reason: GateReason;
  message: string;
}

/** What the planner needs of one selected pod. */
export interface GatePod {
  uid: string;
  name: string;
  /** The pod lists the readiness gate healthprobe.io/ready (spec.readinessGates, fixed at creation). */
  gated: boolean;
  /** Its healthprobe.io/ready condition as it stands; undefined when it has none. */
  condition?: { status: string; reason?: string; message?: string } | undefined;
}

export interface GatePatch {
  uid: string;
  name: string;
  condition: GateCondition;
  /** The status changes (or the condition is new): lastTransitionTime moves. */
  transition: boolean;
}

export interface GatePlanInput {
  pods: readonly GatePod[];
  drain: Pick<DrainPlan, "decisions" | "warmUp" | "mode">;
  /** Pods the drain plan keeps out as flapping (reason Quarantined); none when absent. */
  quarantined?: ReadonlySet<string>;
}

export interface GatePlan {
  /** Conditions to write, by pod name: only those that differ from what the pod has. */
  patches: GatePatch[];
  /** Selected pods without the readiness gate, by name: they cannot be drained. */
  ungated: string[];
}

/** A pod condition message is kept short: it is shown by kubectl describe. */
const MAX_MESSAGE = 1024;

/**
 * The conditions to write.
 *
 * - A gated pod with a decision gets True (reason Admitted) when the plan admits it, else False
 *   with Quarantined, WarmingUp (never in rotation, waiting for its first success) or Unhealthy;
 *   the message is the verdict.
 * - Only a condition that differs (status, reason or message) is written.
 * - dryRun writes nothing; neither does a pod without a decision (not Running, no IP,
 *   terminating): it keeps what it has, as in the EndpointSlice method.
 * - A pod without the gate gets nothing (the kubelet would ignore it) and is listed in `ungated`.
 */
export function planGateConditions(input: GatePlanInput): GatePlan {
  const patches: GatePatch[] = [];
  const ungated: string[] = [];
  const warmUp = new Set(input.drain.warmUp);
  for (const pod of [...input.pods].sort((a, b) => compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid))) {
    if (!pod.gated) {
      ungated.push(pod.name);
      continue;
    }
    const decision = input.drain.decisions.get(pod.uid);
    if (input.drain.mode === "dryRun" || decision === undefined) continue;
    const wanted = gateConditionFor(decision, {
      warmingUp: warmUp.has(pod.uid),
      quarantined: input.quarantined?.has(pod.uid) ?? false,
    });
    const have = pod.condition;
    if (have && have.status === wanted.status && have.reason === wanted.reason && have.message === wanted.message)
      continue;
    patches.push({ uid: pod.uid, name: pod.name, condition: wanted, transition: have?.status !== wanted.status });
  }
  return { patches, ungated };
}

export function gateConditionFor(
  decision: DrainDecision,
  why: { warmingUp: boolean; quarantined: boolean },
): GateCondition {
  const message =
    decision.reason.length > MAX_MESSAGE ? `${decision.reason.slice(0, MAX_MESSAGE - 1)}…` : decision.reason;
  if (decision.admitted) return { status: "True", reason: "Admitted", message };
  const reason: GateReason = why.quarantined ? "Quarantined" : why.warmingUp ? "WarmingUp" : "Unhealthy";
  return { status: "False", reason, message };
}

/** What tells whether a pod is in rotation now, with the gate. */
export interface GateServingInput {
  gated: boolean;
  /** The pod's own Ready condition (for a pod without the gate, what the endpoints follow). */
  podReady: boolean;
  /** Ready but for the gate: ContainersReady and every other readiness gate True. */
  readyBesidesGate: boolean;
  /** Status of the healthprobe.io/ready condition; undefined when the pod has none. */
  gateStatus: string | undefined;
  /** The operator has state for the pod (see ServingInput.known in drain.ts). */
  known: boolean;
}

/**
 * Adoption with the gate: a gated pod is serving when its condition is True, or when it has
 * none, is ready but for the gate and the operator has no state for it (a new policy, a
 * restart). A False condition is the operator's own verdict: not serving. A pod without the
 * gate is serving as its Ready says.
 */
export function isGateServing(input: GateServingInput): boolean {
  if (!input.gated) return input.podReady;
  if (input.gateStatus === "True") return true;
  return input.gateStatus === undefined && input.readyBesidesGate && !input.known;
}

/** The note on the decision of a pod the plan would keep out but that has no gate. */
export const UNGATED_NOTE = "the pod has no readiness gate healthprobe.io/ready, so it cannot be kept out";

/**
 * The plan as it can be carried out: a pod without the gate cannot be kept out, so a decision
 * not to admit it becomes admitted (drained false), saying what it would have been; an admitted
 * one says it could not be drained. Its place in the cap stays taken (fewer pods drained, never more).
 */
export function withoutUngatedDrains(plan: DrainPlan, ungatedUids: ReadonlySet<string>): DrainPlan {
  if (ungatedUids.size === 0) return plan;
  const decisions = new Map<string, DrainDecision>();
  for (const [uid, d] of plan.decisions) {
    if (!ungatedUids.has(uid)) decisions.set(uid, d);
    else if (d.admitted) decisions.set(uid, { ...d, reason: `${d.reason}; ${UNGATED_NOTE}` });
    else decisions.set(uid, { admitted: true, drained: false, reason: `kept: ${UNGATED_NOTE} (would be ${d.reason})` });
  }
  const drainedCount = [...decisions.values()].filter((d) => d.drained).length;
  return { ...plan, decisions, drainedCount };
}

/** One selected target as the ReadinessGate method sees it. */
export interface GateDrainPod
  extends
    Omit<DrainTarget, "kubeletReady" | "serving" | "outOfRotation">,
    Omit<GatePod, "condition">,
    Omit<GateServingInput, "gateStatus"> {
  condition?: GatePod["condition"];
}

export interface GateDrainInput extends Omit<DrainInput, "targets"> {
  pods: readonly GateDrainPod[];
  quarantined?: ReadonlySet<string>;
}

/**
 * The drain plan over the policy's targets, and the conditions that carry it out. "Kubelet-Ready"
 * in the cap, fail-open and never-dark rules is Ready but for the gate (readyBesidesGate): the
 * pod's own Ready includes the operator's condition, and would feed the operator's verdict back
 * into its next decision (a drained pod would no longer count as one kept out, and the cap would
 * let the next one go).
 */
export function planGateDrain(input: GateDrainInput): { drain: DrainPlan; gate: GatePlan } {
  const { pods, quarantined, ...settings } = input;
  const targets = pods.map((p): DrainTarget => {
    const t: DrainTarget = {
      uid: p.uid,
      name: p.name,
      state: p.state,
      kubeletReady: p.gated ? p.readyBesidesGate : p.podReady,
      serving: isGateServing({
        gated: p.gated,
        podReady: p.podReady,
        readyBesidesGate: p.readyBesidesGate,
        gateStatus: p.condition?.status,
        known: p.known,
      }),
      outOfRotation: p.gated && p.condition?.status === "False",
    };
    if (p.unhealthySince !== undefined) t.unhealthySince = p.unhealthySince;
    if (p.lastResultAt !== undefined) t.lastResultAt = p.lastResultAt;
    if (p.notProbed !== undefined) t.notProbed = p.notProbed;
    if (p.quarantine !== undefined) t.quarantine = p.quarantine;
    return t;
  });
  const drain = withoutUngatedDrains(
    planDrain({ ...settings, targets }),
    new Set(pods.filter((p) => !p.gated).map((p) => p.uid)),
  );
  // Pods held out by flap quarantine get reason Quarantined (the drain plan lists them).
  const gate = planGateConditions({ pods, drain, quarantined: quarantined ?? new Set(drain.quarantined) });
  return { drain, gate };
}

/** A pod with the gate as the release sees it. */
export interface ReleasePod extends GatePod {
  /** A live ReadinessGate policy that is not in dryRun selects the pod: its verdict stands. */
  held: boolean;
  terminating: boolean;
}

export const RELEASE_MESSAGE =
  "admitted: no HealthProbePolicy with drain method ReadinessGate (not in dryRun, able to probe) selects this pod";

/**
 * Never leave a pod out for a policy that no longer holds it (deleted, switched to EndpointSlice
 * or dryRun, invalid, or no longer selecting the pod): a pod with the gate that no policy holds
 * gets True (reason NoPolicy) when its condition is False or missing. A True condition is left
 * as it is (no write), and so is a terminating pod.
 */
export function planGateRelease(pods: readonly ReleasePod[]): GatePatch[] {
  return [...pods]
    .filter((p) => p.gated && !p.held && !p.terminating && p.condition?.status !== "True")
    .sort((a, b) => compareStrings(a.name, b.name) || compareStrings(a.uid, b.uid))
    .map((p) => ({
      uid: p.uid,
      name: p.name,
      condition: { status: "True", reason: "NoPolicy", message: RELEASE_MESSAGE },
      transition: true,
    }));
}
