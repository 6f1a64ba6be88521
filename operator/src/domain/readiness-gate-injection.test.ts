import { describe, it, expect } from "@jest/globals";
import {
  planGateInjection,
  READINESS_GATE_CONDITION,
  type GatePod,
  type GatePolicy,
} from "./readiness-gate-injection.js";

function aGatePolicy(overrides: Partial<GatePolicy> = {}): GatePolicy {
  return {
    name: "web",
    method: "ReadinessGate",
    selector: { matchLabels: { app: "web" } },
    valid: true,
    dryRun: false,
    deleting: false,
    ...overrides,
  };
}

function aPod(overrides: Partial<GatePod> = {}): GatePod {
  return { labels: { app: "web" }, readinessGates: undefined, ...overrides };
}

const gate = { conditionType: READINESS_GATE_CONDITION };

describe("planGateInjection", () => {
  const cases: Array<{
    name: string;
    policies: GatePolicy[];
    pod: GatePod;
    patch: unknown[] | undefined;
    reason: string;
  }> = [
    {
      name: "a pod selected by a ReadinessGate policy gets readinessGates created",
      policies: [aGatePolicy()],
      pod: aPod(),
      patch: [{ op: "add", path: "/spec/readinessGates", value: [gate] }],
      reason: "readiness gate healthprobe.io/ready added: selected by ReadinessGate policy web",
    },
    {
      name: "a pod with other gates gets the gate appended, keeping theirs",
      policies: [aGatePolicy()],
      pod: aPod({ readinessGates: [{ conditionType: "example.com/lb" }] }),
      patch: [{ op: "add", path: "/spec/readinessGates/-", value: gate }],
      reason: "readiness gate healthprobe.io/ready added: selected by ReadinessGate policy web",
    },
    {
      name: "an empty readinessGates list is appended to, not replaced",
      policies: [aGatePolicy()],
      pod: aPod({ readinessGates: [] }),
      patch: [{ op: "add", path: "/spec/readinessGates/-", value: gate }],
      reason: "readiness gate healthprobe.io/ready added: selected by ReadinessGate policy web",
    },
    {
      name: "a pod that already carries the gate is left alone",
      policies: [aGatePolicy()],
      pod: aPod({ readinessGates: [gate] }),
      patch: undefined,
      reason: "the pod already carries the readiness gate healthprobe.io/ready",
    },
    {
      name: "an EndpointSlice policy selecting the pod adds nothing",
      policies: [aGatePolicy({ method: "EndpointSlice" })],
      pod: aPod(),
      patch: undefined,
      reason: "no ReadinessGate policy selects the pod (0 of 1 policies in its namespace use ReadinessGate)",
    },
    {
      name: "a policy without a method is an EndpointSlice policy (the default)",
      policies: [aGatePolicy({ method: undefined })],
      pod: aPod(),
      patch: undefined,
      reason: "no ReadinessGate policy selects the pod (0 of 1 policies in its namespace use ReadinessGate)",
    },
    {
      name: "a ReadinessGate policy whose selector does not match adds nothing",
      policies: [aGatePolicy({ selector: { matchLabels: { app: "api" } } })],
      pod: aPod(),
      patch: undefined,
      reason: "no ReadinessGate policy selects the pod (1 of 1 policies in its namespace use ReadinessGate)",
    },
    {
      name: "an empty selector selects nothing",
      policies: [aGatePolicy({ selector: {} })],
      pod: aPod(),
      patch: undefined,
      reason: "no ReadinessGate policy selects the pod (1 of 1 policies in its namespace use ReadinessGate)",
    },
    {
      name: "matchExpressions select as the API does",
      policies: [aGatePolicy({ selector: { matchExpressions: [{ key: "tier", operator: "In", values: ["front"] }] } })],
      pod: aPod({ labels: { tier: "front" } }),
      patch: [{ op: "add", path: "/spec/readinessGates", value: [gate] }],
      reason: "readiness gate healthprobe.io/ready added: selected by ReadinessGate policy web",
    },
    {
      name: "a pod without labels is selected by nothing",
      policies: [aGatePolicy()],
      pod: aPod({ labels: undefined }),
      patch: undefined,
      reason: "no ReadinessGate policy selects the pod (1 of 1 policies in its namespace use ReadinessGate)",
    },
    {
      name: "an invalid policy adds no gate it would never set",
      policies: [aGatePolicy({ valid: false })],
      pod: aPod(),
      patch: undefined,
      reason: "no gate added: policy web has an invalid spec",
    },
    {
      name: "a dryRun policy adds no gate (dryRun patches nothing, so the gate would never be set)",
      policies: [aGatePolicy({ dryRun: true })],
      pod: aPod(),
      patch: undefined,
      reason: "no gate added: policy web is in dryRun",
    },
    {
      name: "a policy being deleted adds no gate",
      policies: [aGatePolicy({ deleting: true })],
      pod: aPod(),
      patch: undefined,
      reason: "no gate added: policy web is being deleted",
    },
    {
      name: "one counting policy is enough when another selecting one does not count",
      policies: [aGatePolicy({ name: "b", dryRun: true }), aGatePolicy({ name: "a" })],
      pod: aPod(),
      patch: [{ op: "add", path: "/spec/readinessGates", value: [gate] }],
      reason: "readiness gate healthprobe.io/ready added: selected by ReadinessGate policy a",
    },
    {
      name: "two selecting policies add one gate, both named in order",
      policies: [aGatePolicy({ name: "web-b" }), aGatePolicy({ name: "web-a" })],
      pod: aPod(),
      patch: [{ op: "add", path: "/spec/readinessGates", value: [gate] }],
      reason: "readiness gate healthprobe.io/ready added: selected by ReadinessGate policies web-a, web-b",
    },
    {
      name: "no policy at all adds nothing",
      policies: [],
      pod: aPod(),
      patch: undefined,
      reason: "no ReadinessGate policy selects the pod (0 of 0 policies in its namespace use ReadinessGate)",
    },
  ];

  it.each(cases)("$name", ({ policies, pod, patch, reason }) => {
    const plan = planGateInjection(policies, pod);
    expect(plan.reason).toBe(reason);
    expect(plan.inject ? plan.patch : undefined).toEqual(patch);
  });
});
