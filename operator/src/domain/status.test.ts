import { describe, it, expect } from "@jest/globals";
import { computeStatus, statusEqual, MAX_STATUS_PODS, type StatusInput } from "./status.js";
import { planDrain } from "./drain.js";
import { computeHealthSeeds } from "./health-seed.js";
import { setStatusCondition } from "./conditions.js";
import { aStatusPodInput, aStatus, HOUR, MINUTE, SECOND, T0 } from "./testing/builders.js";
import type { Condition, HealthStateName } from "./types.js";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

function anInput(overrides: Partial<StatusInput> = {}): StatusInput {
  return { generation: 3, now: T0 + HOUR, readiness: { reason: "Reconciled" }, pods: [], ...overrides };
}

/** Pods in the given states with their drain decisions, as the controller would pass them. */
function podsInStates(states: HealthStateName[], maxUnhealthyPercent = 50): Pick<StatusInput, "pods" | "drain"> {
  const targets = states.map((state, i) => ({
    uid: `uid-web-${i}`,
    name: `web-${i}`,
    state,
    kubeletReady: true,
    serving: state !== "Unknown",
    ...(state === "Unhealthy" ? { unhealthySince: T0 + i * MINUTE } : {}),
  }));
  const drain = planDrain({ targets, maxUnhealthyPercent, drainEnabled: true, dryRun: false });
  const pods = targets.map((t) =>
    aStatusPodInput({
      name: t.name,
      ip: `10.0.0.${t.name.slice(4)}`,
      health: {
        state: t.state,
        since: t.unhealthySince ?? T0,
        ...(t.unhealthySince ? { unhealthySince: t.unhealthySince } : {}),
        stateResult: t.state === "Unhealthy" ? "HTTP 503" : "HTTP 200",
      },
      decision: drain.decisions.get(t.uid)!,
    }),
  );
  return { pods, drain };
}

const condition = (s: { conditions: Condition[] }, type: string) => s.conditions.find((c) => c.type === type);

describe("computeStatus", () => {
  it("counts targets by state and drained pods", () => {
    const s = computeStatus(anInput(podsInStates(["Healthy", "Unhealthy", "Unknown", "Healthy", "Unhealthy"])));
    expect(s).toMatchObject({ observedGeneration: 3, targets: 5, healthy: 2, unhealthy: 2, unknown: 1, drained: 2 });
  });

  it.each([
    ["names the replica that owns the namespace when shards are on", { shard: "replica-a_1" }, "replica-a_1"],
    ["has no shard field when shards are off", {}, undefined],
  ])("%s", (_name, overrides, shard) => {
    expect(computeStatus(anInput(overrides)).shard).toBe(shard);
  });

  it("lists Unhealthy, then Unknown, then Healthy pods, each by name", () => {
    const s = computeStatus(
      anInput(podsInStates(["Healthy", "Unknown", "Unhealthy", "Unhealthy", "Healthy", "Healthy"])),
    );
    expect(s.pods.map((p) => `${p.name}:${p.state}`)).toEqual([
      "web-2:Unhealthy",
      "web-3:Unhealthy",
      "web-1:Unknown",
      "web-0:Healthy",
      "web-4:Healthy",
      "web-5:Healthy",
    ]);
  });

  it("writes only transition fields, in RFC 3339 seconds, omitting what is not set", () => {
    const s = computeStatus(
      anInput({
        pods: [
          aStatusPodInput({
            name: "web-0",
            health: { state: "Unhealthy", since: T0 + 1500, unhealthySince: T0 + 1500, stateResult: "HTTP 503" },
            decision: { drained: true, reason: "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50" },
            replaceAfter: T0 + HOUR + 1500,
          }),
          aStatusPodInput({ name: "web-1", health: { state: "Unknown", since: T0 }, decision: undefined }),
        ],
      }),
    );
    expect(s.pods[0]).toEqual({
      name: "web-0",
      uid: "uid-web-0",
      ip: "10.0.0.1",
      state: "Unhealthy",
      since: "2026-01-01T00:00:01Z",
      drained: true,
      lastResult: "HTTP 503",
      unhealthySince: "2026-01-01T00:00:01Z",
      replaceAfter: "2026-01-01T01:00:01Z",
      reason: "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50",
    });
    expect(s.pods[1]).toEqual({
      name: "web-1",
      uid: "uid-web-1",
      ip: "10.0.0.1",
      state: "Unknown",
      since: "2026-01-01T00:00:00Z",
      drained: false,
      reason: "",
    });
  });

  it("keeps at most 1000 pods, dropping Healthy ones first, while counting all", () => {
    const states: HealthStateName[] = Array.from({ length: 1200 }, (_, i) => (i % 100 === 0 ? "Unhealthy" : "Healthy"));
    const s = computeStatus(anInput(podsInStates(states)));
    expect(s.pods).toHaveLength(MAX_STATUS_PODS);
    expect(s.targets).toBe(1200);
    expect(s.pods.filter((p) => p.state === "Unhealthy")).toHaveLength(12);
  });

  it("passes the ledger through and counts replacements of the last 24 hours", () => {
    const now = T0 + 48 * HOUR;
    const replacements = [
      { pod: "old", uid: "u1", time: iso(now - 25 * HOUR), method: "Evict" },
      { pod: "recent", uid: "u2", time: iso(now - 23 * HOUR), method: "Evict" },
      { pod: "now", uid: "u3", time: iso(now), method: "Delete" },
    ];
    const s = computeStatus(anInput({ now, replacements }));
    expect(s.replacements).toEqual(replacements);
    expect(s.replacedInLastDay).toBe(2);
  });

  it("is the same status when computed twice from the same inputs", () => {
    const input = anInput(podsInStates(["Healthy", "Unhealthy", "Unknown"]));
    expect(computeStatus(input)).toEqual(computeStatus(input));
    expect(statusEqual(computeStatus(input), JSON.parse(JSON.stringify(computeStatus(input))))).toBe(true);
  });
});

