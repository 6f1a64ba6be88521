// Each invariant on hand-made snapshots: one that breaks the rule, one that keeps it.
import { describe, expect, it } from "@jest/globals";
import { HOUR_MS, RECOVERY_LAG_MS, type PodView, type ShardRecord, type Snapshot } from "../snapshot.js";
import { T0, breakerSnapshot, eviction, pod, policy, snapshot, world } from "./builders.js";
import { INVARIANTS } from "./index.js";

const byName = (name: string) => INVARIANTS.find((i) => i.name === name)!;
/** operator-1 took the marker at the start and talks to the API at the end (of 20 s) unless told otherwise. */
const shardRecord = (o: Partial<ShardRecord>): ShardRecord => ({
  start: T0,
  now: T0 + 20_000,
  boundMs: 9_000,
  leaseMs: 4_000,
  markers: [{ pos: 1, at: T0, holder: "operator-1" }],
  writes: [],
  requests: [],
  renewals: [],
  policies: [{ at: T0, count: 1 }],
  ...o,
});
const three = [pod("a"), pod("b"), pod("c")];
const failingProbe = (name: string, at: number) => ({ ip: pod(name).ip!, at, mode: "failing" });

const cases: Array<{ invariant: string; violating: Snapshot; passing: Snapshot }> = [
  {
    invariant: "never-dark",
    violating: snapshot(world(three, { a: false, b: false, c: false }, [policy("p")])),
    passing: snapshot(world(three, { a: true, b: false, c: false }, [policy("p")])),
  },
  {
    invariant: "drain-cap",
    violating: snapshot(world(three, { a: true, b: false, c: false }, [policy("p", { maxUnhealthyPercent: 50 })])),
    passing: snapshot(world(three, { a: true, b: true, c: false }, [policy("p", { maxUnhealthyPercent: 50 })])),
  },
  {
    invariant: "quarantine-within-cap",
    violating: snapshot(world(three, {}, [policy("p", { counts: { targets: 3, drained: 2, quarantinedOut: ["b"] } })])),
    passing: snapshot(world(three, {}, [policy("p", { counts: { targets: 4, drained: 2, quarantinedOut: ["b"] } })])),
  },
  {
    invariant: "adoption-free",
    violating: snapshot(
      world(three, { a: true, b: false, c: true }, [
        policy("p", { states: { a: "Healthy", b: "Unknown", c: "Healthy" } }),
      ]),
      {
        previous: world(three, { a: true, b: true, c: true }, [policy("p")]),
      },
    ),
    passing: snapshot(
      world(three, { a: true, b: false, c: true }, [
        policy("p", { states: { a: "Healthy", b: "Unhealthy", c: "Healthy" } }),
      ]),
      {
        previous: world(three, { a: true, b: true, c: true }, [policy("p")]),
      },
    ),
  },
  {
    invariant: "dry-run-routing",
    violating: snapshot(world(three, { a: true, b: false, c: true }, [policy("p", { dryRun: true })])),
    passing: snapshot(
      world([pod("a"), pod("b", { ready: false }), pod("c")], { a: true, b: false, c: true }, [
        policy("p", { dryRun: true }),
      ]),
    ),
  },
  {
    invariant: "policy-budgets",
    violating: snapshot(world(three, {}, []), {
      evictions: [
        eviction("a", T0 + 1000, world(three, {}, [policy("p")])),
        eviction("b", T0 + HOUR_MS - 1, world(three, {}, [policy("p")])),
      ],
    }),
    passing: snapshot(world(three, {}, []), {
      evictions: [
        eviction("a", T0 + 1000, world(three, {}, [policy("p")])),
        eviction("b", T0 + 1000 + HOUR_MS, world(three, {}, [policy("p")])),
      ],
    }),
  },
  {
    invariant: "operator-budget",
    violating: snapshot(world(three, {}, []), {
      maxReplacementsPer12h: 1,
      evictions: [
        eviction(
          "a",
          T0 + 1000,
          world(three, {}, [policy("p", { replacement: { enabled: true, maxPerHour: 5, maxPerDay: 5 } })]),
        ),
        eviction("b", T0 + 2000, world(three, {}, [])),
      ],
    }),
    passing: snapshot(world(three, {}, []), {
      maxReplacementsPer12h: 1,
      evictions: [
        eviction("a", T0 + 1000, world(three, {}, [])),
        eviction("b", T0 + 2000, world(three, {}, []), { code: 429 }),
      ],
    }),
  },
  {
    invariant: "namespace-share",
    violating: snapshot(world(three, {}, []), {
      maxReplacementsPer12h: 10,
      maxReplacementsPer12hPerNamespace: 1,
      evictions: [
        { ...eviction("a", T0 + 1000, world(three, {}, [])), namespace: "t1" },
        { ...eviction("b", T0 + 2000, world(three, {}, [])), namespace: "t1" },
      ],
    }),
    passing: snapshot(world(three, {}, []), {
      maxReplacementsPer12h: 10,
      maxReplacementsPer12hPerNamespace: 1,
      evictions: [
        { ...eviction("a", T0 + 1000, world(three, {}, [])), namespace: "t1" },
        { ...eviction("b", T0 + 2000, world(three, {}, [])), namespace: "t2" },
        { ...eviction("c", T0 + 3000, world(three, {}, []), { code: 429 }), namespace: "t1" },
      ],
    }),
  },
  {
    invariant: "replaceable-only",
    violating: snapshot(world(three, {}, []), {
      evictions: [eviction("a", T0, world([pod("a", { owner: "mirror" })], {}, [policy("p")]))],
    }),
    passing: snapshot(world(three, {}, []), { evictions: [eviction("a", T0, world([pod("a")], {}, [policy("p")]))] }),
  },
  {
    invariant: "no-eviction-in-fail-open",
    violating: snapshot(world(three, {}, []), {
      evictions: [eviction("a", T0, world(three, {}, [policy("p", { conditions: { FailOpen: "True" } })]))],
    }),
    passing: snapshot(world(three, {}, []), {
      evictions: [eviction("a", T0, world(three, {}, [policy("p", { conditions: { FailOpen: "False" } })]))],
    }),
  },
  {
    invariant: "no-eviction-above-breaker",
    violating: breakerSnapshot({ a: "Unhealthy", b: "Unhealthy", c: "Healthy" }, 50),
    passing: breakerSnapshot({ a: "Unhealthy", b: "Unhealthy", c: "Healthy" }, 67),
  },
  {
    invariant: "fresh-evidence",
    violating: snapshot(world(three, {}, []), {
      probingStarts: [{ user: "operator-1", at: T0 + 5000 }],
      probes: [failingProbe("a", T0 + 1000)],
      evictions: [eviction("a", T0 + 6000, world(three, {}, [policy("p")]))],
    }),
    passing: snapshot(world(three, {}, []), {
      probingStarts: [{ user: "operator-1", at: T0 + 5000 }],
      probes: [failingProbe("a", T0 + 5500)],
      evictions: [eviction("a", T0 + 6000, world(three, {}, [policy("p")]))],
    }),
  },
  {
    invariant: "dry-run-evictions",
    violating: snapshot(world(three, {}, []), {
      evictions: [eviction("a", T0, world(three, {}, [policy("p", { dryRun: true })]))],
    }),
    passing: snapshot(world(three, {}, []), {
      evictions: [eviction("a", T0, world(three, {}, [policy("p", { dryRun: true }), policy("q")]))],
    }),
  },
  {
    invariant: "gate-never-dark",
    violating: snapshot(world(gated("False", "False", "False"), {}, [policy("g", { method: "ReadinessGate" })])),
    passing: snapshot(world(gated("False", "True", "False"), {}, [policy("g", { method: "ReadinessGate" })])),
  },
  {
    invariant: "gate-drain-cap",
    violating: snapshot(
      world(gated("False", "False", "False", "True"), {}, [policy("g", { method: "ReadinessGate" })]),
    ),
    passing: snapshot(world(gated("False", "True", "True", "True"), {}, [policy("g", { method: "ReadinessGate" })])),
  },
  {
    invariant: "no-frozen-slices",
    violating: snapshot(world(three, { a: true }, []), { settled: true }),
    passing: snapshot(world(three, { a: true, b: true, c: true }, [policy("p")]), { settled: true }),
  },
  {
    invariant: "converged",
    violating: snapshot(world(three, { a: true, b: false, c: true }, [policy("p")]), { settled: true }),
    passing: snapshot(
      world([pod("a"), pod("b", { ready: false }), pod("c")], { a: true, b: false, c: true }, [policy("p")]),
      { settled: true },
    ),
  },
  {
    invariant: "single-owner-writes",
    violating: snapshot(world([], {}, []), {
      shards: shardRecord({ writes: [{ pos: 0, at: T0, user: "operator-1", what: "patch endpointslices web-x" }] }),
    }),
    passing: snapshot(world([], {}, []), {
      shards: shardRecord({ writes: [{ pos: 2, at: T0, user: "operator-1", what: "patch endpointslices web-x" }] }),
    }),
  },
  {
    invariant: "handover-acknowledged",
    // operator-1 renewed its shard Lease a second before operator-2 took the marker straight from it.
    violating: snapshot(world([], {}, []), {
      shards: shardRecord({
        markers: [
          { pos: 1, at: T0, holder: "operator-1" },
          { pos: 9, at: T0 + 10_000, holder: "operator-2" },
        ],
        renewals: [{ at: T0 + 9_000, user: "operator-1" }],
      }),
    }),
    passing: snapshot(world([], {}, []), {
      shards: shardRecord({
        markers: [
          { pos: 1, at: T0, holder: "operator-1" },
          { pos: 9, at: T0 + 10_000, holder: "" },
          { pos: 10, at: T0 + 10_500, holder: "operator-2" },
        ],
        renewals: [{ at: T0 + 9_000, user: "operator-1" }],
      }),
    }),
  },
  {
    invariant: "owner-gap",
    violating: snapshot(world([], {}, []), {
      // operator-2 still runs at the end (one that fell silent at T0 would be dead, and no taker).
      shards: shardRecord({
        now: T0 + 30_000,
        requests: [
          { at: T0, user: "operator-2" },
          { at: T0 + 30_000, user: "operator-2" },
        ],
      }),
    }),
    passing: snapshot(world([], {}, []), {
      shards: shardRecord({ requests: [{ at: T0 + 20_000, user: "operator-1" }] }),
    }),
  },
];

