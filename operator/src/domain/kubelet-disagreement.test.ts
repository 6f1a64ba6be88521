import { describe, expect, it } from "@jest/globals";
import { kubeletDisagreement, type DisagreementInput } from "./kubelet-disagreement.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const PERIOD = 10_000;

function input(over: Partial<DisagreementInput>): DisagreementInput {
  return {
    verdict: "Healthy",
    verdictSince: T0,
    kubeletReady: true,
    kubeletSince: T0,
    periodMs: PERIOD,
    now: T0 + 60_000,
    ...over,
  };
}

describe("kubeletDisagreement", () => {
  const agreeing: Array<[string, Partial<DisagreementInput>]> = [
    ["Healthy and kubelet-Ready agree", { verdict: "Healthy", kubeletReady: true }],
    ["Unhealthy and kubelet-NotReady agree", { verdict: "Unhealthy", kubeletReady: false }],
    ["Unknown never disagrees, even with kubelet-Ready", { verdict: "Unknown", kubeletReady: true }],
    ["Unknown never disagrees, even with kubelet-NotReady", { verdict: "Unknown", kubeletReady: false }],
  ];
  it.each(agreeing)("%s", (_name, over) => {
    expect(kubeletDisagreement(input(over)).kind).toBeUndefined();
  });

  const disagreeing: Array<
    [string, Partial<DisagreementInput>, { kind: string; since: number; reportable: boolean; reportableAt: number }]
  > = [
    [
      "Healthy by probe but kubelet-NotReady for longer than a period is reportable",
      { verdict: "Healthy", kubeletReady: false, kubeletSince: T0 + 5_000 },
      { kind: "ProbeHealthyKubeletNotReady", since: T0 + 5_000, reportable: true, reportableAt: T0 + 15_000 },
    ],
    [
      "Unhealthy by probe but kubelet-Ready counts from the verdict when it changed last",
      { verdict: "Unhealthy", verdictSince: T0 + 20_000, kubeletReady: true, kubeletSince: T0 },
      { kind: "ProbeUnhealthyKubeletReady", since: T0 + 20_000, reportable: true, reportableAt: T0 + 30_000 },
    ],
    [
      "a disagreement younger than one period is not yet reportable, and says when it will be",
      { verdict: "Healthy", kubeletReady: false, kubeletSince: T0 + 55_000 },
      { kind: "ProbeHealthyKubeletNotReady", since: T0 + 55_000, reportable: false, reportableAt: T0 + 65_000 },
    ],
    [
      "exactly one period old is reportable",
      { verdict: "Healthy", kubeletReady: false, kubeletSince: T0 + 50_000 },
      { kind: "ProbeHealthyKubeletNotReady", since: T0 + 50_000, reportable: true, reportableAt: T0 + 60_000 },
    ],
    [
      "without a Ready transition time it counts from the verdict",
      { verdict: "Healthy", verdictSince: T0 + 1_000, kubeletReady: false, kubeletSince: undefined },
      { kind: "ProbeHealthyKubeletNotReady", since: T0 + 1_000, reportable: true, reportableAt: T0 + 11_000 },
    ],
    [
      "a Ready transition in the future (clock skew) counts from now, so the report waits one period",
      { verdict: "Healthy", kubeletReady: false, kubeletSince: T0 + 90_000 },
      { kind: "ProbeHealthyKubeletNotReady", since: T0 + 60_000, reportable: false, reportableAt: T0 + 70_000 },
    ],
  ];
  it.each(disagreeing)("%s", (_name, over, want) => {
    expect(kubeletDisagreement(input(over))).toMatchObject(want);
  });

  it("words the reason for a person, naming both sides and the period", () => {
    expect(kubeletDisagreement(input({ verdict: "Healthy", kubeletReady: false })).reason).toBe(
      "Healthy by probe but kubelet-NotReady for at least one period (10s)",
    );
    expect(
      kubeletDisagreement(input({ verdict: "Unhealthy", kubeletReady: true, verdictSince: T0 + 59_000 })).reason,
    ).toBe("Unhealthy by probe but kubelet-Ready, reported if it lasts one period (10s)");
  });
});