describe("conditions", () => {
  const readyCases = [
    { reason: "Reconciled", status: "True" },
    { reason: "InvalidSpec", status: "False", message: "spec.probe.timeoutSeconds: must be <= periodSeconds" },
    { reason: "ServiceNotFound", status: "False" },
    { reason: "ServiceHasSelector", status: "False" },
    { reason: "ServiceClaimed", status: "False" },
    {
      reason: "SecretNotFound",
      status: "False",
      message: 'spec.probe.headers[0].valueFrom.secretKeyRef: Secret "probe-auth" not found',
    },
    {
      reason: "SecretForbidden",
      status: "False",
      message: 'spec.probe.signature.secretRef: the operator may not read Secret "probe-key"',
    },
    { reason: "NotSynced", status: "Unknown" },
  ] as const;
  it.each(readyCases)("Ready is $status for $reason", ({ reason, status, ...rest }) => {
    const message = "message" in rest ? rest.message : undefined;
    const s = computeStatus(anInput({ readiness: { reason, ...(message ? { message } : {}) } }));
    expect(condition(s, "Ready")).toMatchObject({
      status,
      reason,
      observedGeneration: 3,
      lastTransitionTime: iso(T0 + HOUR),
    });
    if (message) expect(condition(s, "Ready")?.message).toBe(message);
  });

  it("says in Ready's message which targets cannot be probed, and why", () => {
    const why = 'no TCP container port named "http" in the pod';
    const s = computeStatus(
      anInput({
        pods: [
          aStatusPodInput({
            name: "web-b",
            notProbed: why,
            health: { state: "Unknown", since: T0 },
            decision: { drained: false, reason: `admitted: not probed: ${why}, serving` },
          }),
          aStatusPodInput({ name: "web-a", notProbed: why, health: { state: "Unknown", since: T0 } }),
          aStatusPodInput({ name: "web-c" }),
        ],
      }),
    );
    expect(condition(s, "Ready")).toMatchObject({
      status: "True",
      reason: "Reconciled",
      message: `spec valid, Service found and selector-less, probing running; 2 targets are not probed: web-a (${why}), web-b (${why})`,
    });
    expect(s.pods.find((p) => p.name === "web-b")?.reason).toBe(`admitted: not probed: ${why}, serving`);
    expect(s.targets).toBe(3);
  });

  it.each([
    {
      name: "says in Ready's message that a timeout was capped, naming the field and the cap",
      notes: ["spec.probe.timeoutSeconds 600 capped to 60: the operator's --max-probe-timeout is 60s"],
      notProbed: false,
      message:
        "spec valid, Service found and selector-less, probing running; spec.probe.timeoutSeconds 600 capped to 60: the operator's --max-probe-timeout is 60s",
    },
    {
      name: "puts a capped timeout before the targets not probed",
      notes: ["spec.probe.timeoutSeconds 90 capped to 30: the operator's --max-probe-timeout is 30s"],
      notProbed: true,
      message:
        "spec valid, Service found and selector-less, probing running; spec.probe.timeoutSeconds 90 capped to 30: the operator's --max-probe-timeout is 30s; 1 target is not probed: web-a (hostNetwork pod)",
    },
    {
      name: "says nothing more without a note",
      notes: [],
      notProbed: false,
      message: "spec valid, Service found and selector-less, probing running",
    },
  ])("$name", ({ notes, notProbed, message }) => {
    const pods = notProbed
      ? [aStatusPodInput({ name: "web-a", notProbed: "hostNetwork pod", health: { state: "Unknown", since: T0 } })]
      : [];
    const s = computeStatus(anInput({ readiness: { reason: "Reconciled", notes }, pods }));
    expect(condition(s, "Ready")).toMatchObject({ status: "True", reason: "Reconciled", message });
  });

  it("leaves the other conditions Unknown while the policy is not Ready", () => {
    const s = computeStatus(
      anInput({
        readiness: { reason: "InvalidSpec", message: "spec.selector: required" },
        ...podsInStates(["Unhealthy"]),
      }),
    );
    expect(s.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      "Ready=False/InvalidSpec",
      "Degraded=Unknown/NotEvaluated",
      "FailOpen=Unknown/NotEvaluated",
      "DrainCapped=Unknown/NotEvaluated",
      "ReplacementBlocked=Unknown/NotEvaluated",
      "RolloutSuspect=Unknown/NotEvaluated",
      "DisagreesWithKubelet=Unknown/NotEvaluated",
    ]);
  });

  const stateCases: Array<{ name: string; states: HealthStateName[]; pct?: number; expected: string[] }> = [
    {
      name: "all Healthy",
      states: ["Healthy", "Healthy"],
      expected: ["Degraded=False", "FailOpen=False", "DrainCapped=False"],
    },
    {
      name: "one Unhealthy within the cap",
      states: ["Healthy", "Unhealthy"],
      expected: ["Degraded=True", "FailOpen=False", "DrainCapped=False"],
    },
    {
      name: "Unhealthy pods over the cap",
      states: ["Healthy", "Unhealthy", "Unhealthy", "Healthy"],
      pct: 25,
      expected: ["Degraded=True", "FailOpen=False", "DrainCapped=True"],
    },
    {
      name: "no Healthy target",
      states: ["Unknown", "Unhealthy"],
      expected: ["Degraded=True", "FailOpen=True", "DrainCapped=False"],
    },
    {
      name: "only Unknown targets",
      states: ["Unknown", "Unknown"],
      expected: ["Degraded=False", "FailOpen=True", "DrainCapped=False"],
    },
    { name: "no targets", states: [], expected: ["Degraded=False", "FailOpen=False", "DrainCapped=False"] },
  ];
  it.each(stateCases)("reports $name", ({ states, pct, expected }) => {
    const s = computeStatus(anInput(podsInStates(states, pct)));
    expect(["Degraded", "FailOpen", "DrainCapped"].map((t) => `${t}=${condition(s, t)?.status}`)).toEqual(expected);
  });

  it.each([
    {
      states: ["Unknown", "Unknown"],
      reason: "NoTargetProbedYet",
      message: "no target probed yet: all 2 targets kept in rotation as kubelet says until their first probes",
    },
    {
      states: ["Unknown", "Unhealthy"],
      reason: "NoHealthyTarget",
      message: "no target is both Healthy and kubelet-Ready: all 2 targets kept in rotation as kubelet says",
    },
  ])(
    "tells fail open before any probe ($reason) from fail open with Unhealthy targets",
    ({ states, reason, message }) => {
      const s = computeStatus(anInput(podsInStates(states as never)));
      expect(condition(s, "FailOpen")).toMatchObject({ status: "True", reason, message });
    },
  );

  it.each([
    {
      states: ["Healthy", "Unhealthy", "Unhealthy", "Healthy"] as const,
      message: "1 Unhealthy target kept in rotation: maxUnhealthyPercent=25 allows 1 drained",
    },
    {
      states: ["Healthy", "Unhealthy", "Unhealthy", "Unhealthy"] as const,
      message: "2 Unhealthy targets kept in rotation: maxUnhealthyPercent=25 allows 1 drained",
    },
  ])("explains the cap in DrainCapped's message: $message", ({ states, message }) => {
    const s = computeStatus(anInput(podsInStates([...states], 25)));
    expect(condition(s, "DrainCapped")).toMatchObject({ reason: "MaxUnhealthyPercent", message });
  });

  it.each(["Budget", "PodDisruptionBudget", "Veto", "NoController", "FailOpen"] as const)(
    "ReplacementBlocked carries reason %s",
    (reason) => {
      const s = computeStatus(anInput({ replacementBlocked: { blocked: true, reason, message: "web-0 waits" } }));
      expect(condition(s, "ReplacementBlocked")).toMatchObject({ status: "True", reason, message: "web-0 waits" });
    },
  );

  it("moves lastTransitionTime only when a condition's status changes", () => {
    const first = computeStatus(anInput({ now: T0, ...podsInStates(["Healthy", "Unhealthy"]) }));
    const sameStatusNewMessage = computeStatus(
      anInput({ now: T0 + MINUTE, previous: first, ...podsInStates(["Healthy", "Unhealthy", "Unhealthy", "Healthy"]) }),
    );
    expect(condition(sameStatusNewMessage, "Degraded")).toMatchObject({ status: "True", lastTransitionTime: iso(T0) });
    expect(condition(sameStatusNewMessage, "Degraded")?.message).not.toBe(condition(first, "Degraded")?.message);
    const recovered = computeStatus(
      anInput({ now: T0 + 2 * MINUTE, previous: sameStatusNewMessage, ...podsInStates(["Healthy"]) }),
    );
    expect(condition(recovered, "Degraded")).toMatchObject({
      status: "False",
      lastTransitionTime: iso(T0 + 2 * MINUTE),
    });
    expect(condition(recovered, "Ready")?.lastTransitionTime).toBe(iso(T0));
  });

  it("keeps conditions of other types written by someone else", () => {
    const previous = aStatus({
      conditions: [
        {
          type: "Custom",
          status: "True",
          reason: "X",
          message: "",
          lastTransitionTime: iso(T0),
          observedGeneration: 1,
        },
      ],
    });
    expect(condition(computeStatus(anInput({ previous })), "Custom")).toEqual(previous.conditions[0]);
  });

  it("setStatusCondition adds a new condition stamped now and updates an existing one in place", () => {
    const added = setStatusCondition([], { type: "Ready", status: "True", reason: "Reconciled", message: "ok" }, 1, T0);
    const updated = setStatusCondition(
      added,
      { type: "Ready", status: "True", reason: "Reconciled", message: "still ok" },
      2,
      T0 + SECOND,
    );
    expect(updated).toEqual([
      {
        type: "Ready",
        status: "True",
        reason: "Reconciled",
        message: "still ok",
        lastTransitionTime: iso(T0),
        observedGeneration: 2,
      },
    ]);
  });
});

