// The mass-failure breaker, judged from what the API shows and the pods answered: no pod is
// evicted while a policy selecting it has more than pauseAboveUnhealthyPercent of its targets
// Unhealthy.
//
// The operator decides on its own view, which status shows only as of its last write (writes are
// throttled, and the evicting reconcile writes its status after the eviction): an eviction right
// after a pod recovered, judged by a status from before the recovery, would be a false alarm. So
// an eviction is judged only when the operator's view cannot have differed from the status:
//   - the status lists exactly the policy's targets in the API (no target came or went unseen);
//   - the API's pods and policies have not changed for STABLE_MS before the eviction;
//   - no target the status calls Unhealthy answered a probe successfully in that time: with every
//     policy probing at least every 2 s, Unhealthy after at most 3 failures and a 1 s timeout,
//     such a pod is Unhealthy in the operator's view too (also after a restart, which restores it
//     from this status).
// Then the operator's share is at least the status's share, and above the threshold it must not
// evict. Evictions outside those conditions are not judged (the property test of the pure core
// covers every case).
import { conditionTrue, selects, targetsOf, type EvictionRecord, type Snapshot } from "../snapshot.js";
import type { Invariant } from "./types.js";

export const STABLE_MS = 30_000;

const iso = (ms: number): string => new Date(ms).toISOString();

function judged(s: Snapshot, e: EvictionRecord): string[] {
  const pod = e.before.pods.find((p) => p.name === e.pod);
  if (!pod || e.stableSince === undefined || e.stableSince > e.at - STABLE_MS) return [];
  const out: string[] = [];
  for (const policy of e.before.policies) {
    const pause = policy.replacement.pauseAboveUnhealthyPercent;
    if (pause === undefined || !policy.replacement.enabled || policy.dryRun || !conditionTrue(policy, "Ready"))
      continue;
    if (!selects(policy.selector, pod.labels)) continue;
    const targets = targetsOf(e.before, policy);
    const reported = Object.keys(policy.status.pods).sort();
    if (
      reported.join() !==
      targets
        .map((t) => t.name)
        .sort()
        .join()
    )
      continue;
    const unhealthy = targets.filter((t) => policy.status.pods[t.name] === "Unhealthy");
    if (unhealthy.length * 100 <= pause * targets.length) continue;
    const recovered = unhealthy.some((t) =>
      s.probes.some((h) => h.ip === t.ip && h.mode === "healthy" && h.at >= e.at - STABLE_MS && h.at <= e.at),
    );
    if (recovered) continue;
    out.push(
      `${e.verb} of ${e.pod} at ${iso(e.at)} by ${e.user} while policy ${policy.name} had ${unhealthy.length} of ${targets.length} targets Unhealthy ` +
        `(${unhealthy.map((t) => t.name).join(", ")}), above pauseAboveUnhealthyPercent=${pause}, unchanged since ${iso(e.stableSince)}`,
    );
  }
  return out;
}

export const noEvictionAboveBreaker: Invariant = {
  name: "no-eviction-above-breaker",
  rule: `no pod is evicted while a policy selecting it has more than pauseAboveUnhealthyPercent of its targets Unhealthy (judged when its status and the pods were stable for ${STABLE_MS / 1000} s)`,
  check(s: Snapshot): string[] {
    return s.evictions.flatMap((e) => judged(s, e));
  },
};
