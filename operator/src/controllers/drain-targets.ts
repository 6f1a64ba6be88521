// The drain plan's targets, from the selected pods: each one's health and evidence as the health
// store holds them, its place in rotation, and its flap quarantine.
import { isServing, planDrain, type DrainPlan, type DrainTarget } from "../domain/drain.js";
import type { EndpointSliceObject } from "../domain/endpoint-slice-types.js";
import { judgeQuarantine, type QuarantineVerdict } from "../domain/flap-quarantine.js";
import type { GateDrainPod } from "../domain/gate-plan.js";
import type { HealthStore } from "../runtime/health-store.js";
import { rotationOf } from "./endpoints.js";
import { hasReadinessGate, isKubeletReady, isReadyBesidesGate, nameOf, uidOf, type PodObject } from "./kube-objects.js";
import type { ParsedPolicy } from "./parsed-policy.js";
import type { ProbingStart, Selection } from "./probe-targets.js";
import type { ReadinessGates } from "./readiness-gates.js";

/** What the operator knows of a policy's pods when it plans. */
export interface KnownPods {
  probing: ProbingStart;
  notProbed: ReadonlyMap<string, string>;
  recoveredAt: number;
  /** The targets in flap quarantine now, by uid. */
  quarantines: ReadonlyMap<string, QuarantineVerdict>;
  /** Why the probes run with a shorter timeout than the spec asks (--max-probe-timeout). */
  timeoutCapped: string | undefined;
}

/** The drain plan of a policy that drains through its Service's EndpointSlices. */
export function planSliceDrain(
  health: HealthStore,
  policy: ParsedPolicy,
  selection: Selection,
  slices: readonly EndpointSliceObject[],
  known: KnownPods,
): DrainPlan {
  const rotation = rotationOf(slices);
  const slicesWritten = slices.length > 0;
  return planDrain({
    targets: selection.targets.map((p) => {
      const uid = uidOf(p);
      const h = health.get(policy.key, uid);
      const kubeletReady = isKubeletReady(p);
      const readyInSlices = rotation.ready.has(uid) ? true : rotation.notReady.has(uid) ? false : undefined;
      const t: DrainTarget = {
        uid,
        name: nameOf(p),
        state: h?.state ?? "Unknown",
        kubeletReady,
        serving: isServing({ kubeletReady, readyInSlices, slicesWritten, known: known.probing.known(uid) }),
        outOfRotation: readyInSlices === false,
      };
      return withEvidence(health, policy, t, known);
    }),
    maxUnhealthyPercent: policy.spec.drain.maxUnhealthyPercent,
    drainEnabled: policy.spec.drain.enabled,
    dryRun: policy.spec.dryRun,
    recoveredAt: known.recoveredAt,
    whenAllUnhealthy: policy.spec.drain.whenAllUnhealthy,
  });
}

/** A target of a policy that drains through the pods' readiness gate. */
export function gateDrainPod(
  health: HealthStore,
  gates: Pick<ReadinessGates, "conditionOf">,
  policy: ParsedPolicy,
  p: PodObject,
  known: KnownPods,
): GateDrainPod {
  const uid = uidOf(p);
  const h = health.get(policy.key, uid);
  const out: GateDrainPod = {
    uid,
    name: nameOf(p),
    state: h?.state ?? "Unknown",
    gated: hasReadinessGate(p),
    podReady: isKubeletReady(p),
    readyBesidesGate: isReadyBesidesGate(p),
    condition: gates.conditionOf(p),
    known: known.probing.known(uid),
  };
  return withEvidence(health, policy, out, known);
}

/**
 * A drain target with its evidence: unhealthySince as status keeps it (whole seconds), so a
 * restarted or new leader, seeded from status, drains the same pods with the same reasons as the
 * replica before it; when its latest result came; why it is not probed.
 */
function withEvidence<
  T extends Pick<DrainTarget, "uid" | "unhealthySince" | "lastResultAt" | "notProbed" | "quarantine">,
>(health: HealthStore, policy: ParsedPolicy, t: T, known: KnownPods): T {
  const unhealthySince = health.get(policy.key, t.uid)?.unhealthySince;
  if (unhealthySince !== undefined) t.unhealthySince = Math.floor(unhealthySince / 1000) * 1000;
  const lastResultAt = health.evidence(policy.key, t.uid)?.lastResultAt;
  if (lastResultAt !== undefined) t.lastResultAt = lastResultAt;
  const notProbed = known.notProbed.get(t.uid);
  if (notProbed !== undefined) t.notProbed = notProbed;
  const quarantine = known.quarantines.get(t.uid);
  if (quarantine) t.quarantine = quarantine;
  return t;
}

/** The targets in flap quarantine now, by uid (none when spec.evaluation.flapQuarantine is off). */
export function quarantinesOf(
  health: HealthStore,
  policy: ParsedPolicy,
  targets: readonly PodObject[],
  now: number,
): Map<string, QuarantineVerdict> {
  const out = new Map<string, QuarantineVerdict>();
  const settings = policy.flapQuarantine;
  if (!settings) return out;
  for (const p of targets) {
    const history = health.flapHistory(policy.key, uidOf(p));
    const verdict = history && judgeQuarantine(history.transitions, settings, now, history.restoredUntil);
    if (verdict) out.set(uidOf(p), verdict);
  }
  return out;
}