describe("statusEqual", () => {
  const base = computeStatus(anInput(podsInStates(["Healthy", "Unhealthy", "Unknown"])));
  const cases = [
    {
      name: "equal to itself with lists reordered",
      change: (s: typeof base) => ({ ...s, pods: [...s.pods].reverse(), conditions: [...s.conditions].reverse() }),
      equal: true,
    },
    {
      name: "equal when an optional field is present but undefined",
      change: (s: typeof base) => ({ ...s, pods: s.pods.map((p) => ({ ...p, replaceAfter: undefined })) }),
      equal: true,
    },
    {
      name: "different when a pod's drained flag changes",
      change: (s: typeof base) => ({ ...s, pods: s.pods.map((p, i) => (i === 0 ? { ...p, drained: !p.drained } : p)) }),
      equal: false,
    },
    {
      name: "different when a condition's message changes",
      change: (s: typeof base) => ({
        ...s,
        conditions: s.conditions.map((c, i) => (i === 1 ? { ...c, message: "x" } : c)),
      }),
      equal: false,
    },
    {
      name: "different when a count changes",
      change: (s: typeof base) => ({ ...s, drained: s.drained + 1 }),
      equal: false,
    },
    {
      name: "different when the ledger grows",
      change: (s: typeof base) => ({ ...s, replacements: [{ pod: "p", uid: "u", time: iso(T0), method: "Evict" }] }),
      equal: false,
    },
  ];
  it.each(cases)("is $name", ({ change, equal }) => {
    expect(statusEqual(base, change(base))).toBe(equal);
  });

  it("treats a missing status as different from any status", () => {
    expect(statusEqual(undefined, base)).toBe(false);
    expect(statusEqual(undefined, undefined)).toBe(true);
  });
});

describe("computeHealthSeeds", () => {
  it("restores state and the replacement window from status.pods", () => {
    const s = computeStatus(anInput(podsInStates(["Healthy", "Unhealthy"])));
    const seeds = computeHealthSeeds(s.pods);
    expect(seeds.get("uid-web-1")).toEqual({
      state: "Unhealthy",
      since: T0 + MINUTE,
      unhealthySince: T0 + MINUTE,
      lastResult: "HTTP 503",
    });
    expect(seeds.get("uid-web-0")).toEqual({ state: "Healthy", since: T0, lastResult: "HTTP 200" });
  });

  it("skips entries whose time does not parse", () => {
    expect(
      computeHealthSeeds([
        { name: "a", uid: "u", ip: "", state: "Healthy", since: "garbage", drained: false, reason: "" },
      ]).size,
    ).toBe(0);
  });
});
