// The shadow report: where the operator's verdict on a pod and the kubelet's readiness disagree.
// A team adopting the operator (typically with dryRun) reads it to learn whether its readiness
// probes or its health path are wrong before letting the operator act.
import type { EpochMs, HealthStateName } from "./types.js";

export type DisagreementKind = "ProbeHealthyKubeletNotReady" | "ProbeUnhealthyKubeletReady";

export const DISAGREEMENT_KINDS: readonly DisagreementKind[] = ["ProbeHealthyKubeletNotReady", "ProbeUnhealthyKubeletReady"];

export interface DisagreementInput {
  /** The operator's verdict on the pod for this policy. */
  verdict: HealthStateName;
  /** When the verdict last changed. */
  verdictSince: EpochMs;
  /** The pod's Ready condition. */
  kubeletReady: boolean;
  /** The Ready condition's lastTransitionTime, when the pod carries one. */
  kubeletSince?: EpochMs | undefined;
  /** The policy's probe period: a disagreement shorter than one period is not reported. */
  periodMs: number;
  now: EpochMs;
}

export type Disagreement =
  | { kind: undefined; reason: string }
  | {
      kind: DisagreementKind;
      /** When both sides last changed: the disagreement has lasted since then. */
      since: EpochMs;
      /** Since + one period: from then on it is reported. */
      reportableAt: EpochMs;
      reportable: boolean;
      reason: string;
    };

/**
 * Whether the verdict and kubelet readiness disagree, since when, and whether it has lasted
 * longer than one probe period (a probe result and a readiness change crossing each other
 * are not a disagreement). Unknown never disagrees: the operator has no verdict yet.
 *
 * The start is the later of the two transitions: the disagreement began when the second side
 * changed. A Ready transition time from the future (clock skew between the kubelet and the
 * operator) is read as `now`, so a report is delayed by at most one period, never lost.
 */
export function kubeletDisagreement(input: DisagreementInput): Disagreement {
  const { verdict, kubeletReady } = input;
  const kind: DisagreementKind | undefined =
    verdict === "Healthy" && !kubeletReady ? "ProbeHealthyKubeletNotReady" : verdict === "Unhealthy" && kubeletReady ? "ProbeUnhealthyKubeletReady" : undefined;
  if (kind === undefined) {
    const reason = verdict === "Unknown" ? "no verdict yet" : `${verdict} by probe and kubelet-${kubeletReady ? "Ready" : "NotReady"}: they agree`;
    return { kind: undefined, reason };
  }
  const since = Math.min(input.now, Math.max(input.verdictSince, input.kubeletSince ?? input.verdictSince));
  const reportableAt = since + input.periodMs;
  const reportable = input.now >= reportableAt;
  const what = kind === "ProbeHealthyKubeletNotReady" ? "Healthy by probe but kubelet-NotReady" : "Unhealthy by probe but kubelet-Ready";
  const reason = reportable ? `${what} for at least one period (${input.periodMs / 1000}s)` : `${what}, reported if it lasts one period (${input.periodMs / 1000}s)`;
  return { kind, since, reportableAt, reportable, reason };
}
