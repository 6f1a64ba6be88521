// The shadow report: where the operator's verdict on a pod and the kubelet's readiness disagree.
// A team adopting the operator (typically with dryRun) reads it to learn whether its readiness
// probes or its health path are wrong before letting the operator act.
import type { ConditionInput } from "./conditions.js";
import type { EpochMs, HealthStateName } from "./types.js";

export type DisagreementKind = "ProbeHealthyKubeletNotReady" | "ProbeUnhealthyKubeletReady";

export const DISAGREEMENT_KINDS: readonly DisagreementKind[] = [
  "ProbeHealthyKubeletNotReady",
  "ProbeUnhealthyKubeletReady",
];

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
    verdict === "Healthy" && !kubeletReady
      ? "ProbeHealthyKubeletNotReady"
      : verdict === "Unhealthy" && kubeletReady
        ? "ProbeUnhealthyKubeletReady"
        : undefined;
  if (kind === undefined) {
    const reason =
      verdict === "Unknown"
        ? "no verdict yet"
        : `${verdict} by probe and kubelet-${kubeletReady ? "Ready" : "NotReady"}: they agree`;
    return { kind: undefined, reason };
  }
  const since = Math.min(input.now, Math.max(input.verdictSince, input.kubeletSince ?? input.verdictSince));
  const reportableAt = since + input.periodMs;
  const reportable = input.now >= reportableAt;
  const what =
    kind === "ProbeHealthyKubeletNotReady"
      ? "Healthy by probe but kubelet-NotReady"
      : "Unhealthy by probe but kubelet-Ready";
  const reason = reportable
    ? `${what} for at least one period (${input.periodMs / 1000}s)`
    : `${what}, reported if it lasts one period (${input.periodMs / 1000}s)`;
  return { kind, since, reportableAt, reportable, reason };
}

/**
 * The DisagreesWithKubelet condition over the pods status reports: True while any target's
 * verdict and kubelet readiness have disagreed for longer than one period, with a count and
 * names per kind. Its message changes only when a pod starts or stops disagreeing.
 */
export function disagreesWithKubelet(
  pods: ReadonlyArray<{ name: string; disagreesWithKubelet?: { kind: DisagreementKind } | undefined }>,
  listNames: (names: readonly string[]) => string,
): ConditionInput {
  const byKind = DISAGREEMENT_KINDS.map((kind) => ({
    kind,
    names: pods
      .filter((p) => p.disagreesWithKubelet?.kind === kind)
      .map((p) => p.name)
      .sort(),
  }));
  const total = byKind.reduce((n, k) => n + k.names.length, 0);
  if (total === 0) {
    return {
      type: "DisagreesWithKubelet",
      status: "False",
      reason: "AgreesWithKubelet",
      message: "every verdict agrees with kubelet readiness (or has for less than one period)",
    };
  }
  const present = byKind.filter((k) => k.names.length > 0);
  const words: Record<DisagreementKind, string> = {
    ProbeHealthyKubeletNotReady: "Healthy by probe but kubelet-NotReady",
    ProbeUnhealthyKubeletReady: "Unhealthy by probe but kubelet-Ready",
  };
  return {
    type: "DisagreesWithKubelet",
    status: "True",
    reason: present.length === 1 ? present[0]!.kind : "ProbeAndKubeletDisagree",
    message: `${total} ${total === 1 ? "target disagrees" : "targets disagree"} with kubelet readiness for longer than one period: ${present.map((k) => `${k.names.length} ${words[k.kind]} (${listNames(k.names)})`).join("; ")}`,
  };
}
