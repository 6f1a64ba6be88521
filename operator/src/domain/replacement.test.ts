import { describe, it, expect } from "@jest/globals";
import { HOUR_MS } from "./budget.js";
import {
  computeReplaceAfter,
  formatDuration,
  planReplacements,
  shouldReplace,
  type OtherPolicyView,
  type ShouldReplaceInput,
} from "./replacement.js";
import {
  aBudget,
  aCandidate,
  anEntry,
  anInput,
  aPlanInput,
  aPod,
  aPolicy,
  aView,
  MIN,
  NOW as T0,
} from "./testing/replacement-builders.js";

describe("shouldReplace: the first failing step is reported", () => {
  const cases: Array<{
    name: string;
    input: ShouldReplaceInput;
    step: string;
    blockedReason?: string;
    waitUntil?: number;
    reason: RegExp;
  }> = [
    {
      name: "replacement disabled",
      input: anInput({ policy: aPolicy({ replacementEnabled: false }) }),
      step: "Enabled",
      reason: /disabled/,
    },
    { name: "dryRun", input: anInput({ policy: aPolicy({ dryRun: true }) }), step: "Enabled", reason: /dryRun/ },
    {
      name: "dryRun comes before every other step, even for a bare pod",
      input: anInput({ policy: aPolicy({ dryRun: true }), pod: aPod({ ownerReferences: [] }) }),
      step: "Enabled",
      reason: /dryRun/,
    },
    {
      name: "a Healthy pod",
      input: anInput({ pod: aPod({ state: "Healthy", unhealthySince: undefined }) }),
      step: "Window",
      reason: /pod is Healthy/,
    },
    {
      name: "an Unknown pod",
      input: anInput({ pod: aPod({ state: "Unknown", unhealthySince: undefined }) }),
      step: "Window",
      reason: /pod is Unknown/,
    },
    {
      name: "an Unhealthy pod without a known start",
      input: anInput({ pod: aPod({ unhealthySince: undefined }) }),
      step: "Window",
      reason: /unknown time/,
    },
    {
      name: "an Unhealthy pod one minute short of its window waits until the window ends",
      input: anInput({ pod: aPod({ unhealthySince: T0 - 59 * MIN }) }),
      step: "Window",
      waitUntil: T0 + MIN,
      reason: /^Unhealthy since 2026-11-30T09:01:00Z, replacement window of 1h ends 2026-11-30T10:01:00Z$/,
    },
    {
      name: "one millisecond before the window ends",
      input: anInput({ now: T0 + HOUR_MS - 1, pod: aPod({ unhealthySince: T0 }) }),
      step: "Window",
      waitUntil: T0 + HOUR_MS,
      reason: /ends 2026-11-30T11:00:00Z/,
    },
    {
      name: "another policy sees the pod Healthy",
      input: anInput({
        otherViews: [aView({ state: "Healthy", unhealthySince: undefined })],
        otherBudgets: [aBudget()],
      }),
      step: "Agreement",
      blockedReason: "Veto",
      reason: /^vetoed: policy shop\/canary sees the pod Healthy$/,
    },
    {
      name: "another policy has no verdict yet",
      input: anInput({
        otherViews: [aView({ state: "Unknown", unhealthySince: undefined })],
        otherBudgets: [aBudget()],
      }),
      step: "Agreement",
      blockedReason: "Veto",
      reason: /no verdict on the pod yet \(Unknown\)/,
    },
    {
      name: "another policy sees it Unhealthy for less than its own window",
      input: anInput({
        otherViews: [aView({ unhealthySince: T0 - 10 * MIN, afterMs: 30 * MIN })],
        otherBudgets: [aBudget()],
      }),
      step: "Agreement",
      blockedReason: "Veto",
      waitUntil: T0 + 20 * MIN,
      reason: /only since 2026-11-30T09:50:00Z, its window of 30m ends 2026-11-30T10:20:00Z/,
    },
    {
      name: "two short views wait for the later window",
      input: anInput({
        otherViews: [
          aView({ unhealthySince: T0 - 10 * MIN }),
          aView({ policy: "shop/b", unhealthySince: T0 - 50 * MIN }),
        ],
        otherBudgets: [aBudget(), aBudget({ policy: "shop/b" })],
      }),
      step: "Agreement",
      blockedReason: "Veto",
      waitUntil: T0 + 50 * MIN,
      reason: /shop\/canary.*; policy shop\/b/,
    },
    {
      name: "a healthy view next to a short one has no time to wait for",
      input: anInput({
        otherViews: [
          aView({ unhealthySince: T0 - 10 * MIN }),
          aView({ policy: "shop/b", state: "Healthy", unhealthySince: undefined }),
        ],
        otherBudgets: [aBudget(), aBudget({ policy: "shop/b" })],
      }),
      step: "Agreement",
      blockedReason: "Veto",
      reason: /shop\/b sees the pod Healthy/,
    },
    {
      name: "a veto comes before the missing controller",
      input: anInput({
        pod: aPod({ ownerReferences: [] }),
        otherViews: [aView({ state: "Healthy" })],
        otherBudgets: [aBudget()],
      }),
      step: "Agreement",
      blockedReason: "Veto",
      reason: /Healthy/,
    },
    {
      name: "a bare pod",
      input: anInput({ pod: aPod({ ownerReferences: undefined }) }),
      step: "Controller",
      blockedReason: "NoController",
      reason: /no controller ownerReference/,
    },
    {
      name: "a pod whose owners are not its controller",
      input: anInput({
        pod: aPod({
          ownerReferences: [
            { kind: "ConfigMap", name: "x" },
            { kind: "Job", name: "y", controller: false },
          ],
        }),
      }),
      step: "Controller",
      blockedReason: "NoController",
      reason: /no controller ownerReference/,
    },
    {
      name: "a terminating pod",
      input: anInput({ pod: aPod({ terminating: true }) }),
      step: "Terminating",
      reason: /already terminating/,
    },
    {
      name: "the policy's hourly budget is used",
      input: anInput({ policy: aPolicy({ ledger: [anEntry({ time: T0 - 46 * MIN })] }) }),
      step: "Budget",
      blockedReason: "Budget",
      waitUntil: T0 + 14 * MIN,
      reason: /^hourly budget of policy shop\/web used 1\/1, next slot 2026-11-30T10:14:00Z$/,
    },
    {
      name: "another selecting policy's budget is used",
      input: anInput({
        otherViews: [aView()],
        otherBudgets: [aBudget({ ledger: [anEntry({ time: T0 - 30 * MIN })] })],
      }),
      step: "Budget",
      blockedReason: "Budget",
      waitUntil: T0 + 30 * MIN,
      reason: /hourly budget of policy shop\/canary used 1\/1/,
    },
    {
      name: "a selecting policy with replacement disabled still has its budget respected",
      input: anInput({
        otherViews: [aView({ replacementEnabled: false, state: "Healthy" })],
        otherBudgets: [aBudget({ ledger: [anEntry({ time: T0 - 30 * MIN })] })],
      }),
      step: "Budget",
      blockedReason: "Budget",
      waitUntil: T0 + 30 * MIN,
      reason: /shop\/canary/,
    },
    {
      name: "the operator-wide cap is used",
      input: anInput({
        max12h: 2,
        operatorLedger: [anEntry({ uid: "1", time: T0 - 11 * HOUR_MS }), anEntry({ uid: "2", time: T0 - HOUR_MS })],
      }),
      step: "Budget",
      blockedReason: "Budget",
      waitUntil: T0 + HOUR_MS,
      reason: /^operator-wide budget used 2\/2 in 12h, next slot 2026-11-30T11:00:00Z$/,
    },
    {
      name: "several budgets block: wait for the last one to free",
      input: anInput({
        policy: aPolicy({ ledger: [anEntry({ time: T0 - 50 * MIN })] }),
        otherViews: [aView()],
        otherBudgets: [aBudget({ ledger: [anEntry({ time: T0 - 20 * MIN })] })],
        max12h: 1,
        operatorLedger: [anEntry({ time: T0 - 50 * MIN })],
      }),
      step: "Budget",
      blockedReason: "Budget",
      waitUntil: T0 + 12 * HOUR_MS - 50 * MIN,
      reason: /shop\/web.*; .*shop\/canary.*; operator-wide/,
    },
    {
      name: "a selecting policy whose ledger cannot be read",
      input: anInput({ otherViews: [aView()], otherBudgets: [aBudget({ ledger: null })] }),
      step: "Budget",
      blockedReason: "Budget",
      reason: /ledger of policy shop\/canary cannot be read/,
    },
    {
      name: "a selecting policy whose ledger was not supplied",
      input: anInput({ otherViews: [aView()], otherBudgets: [] }),
      step: "Budget",
      blockedReason: "Budget",
      reason: /ledger of policy shop\/canary cannot be read/,
    },
    {
      name: "the operator-wide ledger cannot be read",
      input: anInput({ operatorLedger: null }),
      step: "Budget",
      blockedReason: "Budget",
      reason: /operator-wide ledger cannot be read/,
    },
    {
      name: "an unreadable ledger next to a full one has no time to wait for",
      input: anInput({ policy: aPolicy({ ledger: [anEntry()] }), operatorLedger: null }),
      step: "Budget",
      blockedReason: "Budget",
      reason: /used 1\/1.*operator-wide ledger cannot be read/,
    },
    {
      name: "maxPerHour 0 never replaces",
      input: anInput({ policy: aPolicy({ maxPerHour: 0 }) }),
      step: "Budget",
      blockedReason: "Budget",
      reason: /is 0: replacement never fits/,
    },
    {
      name: "a recent PodDisruptionBudget refusal",
      input: anInput({ pdbBlockedUntil: T0 + 5 * MIN }),
      step: "PodDisruptionBudget",
      blockedReason: "PodDisruptionBudget",
      waitUntil: T0 + 5 * MIN,
      reason: /retry at 2026-11-30T10:05:00Z/,
    },
    {
      name: "a used budget is reported before a PodDisruptionBudget refusal",
      input: anInput({ pdbBlockedUntil: T0 + 5 * MIN, policy: aPolicy({ ledger: [anEntry()] }) }),
      step: "Budget",
      blockedReason: "Budget",
      waitUntil: T0 + 50 * MIN,
      reason: /hourly/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const decision = shouldReplace(c.input);
      expect(decision.eligible).toBe(false);
      if (decision.eligible) return;
      expect(decision.step).toBe(c.step);
      expect(decision.blockedReason).toBe(c.blockedReason);
      expect(decision.waitUntil).toBe(c.waitUntil);
      expect(decision.reason).toMatch(c.reason);
      if (decision.waitUntil !== undefined) expect(decision.waitUntil).toBeGreaterThan(c.input.now);
    });
  }
});

