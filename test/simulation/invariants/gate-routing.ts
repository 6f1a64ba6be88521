// Routing invariants of drain method ReadinessGate, judged from the pods' own conditions: a pod is
// in rotation for every Service selecting it when its containers are ready and its condition
// healthprobe.io/ready is True (the kubelet's Ready with the gate). The simulation runs no
// EndpointSlice controller, so this is what the Services' ready endpoints would be.
import {
  conditionTrue,
  mayFailClosed,
  selects,
  targetsOf,
  type PodView,
  type PolicyView,
  type Snapshot,
  type World,
} from "../snapshot.js";
import type { Invariant } from "./types.js";

const isGate = (p: PolicyView) => p.method === "ReadinessGate" && !p.dryRun;
const older = (a: PolicyView, b: PolicyView) =>
  (a.created ?? 0) - (b.created ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Each Ready ReadinessGate policy that holds every one of its targets (no older one selects them), with them. */
function holding(world: World): Array<{ policy: PolicyView; targets: PodView[] }> {
  const holders = world.policies.filter(isGate).sort(older);
  const out: Array<{ policy: PolicyView; targets: PodView[] }> = [];
  for (const policy of holders) {
    if (!conditionTrue(policy, "Ready") || policy.status.conditions.Ready?.observedGeneration !== policy.generation)
      continue;
    const targets = targetsOf(world, policy);
    const heldByMe = targets.every((pod) => holders.find((h) => selects(h.selector, pod.labels)) === policy);
    if (heldByMe) out.push({ policy, targets });
  }
  return out;
}

const containersReady = (p: PodView) => p.containersReady ?? p.ready;
const inRotation = (p: PodView) => containersReady(p) && p.gate?.status === "True";

export const gateNeverDark: Invariant = {
  name: "gate-never-dark",
  rule: "whenever a target of a ReadinessGate policy has its containers ready, at least one target is in rotation (containers ready and healthprobe.io/ready True), unless the policy fails closed with no Healthy target",
  check(s: Snapshot): string[] {
    if (!s.operatorUp) return [];
    const out: string[] = [];
    for (const { policy, targets } of holding(s.world)) {
      const ready = targets.filter(containersReady);
      // Ready but for the gate is the kubelet-Ready of this method (the pod's Ready includes the verdict).
      if (mayFailClosed(policy, targets, s, containersReady)) continue;
      if (ready.length > 0 && !targets.some(inRotation)) {
        out.push(
          `policy ${policy.name}: no target in rotation while ${ready.map((p) => `${p.name}(${p.gate?.status ?? "no condition"}/${p.gate?.reason ?? ""})`).join(", ")} have their containers ready`,
        );
      }
    }
    return out;
  },
};

export const gateDrainCap: Invariant = {
  name: "gate-drain-cap",
  rule: "a ReadinessGate policy keeps at most floor(targets * maxUnhealthyPercent / 100) targets with ready containers out (False, warm-up aside), unless it fails closed with no Healthy target",
  check(s: Snapshot): string[] {
    if (!s.operatorUp) return [];
    const out: string[] = [];
    for (const { policy, targets } of holding(s.world)) {
      if (mayFailClosed(policy, targets, s, containersReady)) continue;
      const keptOut = targets.filter(
        (p) => containersReady(p) && p.gate?.status === "False" && p.gate.reason !== "WarmingUp",
      );
      const cap = Math.floor((targets.length * policy.maxUnhealthyPercent) / 100);
      if (keptOut.length > cap) {
        out.push(
          `policy ${policy.name} (maxUnhealthyPercent ${policy.maxUnhealthyPercent}, ${targets.length} targets): ${keptOut.length} targets kept out (${keptOut.map((p) => `${p.name}/${p.gate!.reason}`).join(", ")}), cap ${cap}`,
        );
      }
    }
    return out;
  },
};
