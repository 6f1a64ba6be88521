// The status the real control plane's kubelet stand-in writes: Ready follows the readiness gates as
// the kubelet computes it, conditions of other writers are kept, and transition times move only on change.
import { describe, it, expect } from "@jest/globals";
import type { V1Pod, V1PodCondition } from "@kubernetes/client-node";
import { runningStatus, statusDiffers, unmetReadinessGate } from "../../hack/apiserver/controllers/pod-status.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const T1 = Date.parse("2026-01-01T00:05:00Z");
const at = (now: number) => ({ ip: "10.244.3.130", hostIp: "10.244.3.2", now });

function aPod(opts: { gates?: string[]; conditions?: Array<Partial<V1PodCondition>> } = {}): V1Pod {
  return {
    metadata: { name: "web-1", namespace: "shop", uid: "u-1" },
    spec: {
      containers: [{ name: "web", image: "busybox:1.36" }],
      readinessGates: (opts.gates ?? []).map((conditionType) => ({ conditionType })),
    },
    status: { phase: "Pending", conditions: (opts.conditions ?? []) as V1PodCondition[] },
  };
}

const condition = (pod: V1Pod, type: string) => runningStatus(pod, at(T0)).conditions!.find((c) => c.type === type);

describe("the kubelet stand-in's pod status", () => {
  it.each([
    { what: "no readiness gates", gates: [], conditions: [], ready: "True", reason: undefined },
    {
      what: "a gate whose condition is True",
      gates: ["example.com/lb"],
      conditions: [{ type: "example.com/lb", status: "True" }],
      ready: "True",
      reason: undefined,
    },
    {
      what: "a gate whose condition is False",
      gates: ["example.com/lb"],
      conditions: [{ type: "example.com/lb", status: "False" }],
      ready: "False",
      reason: "ReadinessGatesNotReady",
    },
    {
      what: "a gate without a condition",
      gates: ["example.com/lb"],
      conditions: [],
      ready: "False",
      reason: "ReadinessGatesNotReady",
    },
    {
      what: "one of two gates True",
      gates: ["a.io/x", "a.io/y"],
      conditions: [{ type: "a.io/x", status: "True" }],
      ready: "False",
      reason: "ReadinessGatesNotReady",
    },
  ])("is Ready=$ready with $what, while ContainersReady stays True", ({ gates, conditions, ready, reason }) => {
    const pod = aPod({ gates, conditions });
    expect(condition(pod, "Ready")).toMatchObject({ status: ready, ...(reason ? { reason } : {}) });
    expect(condition(pod, "ContainersReady")?.status).toBe("True");
  });

  it("names the missing gate condition in the Ready message as the kubelet does", () => {
    expect(unmetReadinessGate(aPod({ gates: ["example.com/lb"] }))?.message).toBe(
      'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    );
  });

  it("keeps conditions other writers set and the pod's address, host and phase", () => {
    const status = runningStatus(
      aPod({ gates: ["example.com/lb"], conditions: [{ type: "example.com/lb", status: "True" }] }),
      at(T0),
    );
    expect(status).toMatchObject({
      phase: "Running",
      podIP: "10.244.3.130",
      podIPs: [{ ip: "10.244.3.130" }],
      hostIP: "10.244.3.2",
    });
    expect(status.conditions!.map((c) => c.type)).toEqual([
      "PodReadyToStartContainers",
      "Initialized",
      "Ready",
      "ContainersReady",
      "PodScheduled",
      "example.com/lb",
    ]);
    expect(status.containerStatuses).toEqual([
      expect.objectContaining({ name: "web", ready: true, started: true, restartCount: 0 }),
    ]);
  });

  it("moves a condition's transition time only when its status changes", () => {
    const first = { ...aPod({ gates: ["g.io/x"], conditions: [{ type: "g.io/x", status: "False" }] }) };
    first.status = runningStatus(first, at(T0));
    const unchanged = runningStatus(first, at(T1));
    expect(unchanged.conditions!.find((c) => c.type === "Initialized")!.lastTransitionTime).toBe(
      "2026-01-01T00:00:00Z",
    );
    expect(statusDiffers(first.status, unchanged)).toBe(false);

    first.status.conditions = first.status.conditions!.map((c) => (c.type === "g.io/x" ? { ...c, status: "True" } : c));
    const gateMet = runningStatus(first, at(T1));
    expect(gateMet.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-01-01T00:05:00Z",
    });
    expect(statusDiffers(first.status, gateMet)).toBe(true);
  });
});