describe("shouldReplace: eligible pods", () => {
  const cases: Array<{ name: string; input: ShouldReplaceInput }> = [
    { name: "exactly when the window ends", input: anInput({ pod: aPod({ unhealthySince: T0 - HOUR_MS }) }) },
    {
      name: "when the other policy's own window has ended too",
      input: anInput({
        otherViews: [aView({ unhealthySince: T0 - 30 * MIN, afterMs: 30 * MIN })],
        otherBudgets: [aBudget()],
      }),
    },
    {
      name: "when the other policy has replacement disabled and sees it Healthy",
      input: anInput({
        otherViews: [aView({ replacementEnabled: false, state: "Healthy" })],
        otherBudgets: [aBudget()],
      }),
    },
    { name: "when a PodDisruptionBudget refusal has expired", input: anInput({ pdbBlockedUntil: T0 }) },
    {
      name: "when the hourly slot freed exactly now",
      input: anInput({ policy: aPolicy({ ledger: [anEntry({ time: T0 - HOUR_MS })] }) }),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(shouldReplace(c.input).eligible).toBe(true);
    });
  }

  it("charges every selecting policy, the deciding one first, and the operator-wide ledger at now", () => {
    const decision = shouldReplace(
      anInput({
        policy: aPolicy({ method: "Delete" }),
        otherViews: [
          aView({ policy: "shop/z" }),
          aView({ policy: "shop/b", replacementEnabled: false, state: "Healthy" }),
        ],
        otherBudgets: [
          aBudget({ policy: "shop/z" }),
          aBudget({ policy: "shop/b" }),
          aBudget({ policy: "shop/unrelated", ledger: null }),
        ],
      }),
    );
    expect(decision).toEqual({
      eligible: true,
      reason: "Unhealthy since 2026-11-30T08:00:00Z, past its window of 1h: deleting",
      charge: {
        policies: ["shop/web", "shop/b", "shop/z"],
        operator: true,
        entry: { pod: "web-a", uid: "uid-a", time: T0, method: "Delete", policy: "shop/web", namespace: "shop" },
        reattempt: false,
      },
    });
  });

  it("re-attempts a pod whose earlier charge took the last slot, moving the charge instead of adding one", () => {
    const own = anEntry({ pod: "web-a", uid: "uid-a", time: T0 - 5 * MIN, policy: "shop/web" });
    const decision = shouldReplace(anInput({ policy: aPolicy({ ledger: [own] }), operatorLedger: [own], max12h: 1 }));
    expect(decision.eligible).toBe(true);
    if (!decision.eligible) return;
    expect(decision.charge.reattempt).toBe(true);
    expect(decision.charge.entry.time).toBe(T0);
  });
});

