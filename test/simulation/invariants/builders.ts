// Small builders of hand-made snapshots for the invariants' own tests.
import type { EvictionRecord, PodView, PolicyView, Snapshot, World } from "../snapshot.js";

export const T0 = Date.UTC(2026, 0, 1);

export function pod(name: string, o: Partial<PodView> = {}): PodView {
  return {
    name,
    uid: `uid-${name}`,
    created: T0,
    ip: `10.0.0.${name.length}`,
    labels: { app: "web" },
    ready: true,
    terminating: false,
    owner: "controller",
    ...o,
  };
}

export function policy(
  name: string,
  o: Partial<Omit<PolicyView, "status">> & {
    states?: PolicyView["status"]["pods"];
    conditions?: Record<string, string>;
    counts?: Pick<PolicyView["status"], "targets" | "drained" | "quarantinedOut">;
  } = {},
): PolicyView {
  const { states, conditions, counts, ...rest } = o;
  const conds: PolicyView["status"]["conditions"] = {};
  for (const [type, status] of Object.entries({ Ready: "True", ...(conditions ?? {}) })) {
    conds[type] = {
      status,
      reason: status === "True" && type === "Ready" ? "Reconciled" : "",
      observedGeneration: 1,
      since: T0,
    };
  }
  return {
    name,
    uid: `uid-${name}`,
    generation: 1,
    serviceName: "web",
    selector: { app: "web" },
    dryRun: false,
    maxUnhealthyPercent: 50,
    whenAllUnhealthy: "FailOpen",
    replacement: { enabled: true, maxPerHour: 1, maxPerDay: 3 },
    ...rest,
    status: { observedGeneration: 1, conditions: conds, pods: states ?? {}, ...(counts ?? {}) },
  };
}

/** A world with Service web (selector-less), the pods, one slice of `ready` endpoints and the policies. */
export function world(
  pods: PodView[],
  ready: Record<string, boolean>,
  policies: PolicyView[],
  o: Partial<World> = {},
): World {
  return {
    at: T0,
    pods,
    services: [{ name: "web", hasSelector: false }],
    slices:
      Object.keys(ready).length === 0
        ? []
        : [{ name: "web-1", service: "web", endpoints: Object.entries(ready).map(([p, r]) => ({ pod: p, ready: r })) }],
    policies,
    ...o,
  };
}

export function eviction(podName: string, at: number, before: World, o: Partial<EvictionRecord> = {}): EvictionRecord {
  return { at, user: "operator-1", pod: podName, code: 201, verb: "evict", before, ...o };
}

export function snapshot(w: World, o: Partial<Snapshot> = {}): Snapshot {
  return {
    step: 1,
    world: w,
    previous: undefined,
    evictions: [],
    probes: [],
    modeChanges: [],
    probingStarts: [{ user: "operator-1", at: T0 }],
    everInRotation: { web: w.pods.map((p) => p.name) },
    operatorUp: true,
    settled: false,
    maxReplacementsPer12h: 10,
    ...o,
  };
}

/**
 * Pods a, b, c in the given states under policy p with this breaker threshold, a evicted at
 * T0 + 60 s by a world unchanged for the 60 s before it; `o` changes the eviction.
 */
export function breakerSnapshot(
  states: PolicyView["status"]["pods"],
  pause: number,
  o: Partial<EvictionRecord> = {},
  extra: Partial<Snapshot> = {},
): Snapshot {
  const pods = [pod("a"), pod("b"), pod("c")];
  const before = world(pods, {}, [
    policy("p", {
      states,
      replacement: { enabled: true, maxPerHour: 1, maxPerDay: 3, pauseAboveUnhealthyPercent: pause },
    }),
  ]);
  return snapshot(world(pods, {}, []), {
    evictions: [eviction("a", T0 + 60_000, before, { stableSince: T0, ...o })],
    ...extra,
  });
}
