import { describe, it, expect } from "@jest/globals";
import type { DrainDecision, DrainPlan } from "./drain.js";
import {
  isGateServing,
  planGateConditions,
  planGateDrain,
  planGateRelease,
  withoutUngatedDrains,
  type ReleasePod,
  type GateDrainPod,
  type GatePod,
  type GateServingInput,
} from "./gate-plan.js";
import { MINUTE, T0 } from "./testing/builders.js";

const admitted = (reason = "admitted: healthy"): DrainDecision => ({ admitted: true, drained: false, reason });
const drained = (reason = "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50"): DrainDecision => ({
  admitted: false,
  drained: true,
  reason,
});
const waiting: DrainDecision = {
  admitted: false,
  drained: false,
  reason: "not admitted: unknown, waiting for first success",
};

function aGatePod(name: string, over: Partial<GatePod> = {}): GatePod {
  return { uid: `uid-${name}`, name, gated: true, ...over };
}

function aPlan(
  decisions: Record<string, DrainDecision>,
  over: Partial<Pick<DrainPlan, "warmUp" | "mode">> = {},
): Pick<DrainPlan, "decisions" | "warmUp" | "mode"> {
  return {
    decisions: new Map(Object.entries(decisions).map(([n, d]) => [`uid-${n}`, d])),
    warmUp: [],
    mode: "active",
    ...over,
  };
}

describe("planGateConditions", () => {
  it.each<
    [
      string,
      GatePod,
      DrainDecision,
      Partial<Pick<DrainPlan, "warmUp" | "mode">>,
      ReadonlySet<string> | undefined,
      object | undefined,
    ]
  >([
    [
      "admits a healthy pod with no condition yet",
      aGatePod("a"),
      admitted(),
      {},
      undefined,
      { status: "True", reason: "Admitted", message: "admitted: healthy", transition: true },
    ],
    [
      "keeps a drained pod out as Unhealthy",
      aGatePod("a", { condition: { status: "True", reason: "Admitted", message: "admitted: healthy" } }),
      drained(),
      {},
      undefined,
      { status: "False", reason: "Unhealthy", transition: true },
    ],
    [
      "keeps a new pod out as WarmingUp until its first success",
      aGatePod("a"),
      waiting,
      { warmUp: ["uid-a"] },
      undefined,
      { status: "False", reason: "WarmingUp", message: waiting.reason },
    ],
    [
      "says Quarantined for a pod the plan keeps out as flapping",
      aGatePod("a"),
      drained(),
      {},
      new Set(["uid-a"]),
      { status: "False", reason: "Quarantined" },
    ],
    [
      "writes nothing when the condition already says the same",
      aGatePod("a", { condition: { status: "True", reason: "Admitted", message: "admitted: healthy" } }),
      admitted(),
      {},
      undefined,
      undefined,
    ],
    [
      "rewrites the message alone without a transition",
      aGatePod("a", { condition: { status: "True", reason: "Admitted", message: "admitted: unknown, serving" } }),
      admitted(),
      {},
      undefined,
      { status: "True", transition: false },
    ],
    [
      "writes nothing in dryRun",
      aGatePod("a", { condition: { status: "False", reason: "Unhealthy", message: "x" } }),
      admitted(),
      { mode: "dryRun" },
      undefined,
      undefined,
    ],
    [
      "restores a pod when drain is disabled",
      aGatePod("a", { condition: { status: "False", reason: "Unhealthy", message: "x" } }),
      admitted("kept: drain disabled (unhealthy)"),
      { mode: "disabled" },
      undefined,
      { status: "True", reason: "Admitted", transition: true },
    ],
  ])("%s", (_name, pod, decision, plan, quarantined, expected) => {
    const out = planGateConditions({
      pods: [pod],
      drain: aPlan({ [pod.name]: decision }, plan),
      ...(quarantined ? { quarantined } : {}),
    });
    expect(out.patches[0] && { ...out.patches[0].condition, transition: out.patches[0].transition }).toEqual(
      expected === undefined ? undefined : expect.objectContaining(expected),
    );
  });

  it("leaves a pod without a decision (not Running, terminating) as it is", () => {
    const out = planGateConditions({ pods: [aGatePod("gone", { condition: { status: "True" } })], drain: aPlan({}) });
    expect(out.patches).toEqual([]);
  });

  it("lists pods without the gate by name and writes nothing on them", () => {
    const out = planGateConditions({
      pods: [aGatePod("c", { gated: false }), aGatePod("a"), aGatePod("b", { gated: false })],
      drain: aPlan({ a: admitted(), b: drained(), c: admitted() }),
    });
    expect([out.ungated, out.patches.map((p) => p.name)]).toEqual([["b", "c"], ["a"]]);
  });

  it("shortens a long verdict to 1024 characters", () => {
    const out = planGateConditions({ pods: [aGatePod("a")], drain: aPlan({ a: admitted("x".repeat(5000)) }) });
    expect(out.patches[0]!.condition.message).toHaveLength(1024);
  });
});