describe("shouldReplace: re-attempts after a crash or a failed call", () => {
  it("treats a re-attempt after its own charge left the window as a fresh charge that other pods' charges can block", () => {
    const own = anEntry({ pod: "web-a", uid: "uid-a", time: T0 - 70 * MIN });
    const other = anEntry({ uid: "uid-b", time: T0 - 10 * MIN });
    const decision = shouldReplace(anInput({ policy: aPolicy({ ledger: [own, other] }) }));
    expect(decision).toMatchObject({ eligible: false, step: "Budget", waitUntil: T0 + 50 * MIN });
  });

  it("still stops a re-attempt at the steps before the budget: a pod that recovered is left alone", () => {
    const own = anEntry({ pod: "web-a", uid: "uid-a", time: T0 - 5 * MIN });
    const decision = shouldReplace(
      anInput({ policy: aPolicy({ ledger: [own] }), pod: aPod({ state: "Healthy", unhealthySince: undefined }) }),
    );
    expect(decision).toMatchObject({ eligible: false, step: "Window" });
  });
});

describe("computeReplaceAfter and formatDuration", () => {
  it("ends the window `after` past the start of Unhealthy, and has no end without a start", () => {
    expect(computeReplaceAfter(T0, HOUR_MS)).toBe(T0 + HOUR_MS);
    expect(computeReplaceAfter(undefined, HOUR_MS)).toBeUndefined();
  });

  const durations: Array<[number, string]> = [
    [30 * 1000, "30s"],
    [HOUR_MS, "1h"],
    [90 * MIN, "1h30m"],
    [168 * HOUR_MS + 1000, "168h1s"],
    [0, "0s"],
  ];
  for (const [ms, text] of durations) {
    it(`writes ${ms} ms as ${text}`, () => expect(formatDuration(ms)).toBe(text));
  }
});

