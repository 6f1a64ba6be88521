// Routing invariants: what the operator's EndpointSlices say about the Service at a settled
// moment, judged from the API's pods, Services, slices and policies.
import {
  managingPolicy,
  mayFailClosed,
  readinessIn,
  targetsOf,
  type Snapshot,
  type PolicyView,
  type World,
} from "../snapshot.js";
import type { Invariant } from "./types.js";

/** Each selector-less Service a Ready policy manages, with that policy. */
function managed(world: World): Array<{ service: string; policy: PolicyView }> {
  const out: Array<{ service: string; policy: PolicyView }> = [];
  for (const svc of world.services) {
    const policy = managingPolicy(world, svc.name);
    if (policy) out.push({ service: svc.name, policy });
  }
  return out;
}

export const neverDark: Invariant = {
  name: "never-dark",
  rule: "whenever a selected pod is kubelet-Ready and a policy manages the Service, at least one endpoint is ready, unless the policy fails closed with no Healthy target",
  check(s: Snapshot): string[] {
    if (!s.operatorUp) return [];
    const out: string[] = [];
    for (const { service, policy } of managed(s.world)) {
      const ready = targetsOf(s.world, policy).filter((p) => p.ready);
      if (ready.length === 0 || mayFailClosed(policy, targetsOf(s.world, policy), s)) continue;
      const readiness = readinessIn(s.world, service);
      if (![...readiness.values()].some(Boolean)) {
        out.push(
          `Service ${service} (policy ${policy.name}) has no ready endpoint while ${ready.map((p) => p.name).join(", ")} are kubelet-Ready; endpoints ${fmt(readiness)}`,
        );
      }
    }
    return out;
  },
};

export const drainCap: Invariant = {
  name: "drain-cap",
  rule: "at most floor(targets * maxUnhealthyPercent / 100) kubelet-Ready pods that were once in rotation are kept out of it (quarantined ones included), unless the policy fails closed with no Healthy target",
  check(s: Snapshot): string[] {
    if (!s.operatorUp) return [];
    const out: string[] = [];
    for (const { service, policy } of managed(s.world)) {
      const targets = targetsOf(s.world, policy);
      if (policy.dryRun || mayFailClosed(policy, targets, s)) continue;
      const readiness = readinessIn(s.world, service);
      const inRotationOnce = new Set(s.everInRotation[service] ?? []);
      const keptOut = targets.filter((p) => p.ready && inRotationOnce.has(p.name) && readiness.get(p.name) !== true);
      const cap = Math.floor((targets.length * policy.maxUnhealthyPercent) / 100);
      if (keptOut.length > cap) {
        out.push(
          `Service ${service} (policy ${policy.name}, maxUnhealthyPercent ${policy.maxUnhealthyPercent}, ${targets.length} targets): ${keptOut.length} kubelet-Ready pods out of rotation (${keptOut.map((p) => p.name).join(", ")}), cap ${cap}`,
        );
      }
    }
    return out;
  },
};

export const quarantineWithinCap: Invariant = {
  name: "quarantine-within-cap",
  rule: "a policy's status never reports more pods drained (quarantined ones included) than floor(targets * maxUnhealthyPercent / 100), unless it reports FailClosed=True",
  check(s: Snapshot): string[] {
    const out: string[] = [];
    for (const policy of s.world.policies) {
      const { targets, drained, quarantinedOut = [] } = policy.status;
      if (targets === undefined || drained === undefined || policy.status.conditions.FailClosed?.status === "True")
        continue;
      const cap = Math.floor((targets * policy.maxUnhealthyPercent) / 100);
      if (drained > cap)
        out.push(
          `policy ${policy.name} reports ${drained} drained of ${targets} targets (${quarantinedOut.length} quarantined: ${quarantinedOut.join(", ") || "none"}), cap ${cap}`,
        );
    }
    return out;
  },
};

export const adoptionFree: Invariant = {
  name: "adoption-free",
  rule: "a serving pod (ready in the slices, or kubelet-Ready before the policy wrote any) is not taken out of rotation while its state is Unknown",
  check(s: Snapshot): string[] {
    const prev = s.previous;
    if (!s.operatorUp || !prev) return [];
    const out: string[] = [];
    for (const { service, policy } of managed(s.world)) {
      const before = readinessIn(prev, service);
      const noSlicesBefore = before.size === 0;
      const now = readinessIn(s.world, service);
      for (const pod of targetsOf(s.world, policy)) {
        const was = prev.pods.find((p) => p.uid === pod.uid);
        if (!pod.ready || !was?.ready || was.terminating) continue;
        const serving = before.get(pod.name) === true || noSlicesBefore;
        const state = policy.status.pods[pod.name] ?? "Unknown";
        // Status is written at most once a second, so it may lag the slices: judge only a decision
        // the status itself reports (a status still saying "admitted" is older than the slices).
        const reportedOut = policy.status.routedOut?.[pod.name] ?? true;
        if (serving && state === "Unknown" && reportedOut && now.get(pod.name) !== true) {
          out.push(
            `Service ${service} (policy ${policy.name}): ${pod.name} was serving (${noSlicesBefore ? "no slices yet" : "ready in the slices"}), is kubelet-Ready and Unknown, and is now ${now.has(pod.name) ? "not ready" : "absent"}`,
          );
        }
      }
    }
    return out;
  },
};

export const dryRunRouting: Invariant = {
  name: "dry-run-routing",
  rule: "a dryRun policy drains nothing: every endpoint is ready exactly as kubelet says, once kubelet has said it for a step",
  check(s: Snapshot): string[] {
    if (!s.operatorUp) return [];
    const out: string[] = [];
    for (const { service, policy } of managed(s.world)) {
      if (!policy.dryRun) continue;
      const readiness = readinessIn(s.world, service);
      for (const pod of targetsOf(s.world, policy)) {
        // The slices follow a kubelet flip one reconcile later, and a conflict on the write (a 409
        // is a requeue) can leave that reconcile on a backoff past this step (seed 20774).
        const was = s.previous?.pods.find((p) => p.uid === pod.uid);
        if (s.previous && was?.ready !== pod.ready) continue;
        const r = readiness.get(pod.name);
        if (r !== undefined && r !== pod.ready)
          out.push(
            `Service ${service} (dryRun policy ${policy.name}): ${pod.name} kubelet-Ready=${pod.ready} but endpoint ready=${r}`,
          );
      }
    }
    return out;
  },
};

function fmt(readiness: Map<string, boolean>): string {
  return readiness.size === 0 ? "(none)" : [...readiness].map(([n, r]) => `${n}=${r}`).join(" ");
}

export { managed };