describe("isGateServing", () => {
  const base: GateServingInput = {
    gated: true,
    podReady: false,
    readyBesidesGate: true,
    gateStatus: undefined,
    known: false,
  };
  it.each<[string, Partial<GateServingInput>, boolean]>([
    ["a gated pod whose condition is True", { gateStatus: "True", known: true }, true],
    ["a gated pod the operator kept out (False), even after a restart", { gateStatus: "False" }, false],
    ["a ready gated pod without the condition and no state for it (a new policy, a restart)", {}, true],
    ["a gated pod without the condition the policy already knows (a new pod: warm-up)", { known: true }, false],
    ["a gated pod without the condition whose containers are not ready", { readyBesidesGate: false }, false],
    ["a pod without the gate that is Ready", { gated: false, podReady: true, known: true }, true],
    ["a pod without the gate that is not Ready", { gated: false, podReady: false }, false],
  ])("%s: %s", (_name, over, expected) => {
    expect(isGateServing({ ...base, ...over })).toBe(expected);
  });
});

describe("withoutUngatedDrains", () => {
  it("keeps a pod without the gate in rotation, saying it would have been drained, and counts it as not drained", () => {
    const plan = {
      decisions: new Map([
        ["uid-a", drained()],
        ["uid-b", drained()],
        ["uid-c", admitted()],
      ]),
      drainedCount: 2,
    } as DrainPlan;
    const out = withoutUngatedDrains(plan, new Set(["uid-a", "uid-c"]));
    expect(out.decisions.get("uid-a")).toEqual({
      admitted: true,
      drained: false,
      reason: `kept: the pod has no readiness gate healthprobe.io/ready, so it cannot be kept out (would be ${drained().reason})`,
    });
    expect(out.decisions.get("uid-c")?.reason).toBe(
      "admitted: healthy; the pod has no readiness gate healthprobe.io/ready, so it cannot be kept out",
    );
    expect([out.decisions.get("uid-b"), out.drainedCount]).toEqual([drained(), 1]);
  });
});

function aDrainPod(name: string, over: Partial<GateDrainPod> = {}): GateDrainPod {
  return {
    uid: `uid-${name}`,
    name,
    state: "Healthy",
    gated: true,
    podReady: true,
    readyBesidesGate: true,
    known: true,
    condition: { status: "True", reason: "Admitted", message: "admitted: healthy" },
    ...over,
  };
}

