// Plays the kubelet for pods on a cluster without nodes: a new pod gets an address from the pod
// CIDR and a Running, Ready status written through the status subresource. A pod left
// terminating is finished with a zero grace-period delete, as the kubelet does once containers stop
// (after terminationDelayMs, the time the containers take to stop). A running pod with readiness
// gates is Ready only while ContainersReady and every gate's condition are True: its Ready is
// written again whenever another writer changes one of them.
import type { V1Pod, V1PodStatus } from "@kubernetes/client-node";
import { IpAllocator } from "./ip-allocator.js";
import type { PodRequests } from "./pod-requests.js";
import { readyIsStale, runningStatus, withReadyRecomputed } from "./pod-status.js";
import { isNotFound, podKey, splitKey } from "./pods.js";
import type { SyncResult } from "./work-queue.js";

export const HOST_IP = "127.0.0.1";

export interface KubeletDeps {
  /** Status writes and the final deletes; they throw with `code` on an HTTP error. */
  podApi: Pick<PodRequests, "putStatus" | "delete">;
  pods: { get(name: string, namespace?: string): V1Pod | undefined; list(namespace?: string): ReadonlyArray<V1Pod> };
  podCidr: string;
  /** How long stopping a terminating pod's containers takes before the final delete; 0 = at once. */
  terminationDelayMs?: number;
  now: () => number;
  enqueue: (key: string) => void;
}

/**
 * The body of a status write: the status subresource takes only status from it (as the real one
 * does), so the rest of the pod (spec, labels, managedFields) is left out; name and uid say which
 * pod, and the resourceVersion makes the write conditional on the pod the status was computed from.
 */
export function statusWrite(pod: V1Pod, status: V1PodStatus): V1Pod {
  const { name, namespace, uid, resourceVersion } = pod.metadata ?? {};
  return { apiVersion: "v1", kind: "Pod", metadata: { name, namespace, uid, resourceVersion }, status };
}

export class KubeletStandIn {
  readonly ips: IpAllocator;
  private readonly finishing = new Set<string>();
  /** When each terminating pod (by uid) was first seen terminating. */
  private readonly terminationSeen = new Map<string, number>();
  private readonly waitingForAddress = new Set<string>();

  constructor(private readonly deps: KubeletDeps) {
    this.ips = new IpAllocator(deps.podCidr);
  }

  /** Addresses already on pods stay theirs (a restart must not hand them out twice). */
  podSeen(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const ip = pod.status?.podIP;
    if (uid && ip) this.ips.reserve(uid, ip);
    if (this.needsWork(pod)) this.deps.enqueue(podKey(pod));
  }

  podGone(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    this.finishing.delete(uid);
    this.terminationSeen.delete(uid);
    const before = this.ips.inUse;
    this.ips.release(uid);
    if (this.ips.inUse < before) {
      for (const key of this.waitingForAddress) this.deps.enqueue(key);
      this.waitingForAddress.clear();
    }
  }

  private needsWork(pod: V1Pod): boolean {
    // Like the kubelet, finish a terminating pod whatever its finalizers: they still hold it.
    if (pod.metadata?.deletionTimestamp) return !this.finishing.has(pod.metadata.uid ?? "");
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") return false;
    // A running pod with readiness gates: Ready follows ContainersReady and the gates' conditions.
    return !pod.status?.podIP || (phase === "Running" && readyIsStale(pod, this.deps.now()));
  }

  async sync(key: string): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    const pod = this.deps.pods.get(name, namespace);
    if (!pod || !this.needsWork(pod)) return;
    const uid = pod.metadata!.uid!;
    if (pod.metadata?.deletionTimestamp) {
      if (this.finishing.has(uid)) return;
      const delay = this.deps.terminationDelayMs ?? 0;
      if (delay > 0) {
        const seen = this.terminationSeen.get(uid) ?? this.deps.now();
        this.terminationSeen.set(uid, seen);
        const remaining = seen + delay - this.deps.now();
        if (remaining > 0) return { requeueAfterMs: remaining };
      }
      // The containers have stopped: the kubelet's zero-grace delete removes the pod (or leaves it to its finalizers).
      this.finishing.add(uid);
      try {
        // In the body, where it counts (with a body kube-apiserver ignores the query's DeleteOptions); the query shows it in the request log.
        await this.deps.podApi.delete(namespace, name, { gracePeriodSeconds: 0, preconditions: { uid } });
      } catch (err) {
        if (isNotFound(err) || (err as { code?: number }).code === 409) return;
        this.finishing.delete(uid);
        throw new Error(`finishing the deletion of pod ${key}`, { cause: err });
      }
      return;
    }
    if (pod.status?.podIP) return this.recomputeReady(key, pod);
    const ip = this.ips.allocate(uid);
    if (!ip) {
      this.waitingForAddress.add(key);
      return;
    }
    try {
      await this.deps.podApi.putStatus(namespace, name, statusWrite(pod, this.runningStatus(pod, ip)));
    } catch (err) {
      if (isNotFound(err)) {
        this.ips.release(uid);
        return;
      }
      throw new Error(`starting pod ${key}`, { cause: err });
    }
  }

  /** Writes Ready as the kubelet computes it; the resourceVersion in the body guards the other conditions. */
  private async recomputeReady(key: string, pod: V1Pod): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    try {
      await this.deps.podApi.putStatus(namespace, name, statusWrite(pod, withReadyRecomputed(pod, this.deps.now())));
    } catch (err) {
      // A newer pod (another writer's condition) or none: its watch event brings the next sync.
      if (isNotFound(err) || (err as { code?: number }).code === 409) return;
      throw new Error(`updating the readiness of pod ${key}`, { cause: err });
    }
  }

  runningStatus(pod: V1Pod, ip: string): V1PodStatus {
    return runningStatus(pod, { ip, hostIp: HOST_IP, now: this.deps.now() });
  }
}
