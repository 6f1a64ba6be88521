import type { HealthSeed } from "./health.js";
import { fromRfc3339 } from "./status-time.js";
import type { StatusPod } from "./status.js";

/**
 * Seeds for the health store from a persisted `status.pods`, by pod uid, so a restart
 * keeps each pod's state and replacement window. Entries whose `since` does not parse
 * are skipped (the pod starts Unknown). Pods beyond the 1000 kept in status were
 * Healthy (non-Healthy pods come first), and start Unknown.
 */
export function computeHealthSeeds(pods: readonly StatusPod[] | undefined): Map<string, HealthSeed> {
  const seeds = new Map<string, HealthSeed>();
  for (const p of pods ?? []) {
    const since = fromRfc3339(p.since);
    if (since === undefined) continue;
    const seed: HealthSeed = { state: p.state, since };
    const unhealthySince = fromRfc3339(p.unhealthySince);
    if (p.state === "Unhealthy") seed.unhealthySince = unhealthySince ?? since;
    if (p.lastResult !== undefined) seed.lastResult = p.lastResult;
    const quarantinedUntil = fromRfc3339(p.quarantinedUntil);
    if (quarantinedUntil !== undefined) seed.quarantinedUntil = quarantinedUntil;
    seeds.set(p.uid, seed);
  }
  return seeds;
}
