// The EndpointSlice controller's endpoints.kubernetes.io/last-change-trigger-time
// (pkg/controller/util/endpoint/trigger_time_tracker.go): for a Service seen for the first time its
// creation time; afterwards the earliest trigger that changed since the last sync — a pod's Ready
// transition time or the Service's creation time — or none, which removes the annotation.
import type { V1EndpointSlice, V1Pod, V1Service } from "@kubernetes/client-node";

export const TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";

const time = (t: Date | string | undefined): number => (t === undefined ? 0 : new Date(t).getTime());

interface ServiceState {
  pods: Map<string, number>;
  service: number;
}

export class TriggerTimeTracker {
  private readonly states = new Map<string, ServiceState>();

  /** The trigger time for this sync (0 = none); remembers what it saw. */
  compute(key: string, svc: V1Service, pods: readonly V1Pod[]): number {
    const before = this.states.get(key);
    let earliest = 0;
    const changed = (t: number) => {
      if (earliest === 0 || t < earliest) earliest = t;
    };
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const t = time(pod.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime);
      if (t === 0) continue;
      podTimes.set(pod.metadata?.name ?? "", t);
      if (t > (before?.pods.get(pod.metadata?.name ?? "") ?? 0)) changed(t);
    }
    const created = time(svc.metadata?.creationTimestamp);
    if (created > (before?.service ?? 0)) changed(created);
    this.states.set(key, { pods: podTimes, service: created });
    return before ? earliest : created;
  }

  forget(key: string): void {
    this.states.delete(key);
  }
}

/** The slice with the annotation set to the trigger time, or without it when there is none. */
export function withTriggerTime(slice: V1EndpointSlice, at: number): V1EndpointSlice {
  const { [TRIGGER_TIME_ANNOTATION]: _old, ...others } = slice.metadata?.annotations ?? {};
  const annotations =
    at > 0 ? { ...others, [TRIGGER_TIME_ANNOTATION]: new Date(at).toISOString().replace(/\.000Z$/, "Z") } : others;
  const { annotations: _drop, ...meta } = slice.metadata ?? {};
  return { ...slice, metadata: Object.keys(annotations).length > 0 ? { ...meta, annotations } : meta };
}
