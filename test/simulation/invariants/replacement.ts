// Replacement invariants, judged from the eviction (and pod delete) requests the API server
// received from operator replicas and the API's objects just before each one.
import { HOUR_MS, conditionTrue, selects, type EvictionRecord, type PolicyView, type Snapshot } from "../snapshot.js";
import type { Invariant } from "./types.js";

/** A PodDisruptionBudget refusal (429) uses no budget; every other attempt does. */
const charged = (e: EvictionRecord): boolean => e.code !== 429;

function podBefore(e: EvictionRecord) {
  return e.before.pods.find((p) => p.name === e.pod);
}

/** The valid policies that selected the pod just before the eviction. */
function selectingPolicies(e: EvictionRecord): PolicyView[] {
  const pod = podBefore(e);
  if (!pod) return [];
  return e.before.policies.filter(
    (p) => selects(p.selector, pod.labels) && p.status.conditions.Ready?.reason !== "InvalidSpec",
  );
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Replacements among eviction requests: distinct pods. A re-attempt of one pod (its earlier
 * request failed, say with a 500, and removed nothing) is the same replacement; the ledger
 * charges it once, moved forward.
 */
function replacements(records: readonly EvictionRecord[]): number {
  return new Set(records.map((e) => podBefore(e)?.uid ?? e.pod)).size;
}

export const policyBudgets: Invariant = {
  name: "policy-budgets",
  rule: "the pods a policy selects that are evicted fit its maxPerHour and maxPerDay in every sliding window",
  check(s: Snapshot): string[] {
    const out: string[] = [];
    const attempts = s.evictions.filter(charged);
    for (const e of attempts) {
      for (const policy of selectingPolicies(e)) {
        const inWindow = (ms: number) =>
          attempts.filter(
            (o) => o.at > e.at - ms && o.at <= e.at && selectingPolicies(o).some((p) => p.uid === policy.uid),
          );
        const hour = inWindow(HOUR_MS);
        const day = inWindow(24 * HOUR_MS);
        if (replacements(hour) > policy.replacement.maxPerHour || replacements(day) > policy.replacement.maxPerDay) {
          out.push(
            `policy ${policy.name} (maxPerHour ${policy.replacement.maxPerHour}, maxPerDay ${policy.replacement.maxPerDay}): ${replacements(hour)} pods evicted in the hour up to ${iso(e.at)}: ${hour.map((o) => `${o.pod}@${iso(o.at)} by ${o.user} (${o.code})`).join(", ")}`,
          );
        }
      }
    }
    return dedupe(out);
  },
};

export const operatorBudget: Invariant = {
  name: "operator-budget",
  rule: "all pods the operator evicts fit --max-replacements-per-12h in every sliding 12 hours",
  check(s: Snapshot): string[] {
    const attempts = s.evictions.filter(charged);
    for (const e of attempts) {
      const window = attempts.filter((o) => o.at > e.at - 12 * HOUR_MS && o.at <= e.at);
      if (replacements(window) > s.maxReplacementsPer12h) {
        return [
          `${replacements(window)} pods evicted in the 12 h up to ${iso(e.at)}, cap ${s.maxReplacementsPer12h}: ${window.map((o) => `${o.pod} by ${o.user}`).join(", ")}`,
        ];
      }
    }
    return [];
  },
};

export const namespaceShare: Invariant = {
  name: "namespace-share",
  rule: "the pods the operator evicts in one namespace fit --max-replacements-per-12h-per-namespace in every sliding 12 hours",
  check(s: Snapshot): string[] {
    const share = s.maxReplacementsPer12hPerNamespace;
    if (share === undefined) return [];
    const attempts = s.evictions.filter(charged);
    for (const e of attempts) {
      const window = attempts.filter((o) => o.namespace === e.namespace && o.at > e.at - 12 * HOUR_MS && o.at <= e.at);
      if (replacements(window) > share) {
        return [
          `${replacements(window)} pods evicted in namespace ${e.namespace ?? "?"} in the 12 h up to ${iso(e.at)}, share ${share}: ${window.map((o) => `${o.pod} by ${o.user}`).join(", ")}`,
        ];
      }
    }
    return [];
  },
};

export const replaceableOnly: Invariant = {
  name: "replaceable-only",
  rule: "no bare, mirror or terminating pod is evicted",
  check(s: Snapshot): string[] {
    const out: string[] = [];
    for (const e of s.evictions) {
      const pod = podBefore(e);
      if (!pod) continue;
      if (pod.owner !== "controller")
        out.push(`${e.verb} of ${pod.name} at ${iso(e.at)} by ${e.user}: a ${pod.owner} pod`);
      if (pod.terminating) out.push(`${e.verb} of ${pod.name} at ${iso(e.at)} by ${e.user}: already terminating`);
    }
    return out;
  },
};

export const noEvictionInFailOpen: Invariant = {
  name: "no-eviction-in-fail-open",
  rule: "no pod is evicted while a policy selecting it reports FailOpen=True or FailClosed=True",
  check(s: Snapshot): string[] {
    const out: string[] = [];
    for (const e of s.evictions) {
      const open = selectingPolicies(e).filter((p) => conditionTrue(p, "FailOpen") || conditionTrue(p, "FailClosed"));
      if (open.length > 0)
        out.push(
          `${e.verb} of ${e.pod} at ${iso(e.at)} by ${e.user} while ${open.map((p) => p.name).join(", ")} reported FailOpen=True or FailClosed=True`,
        );
    }
    return out;
  },
};

export const freshEvidence: Invariant = {
  name: "fresh-evidence",
  rule: "a pod is evicted only after a failing probe newer than the evicting replica's start or leadership and the policy's last Ready transition (not judged for a pod that refused connections meanwhile)",
  check(s: Snapshot): string[] {
    const out: string[] = [];
    for (const e of s.evictions) {
      const pod = podBefore(e);
      if (!pod?.ip) continue;
      const starts = s.probingStarts.filter((p) => p.user === e.user && p.at <= e.at).map((p) => p.at);
      const readySince = selectingPolicies(e)
        .filter((p) => conditionTrue(p, "Ready"))
        .map((p) => p.status.conditions.Ready!.since);
      const since = Math.max(pod.created, ...starts, ...readySince);
      // This pod's answers: changes on its address since it was created (an address is reused later).
      const modes = s.modeChanges.filter((m) => m.ip === pod.ip && m.at >= pod.created && m.at <= e.at);
      const modeAtSince = (modes.filter((m) => m.at <= since).at(-1) ?? modes[0])?.mode;
      // A refused connection leaves no trace on the pod's side: a pod that refused at some time
      // since then may have been probed, and is not judged.
      const refusedSince = modeAtSince === "refused" || modes.some((m) => m.at > since && m.mode === "refused");
      if (refusedSince) continue;
      const fresh = s.probes.some((h) => h.ip === pod.ip && h.at >= since && h.at <= e.at && h.mode !== "healthy");
      if (!fresh)
        out.push(`${e.verb} of ${pod.name} at ${iso(e.at)} by ${e.user}: no failing probe since ${iso(since)}`);
    }
    return out;
  },
};

export const dryRunEvictions: Invariant = {
  name: "dry-run-evictions",
  rule: "a pod that only dryRun policies (or none) select is never evicted",
  check(s: Snapshot): string[] {
    const out: string[] = [];
    for (const e of s.evictions) {
      if (!podBefore(e)) continue;
      const policies = selectingPolicies(e);
      if (policies.every((p) => p.dryRun || !p.replacement.enabled)) {
        out.push(
          `${e.verb} of ${e.pod} at ${iso(e.at)} by ${e.user}; selecting policies: ${policies.map((p) => `${p.name}${p.dryRun ? " (dryRun)" : ""}${p.replacement.enabled ? "" : " (replacement off)"}`).join(", ") || "none"}`,
        );
      }
    }
    return out;
  },
};

function dedupe(lines: string[]): string[] {
  return [...new Set(lines)];
}
