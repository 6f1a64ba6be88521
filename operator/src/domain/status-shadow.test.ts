import { describe, expect, it } from "@jest/globals";
import { computeStatus, statusEqual, type StatusInput, type StatusPodInput } from "./status.js";
import { toRfc3339 } from "./status-time.js";
import { aStatusPodInput, HOUR, T0 } from "./testing/builders.js";

function anInput(pods: StatusPodInput[], over: Partial<StatusInput> = {}): StatusInput {
  return { generation: 1, now: T0 + HOUR, readiness: { reason: "Reconciled" }, pods, ...over };
}

const healthy = (name: string, disagreement?: StatusPodInput["disagreement"]) =>
  aStatusPodInput({
    name,
    uid: `uid-${name}`,
    health: { state: "Healthy", since: T0 },
    ...(disagreement ? { disagreement } : {}),
  });

describe("the shadow report in status", () => {
  it("shows a pod's disagreement with kubelet readiness and when it began", () => {
    const s = computeStatus(
      anInput([healthy("web-a", { kind: "ProbeHealthyKubeletNotReady", since: T0 + 1500 }), healthy("web-b")]),
    );
    expect(s.pods.find((p) => p.name === "web-a")?.disagreesWithKubelet).toEqual({
      since: toRfc3339(T0 + 1500),
      kind: "ProbeHealthyKubeletNotReady",
    });
    expect(toRfc3339(T0 + 1500)).toMatch(/:01Z$/);
    expect(s.pods.find((p) => p.name === "web-b")?.disagreesWithKubelet).toBeUndefined();
  });

  const cases: Array<[string, StatusPodInput[], { status: string; reason: string; message: string }]> = [
    [
      "False while every verdict agrees",
      [healthy("web-a")],
      {
        status: "False",
        reason: "AgreesWithKubelet",
        message: "every verdict agrees with kubelet readiness (or has for less than one period)",
      },
    ],
    [
      "True with the kind as reason when all disagree alike",
      [
        healthy("web-b", { kind: "ProbeHealthyKubeletNotReady", since: T0 }),
        healthy("web-a", { kind: "ProbeHealthyKubeletNotReady", since: T0 }),
      ],
      {
        status: "True",
        reason: "ProbeHealthyKubeletNotReady",
        message:
          "2 targets disagree with kubelet readiness for longer than one period: 2 Healthy by probe but kubelet-NotReady (web-a, web-b)",
      },
    ],
    [
      "True with both kinds counted",
      [
        healthy("web-a", { kind: "ProbeHealthyKubeletNotReady", since: T0 }),
        healthy("web-c", { kind: "ProbeUnhealthyKubeletReady", since: T0 }),
      ],
      {
        status: "True",
        reason: "ProbeAndKubeletDisagree",
        message:
          "2 targets disagree with kubelet readiness for longer than one period: 1 Healthy by probe but kubelet-NotReady (web-a); 1 Unhealthy by probe but kubelet-Ready (web-c)",
      },
    ],
  ];
  it.each(cases)("the DisagreesWithKubelet condition is %s", (_name, pods, want) => {
    expect(computeStatus(anInput(pods)).conditions.find((c) => c.type === "DisagreesWithKubelet")).toMatchObject(want);
  });

  it("does not change while the same pods keep disagreeing (no write per reconcile)", () => {
    const pods = [healthy("web-a", { kind: "ProbeHealthyKubeletNotReady", since: T0 })];
    const first = computeStatus(anInput(pods));
    const later = computeStatus(anInput(pods, { now: T0 + 2 * HOUR, previous: first }));
    expect(statusEqual(first, later)).toBe(true);
  });
});

describe("status.diagnostics", () => {
  it("lists the kept diagnostics as given and leaves the field out when there are none", () => {
    const diagnostics = [{ pod: "web-a", configMap: "web-diag-web-a-0123abcd", time: "2026-12-01T10:00:00Z" }];
    expect(computeStatus(anInput([], { diagnostics })).diagnostics).toEqual(diagnostics);
    expect(computeStatus(anInput([], { diagnostics: [] }))).not.toHaveProperty("diagnostics");
  });
});
