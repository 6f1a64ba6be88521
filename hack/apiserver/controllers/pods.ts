// Pod facts the controllers share (pkg/api/v1/pod, pkg/controller/controller_utils.go).
import type { V1LabelSelector, V1OwnerReference, V1Pod } from "@kubernetes/client-node";
import { matchesLabelSelectorObject } from "../selectors.js";

export const podKey = (pod: { metadata?: { namespace?: string; name?: string } }): string =>
  `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;

export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf("/");
  return { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export const isTerminating = (pod: V1Pod): boolean => Boolean(pod.metadata?.deletionTimestamp);

/** FilterActivePods: not terminal and not being deleted. */
export const isActive = (pod: V1Pod): boolean =>
  !isTerminating(pod) && pod.status?.phase !== "Succeeded" && pod.status?.phase !== "Failed";

export const readyCondition = (pod: V1Pod) => pod.status?.conditions?.find((c) => c.type === "Ready");
export const isPodReady = (pod: V1Pod): boolean => readyCondition(pod)?.status === "True";

/** IsPodAvailable: ready for at least minReadySeconds. */
export function isPodAvailable(pod: V1Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const since = readyCondition(pod)?.lastTransitionTime;
  return since !== undefined && new Date(since).getTime() + minReadySeconds * 1000 <= now;
}

export const controllerRefOf = (obj: {
  metadata?: { ownerReferences?: V1OwnerReference[] };
}): V1OwnerReference | undefined => obj.metadata?.ownerReferences?.find((r) => r.controller === true);

/** metav1.LabelSelectorAsSelector + Matches; a null selector selects nothing. */
export const selectorMatches = (
  selector: V1LabelSelector | undefined,
  labels: Record<string, string> | undefined,
): boolean => matchesLabelSelectorObject(selector as Record<string, any> | undefined, labels);

export const isEmptySelector = (s: V1LabelSelector | undefined): boolean =>
  !!s && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const time = (t: Date | string | undefined): number => (t === undefined ? 0 : new Date(t).getTime());
const restarts = (pod: V1Pod): number =>
  Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));

/**
 * ActivePods ordering (controller_utils.go): the pods to delete first come first —
 * unscheduled before scheduled, Pending before Unknown before Running, not ready before ready,
 * ready for less time before more, more restarts before fewer, newer before older.
 */
export function compareForDeletion(a: V1Pod, b: V1Pod): number {
  const assigned = (p: V1Pod): number => (p.spec?.nodeName ? 1 : 0);
  if (assigned(a) !== assigned(b)) return assigned(a) - assigned(b);
  const phase = (p: V1Pod): number => PHASE_RANK[p.status?.phase ?? "Pending"] ?? 0;
  if (phase(a) !== phase(b)) return phase(a) - phase(b);
  const ready = (p: V1Pod): number => (isPodReady(p) ? 1 : 0);
  if (ready(a) !== ready(b)) return ready(a) - ready(b);
  if (isPodReady(a) && isPodReady(b)) {
    const ra = time(readyCondition(a)?.lastTransitionTime);
    const rb = time(readyCondition(b)?.lastTransitionTime);
    if (ra !== rb) return rb - ra;
  }
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  const ca = time(a.metadata?.creationTimestamp);
  const cb = time(b.metadata?.creationTimestamp);
  if (ca !== cb) return cb - ca;
  return (b.metadata?.name ?? "").localeCompare(a.metadata?.name ?? "");
}

export const isNotFound = (err: unknown): boolean => (err as { code?: number } | undefined)?.code === 404;
export const isConflict = (err: unknown): boolean => (err as { code?: number } | undefined)?.code === 409;
export const isAlreadyExists = isConflict;
