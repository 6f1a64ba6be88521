// Graceful deletion of pods, as the pod strategy's CheckGracefulDelete and the generic registry's
// BeforeDelete decide it (k8s.io/kubernetes pkg/registry/core/pod/strategy.go,
// k8s.io/apiserver pkg/registry/rest/delete.go).
import type { KubeObject } from "./store.js";

export type PodDeletionPlan =
  /** Mark the pod terminating: deletionTimestamp = at, deletionGracePeriodSeconds = periodSeconds (0: remove after marking). */
  | { kind: "graceful"; atMs: number; periodSeconds: number; why: string }
  /** A longer or equal grace period on a pod already terminating: nothing changes. */
  | { kind: "pending"; why: string }
  /** Not graceful: the generic path (finalizers hold the object, otherwise it goes at once). */
  | { kind: "immediate"; why: string };

/** Negative grace periods mean one second on the delete path. */
const clampPeriod = (s: number): number => (s < 0 ? 1 : Math.trunc(s));

/**
 * How a delete with the requested grace period treats this pod. `kubeletRunning`: a kubelet will stop the
 * containers and finish the deletion; without one the pod would stay terminating forever, so it goes at once.
 */
export function planPodDeletion(
  pod: KubeObject,
  requestedSeconds: number | undefined,
  nowMs: number,
  kubeletRunning: boolean,
): PodDeletionPlan {
  const meta = pod.metadata;
  const requested =
    requestedSeconds === undefined || Number.isNaN(requestedSeconds) ? undefined : clampPeriod(requestedSeconds);
  if (meta.deletionTimestamp) {
    const current = Number(meta.deletionGracePeriodSeconds ?? 0);
    // A deletion already at grace 0 is finished by the generic path (or by its finalizers' removal).
    if (current <= 0) return { kind: "immediate", why: "already terminating with no grace period left" };
    if (requested === undefined || requested >= current)
      return { kind: "pending", why: `already terminating with a grace period of ${current}s` };
    // Only a shorter period may be given; the deadline moves by the difference.
    const atMs = Date.parse(meta.deletionTimestamp) - current * 1000 + requested * 1000;
    return {
      kind: "graceful",
      atMs,
      periodSeconds: requested,
      why: `grace period shortened from ${current}s to ${requested}s`,
    };
  }
  if (!kubeletRunning) return { kind: "immediate", why: "no kubelet runs pods on this server" };
  const phase = pod.status?.phase;
  let period = requested ?? Number(pod.spec?.terminationGracePeriodSeconds ?? 0);
  let why = requested === undefined ? "the pod's terminationGracePeriodSeconds" : "the requested gracePeriodSeconds";
  // The stand-in kubelet runs pods without binding them to a node: a running pod counts as scheduled.
  if (!pod.spec?.nodeName && phase !== "Running") {
    period = 0;
    why = "the pod is not scheduled";
  }
  if (phase === "Succeeded" || phase === "Failed") {
    period = 0;
    why = "the pod has terminated";
  }
  period = clampPeriod(period);
  return { kind: "graceful", atMs: nowMs + period * 1000, periodSeconds: period, why };
}