/** Pods a, b, c, … with ready containers and the gate condition given (False: Unhealthy). */
function gated(...statuses: Array<"True" | "False">) {
  return statuses.map((status, i) =>
    pod(String.fromCharCode(97 + i), {
      containersReady: true,
      ready: status === "True",
      gate: { status, reason: status === "True" ? "Admitted" : "Unhealthy" },
    }),
  );
}

describe("simulation invariants", () => {
  it("every invariant has a violating and a passing snapshot here", () => {
    expect(cases.map((c) => c.invariant).sort()).toEqual(INVARIANTS.map((i) => i.name).sort());
  });

  it.each(cases)("$invariant reports the violating snapshot with evidence", ({ invariant, violating }) => {
    const found = byName(invariant).check(violating);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/\S/);
  });

  it.each(cases)("$invariant accepts the passing snapshot", ({ invariant, passing }) => {
    expect(byName(invariant).check(passing)).toEqual([]);
  });

  /** Every pod's server answering well since a minute before the snapshot. */
  const servedWell = (pods: PodView[]) => pods.map((p) => ({ ip: p.ip!, at: T0 - 60_000, mode: "healthy" }));

  it("never-dark and drain-cap let a policy that fails closed go dark only while no target is Healthy", () => {
    const dark = (states: Record<string, "Healthy" | "Unhealthy">, conditions: Record<string, string> = {}) =>
      snapshot(
        world(three, { a: false, b: false, c: false }, [
          policy("p", { whenAllUnhealthy: "FailClosed", states, conditions }),
        ]),
        { modeChanges: servedWell(three) },
      );
    const allUnhealthy = { a: "Unhealthy", b: "Unhealthy", c: "Unhealthy" } as const;
    const oneHealthy = { ...allUnhealthy, b: "Healthy" } as const;
    expect(byName("never-dark").check(dark(allUnhealthy))).toEqual([]);
    expect(byName("drain-cap").check(dark(allUnhealthy))).toEqual([]);
    expect(byName("never-dark").check(dark(oneHealthy, { FailClosed: "True" }))).toEqual([]);
    expect(byName("never-dark").check(dark(oneHealthy))).toHaveLength(1);
    expect(byName("drain-cap").check(dark(oneHealthy))).toHaveLength(1);
  });

  it("never-dark lets a policy that fails closed be dark while its status lags, when no ready target's server answered well throughout the last RECOVERY_LAG_MS (seed 2207)", () => {
    const pods = ["a", "b", "c"].map((n, i) => pod(n, { ip: `10.0.1.${i + 1}` }));
    const states = { a: "Healthy", b: "Healthy", c: "Unhealthy" } as const;
    const at = T0 + 60_000;
    const dark = (modes: Array<{ ip: string; at: number; mode: string }>) =>
      snapshot(
        world(pods, { a: false, b: false, c: false }, [policy("p", { whenAllUnhealthy: "FailClosed", states })], {
          at,
        }),
        { modeChanges: modes },
      );
    const served = pods.map((p) => ({ ip: p.ip!, at: T0, mode: "healthy" }));
    const failing = (p: PodView, when: number) => ({ ip: p.ip!, at: when, mode: "failing" });
    // Every server failed a few seconds ago; the status is from before.
    expect(byName("never-dark").check(dark([...served, ...pods.map((p) => failing(p, at - 3_000))]))).toEqual([]);
    // One ready target kept answering well for longer than the lag: dark is a violation.
    expect(
      byName("never-dark").check(dark([...served, failing(pods[0]!, at - 3_000), failing(pods[2]!, at - 3_000)])),
    ).toHaveLength(1);
    // One that failed before the lag and has answered well since: dark is a violation too.
    const recovered = [
      failing(pods[1]!, at - 2 * RECOVERY_LAG_MS),
      { ip: pods[1]!.ip!, at: at - RECOVERY_LAG_MS - 1, mode: "healthy" },
    ];
    expect(
      byName("never-dark").check(
        dark([...served, failing(pods[0]!, at - 3_000), ...recovered, failing(pods[2]!, at - 3_000)]),
      ),
    ).toHaveLength(1);
  });

  it("dry-run-routing judges a pod once kubelet has said the same for a step: the slices follow a flip one reconcile later (seed 20774)", () => {
    const flipped = [pod("a"), pod("b", { ready: false }), pod("c")];
    const now = world(flipped, { a: true, b: true, c: true }, [policy("p", { dryRun: true })]);
    expect(
      byName("dry-run-routing").check(
        snapshot(now, { previous: world(three, { a: true, b: true, c: true }, [policy("p", { dryRun: true })]) }),
      ),
    ).toEqual([]);
    expect(
      byName("dry-run-routing").check(
        snapshot(now, { previous: world(flipped, { a: true, b: true, c: true }, [policy("p", { dryRun: true })]) }),
      ),
    ).toHaveLength(1);
  });

  it("gate-never-dark and gate-drain-cap let a ReadinessGate policy that fails closed go dark only while no target is Healthy (seed 1005)", () => {
    const dark = (states: Record<string, "Healthy" | "Unhealthy">) =>
      snapshot(
        world(gated("False", "False", "False"), {}, [
          policy("g", { method: "ReadinessGate", whenAllUnhealthy: "FailClosed", states }),
        ]),
        { modeChanges: servedWell(gated("False", "False", "False")) },
      );
    const allUnhealthy = { a: "Unhealthy", b: "Unhealthy", c: "Unhealthy" } as const;
    const oneHealthy = { ...allUnhealthy, b: "Healthy" } as const;
    expect(byName("gate-never-dark").check(dark(allUnhealthy))).toEqual([]);
    expect(byName("gate-drain-cap").check(dark(allUnhealthy))).toEqual([]);
    expect(byName("gate-never-dark").check(dark(oneHealthy))).toHaveLength(1);
    expect(byName("gate-drain-cap").check(dark(oneHealthy))).toHaveLength(1);
  });

  it("quarantine-within-cap does not judge a policy reporting FailClosed=True", () => {
    const closed = policy("p", {
      whenAllUnhealthy: "FailClosed",
      conditions: { FailClosed: "True" },
      counts: { targets: 3, drained: 3 },
    });
    expect(byName("quarantine-within-cap").check(snapshot(world(three, {}, [closed])))).toEqual([]);
  });

  it("no-eviction-in-fail-open also holds evictions back while a policy reports FailClosed=True", () => {
    const s = snapshot(world(three, {}, []), {
      evictions: [eviction("a", T0, world(three, {}, [policy("p", { conditions: { FailClosed: "True" } })]))],
    });
    expect(byName("no-eviction-in-fail-open").check(s)).toHaveLength(1);
  });

  it("routing invariants say nothing while no replica is writing", () => {
    const dark = snapshot(world(three, { a: false, b: false, c: false }, [policy("p")]), { operatorUp: false });
    expect(byName("never-dark").check(dark)).toEqual([]);
  });

  it("fresh-evidence cannot judge a pod refusing connections since it was served (a refusal leaves no trace)", () => {
    const refused = snapshot(world(three, {}, []), {
      probingStarts: [{ user: "operator-1", at: T0 + 5000 }],
      modeChanges: [{ ip: pod("a").ip!, at: T0 + 6000, mode: "refused" }],
      evictions: [eviction("a", T0 + 9000, world(three, {}, [policy("p")]))],
    });
    expect(byName("fresh-evidence").check(refused)).toEqual([]);
    const refusedLater = snapshot(world(three, {}, []), {
      probingStarts: [{ user: "operator-1", at: T0 + 5000 }],
      modeChanges: [
        { ip: pod("a").ip!, at: T0 + 1000, mode: "healthy" },
        { ip: pod("a").ip!, at: T0 + 7000, mode: "refused" },
      ],
      evictions: [eviction("a", T0 + 9000, world(three, {}, [policy("p")]))],
    });
    expect(byName("fresh-evidence").check(refusedLater)).toEqual([]);
  });

  it("adoption-free judges only a decision the status reports: a status still saying admitted is older than the slices", () => {
    const withStatus = (routedOut: boolean) => {
      const p = policy("p", { states: { a: "Healthy", b: "Unknown", c: "Healthy" } });
      p.status.routedOut = { a: false, b: routedOut, c: false };
      return snapshot(world(three, { a: true, b: false, c: true }, [p]), {
        previous: world(three, { a: true, b: true, c: true }, [policy("p")]),
      });
    };
    expect(byName("adoption-free").check(withStatus(false))).toEqual([]);
    expect(byName("adoption-free").check(withStatus(true))).toHaveLength(1);
  });

  it("budgets count a re-attempt of one pod (its first request failed) as one replacement", () => {
    const before = world(three, {}, [policy("p")]);
    const failed = { ...eviction("a", T0 + 1000, before), code: 500 };
    const retried = eviction("a", T0 + 2000, before);
    expect(byName("policy-budgets").check(snapshot(world(three, {}, []), { evictions: [failed, retried] }))).toEqual(
      [],
    );
    expect(
      byName("policy-budgets").check(
        snapshot(world(three, {}, []), { evictions: [failed, eviction("b", T0 + 2000, before)] }),
      ),
    ).toHaveLength(1);
  });

  it("a policy whose Ready condition is about an older generation does not manage the Service", () => {
    const stale = policy("p", { generation: 2 });
    expect(byName("never-dark").check(snapshot(world(three, { a: false, b: false, c: false }, [stale])))).toEqual([]);
  });
});
