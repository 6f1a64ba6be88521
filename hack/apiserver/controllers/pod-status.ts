// The status the kubelet writes for a running pod whose containers all started and are ready
// (pkg/kubelet/status/generate.go): PodReadyToStartContainers, Initialized, ContainersReady,
// Ready and PodScheduled, where Ready also needs every readinessGates condition True. Conditions
// of other types (a readiness gate's, set by a controller) are kept; a transition time changes
// only when a condition's status does.
import type { V1Pod, V1PodCondition, V1PodStatus } from "@kubernetes/client-node";

const KUBELET_CONDITIONS = ["PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled"];

const seconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** GeneratePodReadyCondition's reading of the readiness gates: undefined when all are True. */
export function unmetReadinessGate(pod: V1Pod): { reason: string; message: string } | undefined {
  const problems: string[] = [];
  for (const gate of pod.spec?.readinessGates ?? []) {
    const c = pod.status?.conditions?.find((x) => x.type === gate.conditionType);
    if (!c) problems.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    else if (c.status !== "True")
      problems.push(`the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
  }
  return problems.length === 0 ? undefined : { reason: "ReadinessGatesNotReady", message: problems.join(", ") };
}

/**
 * GeneratePodReadyCondition over a running pod's own status: Ready copies a ContainersReady that is
 * not True (status, reason, message), else follows the readiness gates. The transition time moves
 * only when the status does.
 */
export function podReadyCondition(pod: V1Pod, now: number): V1PodCondition {
  const containers = pod.status?.conditions?.find((c) => c.type === "ContainersReady");
  const gate = unmetReadinessGate(pod);
  const next: { status: string; reason?: string; message?: string } =
    containers?.status !== "True"
      ? {
          status: containers?.status ?? "False",
          ...(containers?.reason ? { reason: containers.reason } : {}),
          ...(containers?.message ? { message: containers.message } : {}),
        }
      : gate
        ? { status: "False", ...gate }
        : { status: "True" };
  const old = pod.status?.conditions?.find((c) => c.type === "Ready");
  return {
    type: "Ready",
    ...next,
    lastProbeTime: null as unknown as undefined,
    lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : (seconds(now) as unknown as Date),
  };
}

/** Whether a pod with readiness gates shows a Ready other than the one the kubelet would write. */
export function readyIsStale(pod: V1Pod, now: number): boolean {
  if ((pod.spec?.readinessGates ?? []).length === 0) return false;
  const want = podReadyCondition(pod, now);
  const have = pod.status?.conditions?.find((c) => c.type === "Ready");
  return (
    !have ||
    have.status !== want.status ||
    (have.reason ?? "") !== (want.reason ?? "") ||
    (have.message ?? "") !== (want.message ?? "")
  );
}

/** The pod's status with Ready recomputed in place; every other condition as it is. */
export function withReadyRecomputed(pod: V1Pod, now: number): V1PodStatus {
  const conditions = pod.status?.conditions ?? [];
  const ready = podReadyCondition(pod, now);
  const has = conditions.some((c) => c.type === "Ready");
  return {
    ...(pod.status ?? {}),
    conditions: has ? conditions.map((c) => (c.type === "Ready" ? ready : c)) : [...conditions, ready],
  };
}

export interface RunningPod {
  ip: string;
  hostIp: string;
  now: number;
}

export function runningStatus(pod: V1Pod, at: RunningPod): V1PodStatus {
  const now = seconds(at.now) as unknown as Date;
  const before = pod.status?.conditions ?? [];
  const condition = (
    type: string,
    status: "True" | "False",
    why?: { reason: string; message: string },
  ): V1PodCondition => {
    const old = before.find((c) => c.type === type);
    return {
      type,
      status,
      lastProbeTime: null as unknown as undefined,
      lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now,
      ...(why ? why : {}),
    };
  };
  const gate = unmetReadinessGate(pod);
  const started = pod.status?.startTime ?? now;
  return {
    ...(pod.status ?? {}),
    phase: "Running",
    hostIP: at.hostIp,
    hostIPs: [{ ip: at.hostIp }],
    podIP: at.ip,
    podIPs: [{ ip: at.ip }],
    startTime: started,
    conditions: [
      condition("PodReadyToStartContainers", "True"),
      condition("Initialized", "True"),
      condition("Ready", gate ? "False" : "True", gate),
      condition("ContainersReady", "True"),
      condition("PodScheduled", "True"),
      ...before.filter((c) => !KUBELET_CONDITIONS.includes(c.type)),
    ],
    containerStatuses: (pod.spec?.containers ?? []).map((c) => {
      const old = pod.status?.containerStatuses?.find((s) => s.name === c.name);
      return {
        name: c.name,
        image: c.image ?? "",
        imageID: "",
        containerID: `containerd://${pod.metadata?.uid}-${c.name}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: old?.state?.running?.startedAt ?? started } },
      };
    }),
  };
}

/** Whether writing `next` would change what the kubelet owns in `current`. */
export function statusDiffers(current: V1PodStatus | undefined, next: V1PodStatus): boolean {
  const owned = (s: V1PodStatus | undefined) =>
    JSON.stringify({
      phase: s?.phase,
      podIP: s?.podIP,
      hostIP: s?.hostIP,
      conditions: (s?.conditions ?? [])
        .filter((c) => KUBELET_CONDITIONS.includes(c.type))
        .map((c) => [c.type, c.status, c.reason ?? "", c.message ?? ""])
        .sort(),
      containers: (s?.containerStatuses ?? []).map((c) => [c.name, c.ready, c.started]),
    });
  return owned(current) !== owned(next);
}