describe("planReplacements", () => {
  it("gives the only hourly slot to the longest unhealthy pod and blocks the next until that slot frees", () => {
    const plan = planReplacements(
      aPlanInput({
        candidates: [
          aCandidate({ uid: "uid-b", name: "web-b", unhealthySince: T0 - 2 * HOUR_MS }),
          aCandidate({ uid: "uid-a", name: "web-a", unhealthySince: T0 - 3 * HOUR_MS }),
        ],
      }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-a"]);
    expect(plan.attempts[0]!.charge.entry).toEqual({
      pod: "web-a",
      uid: "uid-a",
      time: T0,
      method: "Evict",
      policy: "shop/web",
      namespace: "shop",
    });
    expect(plan.blocked).toEqual([
      {
        podUid: "uid-b",
        podName: "web-b",
        step: "Budget",
        blockedReason: "Budget",
        waitUntil: T0 + HOUR_MS,
        reason: "hourly budget of policy shop/web used 1/1, next slot 2026-11-30T11:00:00Z",
      },
    ]);
    expect(plan.requeueAt).toBe(T0 + HOUR_MS);
    expect(plan.condition).toEqual({
      blocked: true,
      reason: "Budget",
      message:
        "1 due replacement is waiting. web-b: hourly budget of policy shop/web used 1/1, next slot 2026-11-30T11:00:00Z",
    });
  });

  it("says a spent budget once for every pod it holds, naming them, with the next slot in whole seconds", () => {
    const plan = planReplacements(
      aPlanInput({
        now: T0 + 749,
        candidates: ["a", "b", "c"].map((n, i) =>
          aCandidate({ uid: `uid-${n}`, name: `web-${n}`, unhealthySince: T0 - (3 - i) * HOUR_MS }),
        ),
      }),
    );
    expect(plan.condition.message).toBe(
      "2 due replacements are waiting. web-b, web-c: hourly budget of policy shop/web used 1/1, next slot 2026-11-30T11:00:01Z",
    );
  });

  it("breaks ties in unhealthy time by pod name", () => {
    const plan = planReplacements(
      aPlanInput({ candidates: [aCandidate({ uid: "2", name: "web-b" }), aCandidate({ uid: "1", name: "web-a" })] }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-a"]);
    expect(plan.blocked.map((b) => b.podName)).toEqual(["web-b"]);
  });

  it("replaces several pods when the hourly budget allows", () => {
    const plan = planReplacements(
      aPlanInput({
        policy: aPolicy({ maxPerHour: 2, maxPerDay: 2 }),
        candidates: ["a", "b", "c"].map((n, i) =>
          aCandidate({ uid: n, name: `web-${n}`, unhealthySince: T0 - (3 - i) * HOUR_MS }),
        ),
      }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-a", "web-b"]);
    expect(plan.blocked[0]!.reason).toMatch(
      /hourly budget of policy shop\/web used 2\/2.*daily budget of policy shop\/web used 2\/2/,
    );
    expect(plan.blocked[0]!.waitUntil).toBe(T0 + 24 * HOUR_MS);
  });

  it("charges another selecting policy within the plan, so its budget also holds across pods", () => {
    const shared: OtherPolicyView[] = [aView({ policy: "shop/canary" })];
    const plan = planReplacements(
      aPlanInput({
        policy: aPolicy({ maxPerHour: 5, maxPerDay: 5 }),
        otherPolicies: [aBudget({ policy: "shop/canary", maxPerHour: 1 })],
        candidates: [
          aCandidate({ uid: "a", name: "web-a", unhealthySince: T0 - 3 * HOUR_MS, otherViews: shared }),
          aCandidate({ uid: "b", name: "web-b", otherViews: shared }),
          aCandidate({ uid: "c", name: "web-c" }),
        ],
      }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-a", "web-c"]);
    expect(plan.attempts[0]!.charge.policies).toEqual(["shop/web", "shop/canary"]);
    expect(plan.blocked.map((b) => [b.podName, b.reason])).toEqual([
      ["web-b", "hourly budget of policy shop/canary used 1/1, next slot 2026-11-30T11:00:00Z"],
    ]);
  });

  it("charges the operator-wide cap within the plan", () => {
    const plan = planReplacements(
      aPlanInput({
        policy: aPolicy({ maxPerHour: 5, maxPerDay: 5 }),
        max12h: 1,
        candidates: [aCandidate({ uid: "a", name: "web-a" }), aCandidate({ uid: "b", name: "web-b" })],
      }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-a"]);
    expect(plan.blocked[0]!.reason).toBe("operator-wide budget used 1/1 in 12h, next slot 2026-11-30T22:00:00Z");
  });

  it("ignores pods that are not Unhealthy and requeues at the earliest window end", () => {
    const plan = planReplacements(
      aPlanInput({
        candidates: [
          aCandidate({ uid: "h", name: "web-h", state: "Healthy", unhealthySince: undefined }),
          aCandidate({ uid: "u", name: "web-u", state: "Unknown", unhealthySince: undefined }),
          aCandidate({ uid: "x", name: "web-x", unhealthySince: T0 - 10 * MIN }),
          aCandidate({ uid: "y", name: "web-y", unhealthySince: T0 - 50 * MIN }),
        ],
      }),
    );
    expect(plan.attempts).toEqual([]);
    expect(plan.blocked.map((b) => [b.podName, b.step, b.waitUntil])).toEqual([
      ["web-y", "Window", T0 + 10 * MIN],
      ["web-x", "Window", T0 + 50 * MIN],
    ]);
    expect(plan.requeueAt).toBe(T0 + 10 * MIN);
    // Windows still running are not due replacements: nothing is blocked.
    expect(plan.condition).toEqual({ blocked: false, reason: "NoneWaiting", message: "no due replacement is waiting" });
  });

  it("replaces nothing in dryRun and says so", () => {
    const plan = planReplacements(aPlanInput({ policy: aPolicy({ dryRun: true }), candidates: [aCandidate()] }));
    expect(plan.attempts).toEqual([]);
    expect(plan.blocked.map((b) => b.step)).toEqual(["Enabled"]);
    expect(plan.requeueAt).toBeUndefined();
    expect(plan.condition.reason).toBe("DryRun");
  });

  it("reports the first blocked pod's reason and names at most three pods per reason", () => {
    const bare = (n: string, h: number) =>
      aCandidate({ uid: n, name: `web-${n}`, ownerReferences: [], unhealthySince: T0 - h * HOUR_MS });
    const plan = planReplacements(
      aPlanInput({
        policy: aPolicy({ replacementEnabled: true }),
        candidates: [bare("a", 9), bare("b", 8), bare("c", 7), bare("d", 6), bare("e", 5)],
      }),
    );
    expect(plan.condition.blocked).toBe(true);
    expect(plan.condition.reason).toBe("NoController");
    expect(plan.condition.message).toBe(
      "5 due replacements are waiting. web-a, web-b, web-c and 2 more: pod has no controller ownerReference: nothing would recreate it",
    );
    expect(plan.requeueAt).toBeUndefined();
  });

  it("replaces nothing while its own ledger cannot be read", () => {
    const plan = planReplacements(aPlanInput({ policy: aPolicy({ ledger: null }), candidates: [aCandidate()] }));
    expect(plan.attempts).toEqual([]);
    expect(plan.blocked[0]!.reason).toBe("ledger of policy shop/web cannot be read");
    expect(plan.condition).toMatchObject({ blocked: true, reason: "Budget" });
  });

  it("waits for a PodDisruptionBudget refusal of one pod while replacing another", () => {
    const plan = planReplacements(
      aPlanInput({
        policy: aPolicy({ maxPerHour: 2, maxPerDay: 3 }),
        candidates: [
          aCandidate({ uid: "a", name: "web-a", pdbBlockedUntil: T0 + 3 * MIN }),
          aCandidate({ uid: "b", name: "web-b" }),
        ],
      }),
    );
    expect(plan.attempts.map((a) => a.podName)).toEqual(["web-b"]);
    expect(plan.blocked.map((b) => [b.podName, b.blockedReason, b.waitUntil])).toEqual([
      ["web-a", "PodDisruptionBudget", T0 + 3 * MIN],
    ]);
    expect(plan.requeueAt).toBe(T0 + 3 * MIN);
  });
});
