// Invariants of a settled history: once the pods answer, faults stop and a leader runs long
// enough, every slice belongs to a Service a policy manages and says what the pods say.
import { targetsOf, type Snapshot } from "../snapshot.js";
import { managed } from "./routing.js";
import type { Invariant } from "./types.js";

export const noFrozenSlices: Invariant = {
  name: "no-frozen-slices",
  rule: "once settled, the operator's slices exist only for Services a valid policy manages",
  check(s: Snapshot): string[] {
    if (!s.settled) return [];
    const services = new Set(managed(s.world).map((m) => m.service));
    return s.world.slices
      .filter((slice) => !services.has(slice.service))
      .map(
        (slice) =>
          `slice ${slice.name} of Service ${slice.service} left behind: ${slice.endpoints.map((e) => `${e.pod}=${e.ready}`).join(" ") || "(no endpoints)"}`,
      );
  },
};

export const converged: Invariant = {
  name: "converged",
  rule: "once settled with every pod healthy, a managed Service's endpoints are its targets, ready as kubelet says",
  check(s: Snapshot): string[] {
    if (!s.settled) return [];
    const out: string[] = [];
    for (const { service, policy } of managed(s.world)) {
      const targets = targetsOf(s.world, policy);
      const endpoints = new Map<string, boolean>();
      for (const slice of s.world.slices.filter((x) => x.service === service))
        for (const e of slice.endpoints) endpoints.set(e.pod, e.ready);
      const terminating = new Set(s.world.pods.filter((p) => p.terminating).map((p) => p.name));
      for (const pod of targets) {
        if (!endpoints.has(pod.name))
          out.push(`Service ${service} (policy ${policy.name}): target ${pod.name} has no endpoint`);
        else if (endpoints.get(pod.name) !== pod.ready)
          out.push(
            `Service ${service} (policy ${policy.name}): ${pod.name} ready=${endpoints.get(pod.name)} but kubelet-Ready=${pod.ready}`,
          );
      }
      for (const name of endpoints.keys()) {
        if (!targets.some((p) => p.name === name) && !terminating.has(name))
          out.push(`Service ${service} (policy ${policy.name}): endpoint ${name} is not a target`);
      }
    }
    return out;
  },
};