describe("planGateDrain", () => {
  const settings = { maxUnhealthyPercent: 50, drainEnabled: true, dryRun: false };

  it("drains an Unhealthy pod by writing False, and leaves the healthy ones alone", () => {
    const pods = [aDrainPod("a"), aDrainPod("b", { state: "Unhealthy", unhealthySince: T0 })];
    const { drain, gate } = planGateDrain({ ...settings, pods });
    expect(drain.drainedCount).toBe(1);
    expect(gate.patches.map((p) => [p.name, p.condition.status, p.condition.reason])).toEqual([
      ["b", "False", "Unhealthy"],
    ]);
  });

  it("counts a pod it drained as drained on the next plan, though its own Ready is now False (the cap is not spent twice)", () => {
    const out = {
      status: "False",
      reason: "Unhealthy",
      message: "drained: longest unhealthy, 1 of 1 allowed by maxUnhealthyPercent=50",
    };
    const pods = [
      aDrainPod("a"),
      aDrainPod("b", { state: "Unhealthy", unhealthySince: T0, podReady: false, condition: out }),
      aDrainPod("c", { state: "Unhealthy", unhealthySince: T0 + MINUTE }),
    ];
    const { drain, gate } = planGateDrain({ ...settings, pods });
    expect([drain.drainedCount, drain.capped]).toEqual([1, ["uid-c"]]);
    // b stays as it is; c stays in, its message now saying why.
    expect(gate.patches.map((p) => [p.name, p.condition.status, p.condition.message])).toEqual([
      ["c", "True", "kept: over the cap, 1 of 1 allowed by maxUnhealthyPercent=50 already drained"],
    ]);
  });

  it("fails open when no pod is Healthy and ready but for the gate: every pod gets True", () => {
    const pods = [
      aDrainPod("a", {
        state: "Unhealthy",
        unhealthySince: T0,
        podReady: false,
        condition: { status: "False", reason: "Unhealthy", message: "x" },
      }),
      aDrainPod("b", { state: "Unhealthy", unhealthySince: T0 }),
    ];
    const { drain, gate } = planGateDrain({ ...settings, pods });
    expect(drain.failOpen).toBe(true);
    expect(gate.patches.map((p) => [p.name, p.condition.status])).toEqual([
      ["a", "True"],
      ["b", "True"],
    ]);
  });

  it("adopts pods without the condition when the policy is new, and keeps a new pod out when it is not", () => {
    const fresh = { condition: undefined, podReady: false };
    const adopted = planGateDrain({
      ...settings,
      pods: [aDrainPod("a", { ...fresh, state: "Unknown", known: false })],
    });
    const newPod = planGateDrain({
      ...settings,
      pods: [aDrainPod("h"), aDrainPod("n", { ...fresh, state: "Unknown", known: true })],
    });
    expect(adopted.gate.patches.map((p) => [p.name, p.condition.status])).toEqual([["a", "True"]]);
    expect(newPod.gate.patches.map((p) => [p.name, p.condition.status, p.condition.reason])).toEqual([
      ["n", "False", "WarmingUp"],
    ]);
  });

  it("reports a pod without the gate and keeps it in rotation, with a verdict saying why", () => {
    const pods = [
      aDrainPod("a"),
      aDrainPod("b", { gated: false, condition: undefined, state: "Unhealthy", unhealthySince: T0 }),
    ];
    const { drain, gate } = planGateDrain({ ...settings, pods });
    expect([gate.ungated, drain.drainedCount, drain.decisions.get("uid-b")?.reason]).toEqual([
      ["b"],
      0,
      expect.stringContaining("cannot be kept out"),
    ]);
  });
});

describe("planGateRelease", () => {
  const aReleasePod = (name: string, over: Partial<ReleasePod> = {}): ReleasePod => ({
    uid: `uid-${name}`,
    name,
    gated: true,
    held: false,
    terminating: false,
    ...over,
  });
  it.each<[string, Partial<ReleasePod>, boolean]>([
    [
      "a pod left False by a policy that no longer holds it gets True",
      { condition: { status: "False", reason: "Unhealthy" } },
      true,
    ],
    ["a gated pod without the condition and no policy gets True", {}, true],
    ["a pod a policy holds is left to that policy", { held: true, condition: { status: "False" } }, false],
    ["a pod already True is not written again", { condition: { status: "True", reason: "Admitted" } }, false],
    ["a pod without the gate is not written", { gated: false }, false],
    ["a terminating pod is not written", { terminating: true, condition: { status: "False" } }, false],
  ])("%s", (_name, over, written) => {
    const patches = planGateRelease([aReleasePod("a", over)]);
    expect(patches.map((p) => [p.name, p.condition.status, p.condition.reason])).toEqual(
      written ? [["a", "True", "NoPolicy"]] : [],
    );
  });
});
