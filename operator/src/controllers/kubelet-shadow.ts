// The shadow report's view of one policy: for each target, whether the operator's verdict and the
// pod's Ready condition have disagreed for longer than one probe period (the core decides), and
// when the next pending disagreement becomes reportable (a requeue delay).
import { kubeletDisagreement, type DisagreementKind } from "../domain/kubelet-disagreement.js";
import type { HealthStore } from "../runtime/health-store.js";
import {
  hasReadinessGate,
  isKubeletReady,
  isReadyBesidesGate,
  kubeletReadySince,
  uidOf,
  type PodObject,
} from "./kube-objects.js";
import type { ParsedPolicy } from "./parsed-policy.js";

export interface ShadowView {
  /** Reportable disagreements by pod uid. */
  reportable: Map<string, { kind: DisagreementKind; since: number }>;
  /** When the soonest pending disagreement becomes reportable. */
  nextAt?: number;
}

export function shadowOf(
  policy: ParsedPolicy,
  targets: readonly PodObject[],
  health: Pick<HealthStore, "get">,
  now: number,
): ShadowView {
  const view: ShadowView = { reportable: new Map() };
  const periodMs = policy.spec.probe.periodSeconds * 1000;
  for (const pod of targets) {
    const uid = uidOf(pod);
    const h = health.get(policy.key, uid);
    if (!h) continue;
    // A pod with the operator's own readiness gate is compared without it: its Ready follows the verdict.
    const kubeletReady = hasReadinessGate(pod) ? isReadyBesidesGate(pod) : isKubeletReady(pod);
    const d = kubeletDisagreement({
      verdict: h.state,
      verdictSince: h.since,
      kubeletReady,
      kubeletSince: kubeletReadySince(pod),
      periodMs,
      now,
    });
    if (d.kind === undefined) continue;
    if (d.reportable) view.reportable.set(uid, { kind: d.kind, since: d.since });
    else view.nextAt = Math.min(view.nextAt ?? Infinity, d.reportableAt);
  }
  return view;
}
