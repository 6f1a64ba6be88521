// ReplicaSet controller, after pkg/controller/replicaset/replica_set.go: claims pods (adopt
// matching orphans, release owned pods that stopped matching), creates or deletes pods to reach
// spec.replicas, guarded by expectations, and writes status only when it changed.
import { performance } from "node:perf_hooks";
import type { AppsV1Api, CoreV1Api, V1Pod, V1ReplicaSet, V1ReplicaSetStatus } from "@kubernetes/client-node";
import { Expectations } from "./expectations.js";
import { OwnWrites } from "./own-writes.js";
import type { PodRequests } from "./pod-requests.js";
import {
  compareForDeletion, controllerRefOf, isActive, isNotFound, isPodAvailable, isPodReady, isTerminating, podKey, selectorMatches, splitKey,
} from "./pods.js";
import type { SyncResult } from "./work-queue.js";

/** The real controller's burst size for creates and deletes in one sync. */
export const BURST_REPLICAS = 500;

/**
 * A sync reads every pod of the namespace, and every pod change wakes the ReplicaSet: at ten
 * thousand pods back-to-back syncs took most of the process. The next sync of a ReplicaSet
 * starts no sooner than this many times its last scan of the pods took (at most a second): the
 * scans get at most about a fifth of the time, and a small ReplicaSet (a scan well under a
 * millisecond) sees no delay. Real time, not the injected clock: this is about CPU, not about
 * what the controller decides.
 */
const SCAN_SHARE = 4;
const MAX_SCAN_GAP_MS = 1000;

export interface ReplicaSetControllerDeps {
  core: CoreV1Api;
  /** Creates and deletes, one per replica: plain JSON on a keep-alive pool. */
  podApi: Pick<PodRequests, "create" | "delete">;
  /** PUT of the status subresource (a full ReplicaSet as the body), resolving to the answer; throws with `code` on an HTTP error. */
  putStatus: (namespace: string, name: string, rs: V1ReplicaSet) => Promise<V1ReplicaSet>;
  apps: AppsV1Api;
  pods: { list(namespace?: string): ReadonlyArray<V1Pod> };
  replicaSets: { get(name: string, namespace?: string): V1ReplicaSet | undefined; list(namespace?: string): ReadonlyArray<V1ReplicaSet> };
  now: () => number;
  enqueue: (key: string) => void;
}

export class ReplicaSetController {
  readonly expectations: Expectations;
  private readonly ownWrites = new OwnWrites();
  /** Per ReplicaSet key: performance.now() before which its next sync waits. */
  private readonly nextScan = new Map<string, number>();

  constructor(private readonly deps: ReplicaSetControllerDeps) {
    this.expectations = new Expectations(deps.now);
  }

  /** Pod events: observe expectations and wake the owning (or a possibly adopting) ReplicaSet. */
  podAdded(pod: V1Pod): void {
    const ref = controllerRefOf(pod);
    if (ref) {
      const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
      if (!rs) return;
      const key = podKey(rs);
      if (isTerminating(pod)) this.expectations.deletionObserved(key, podKey(pod));
      else this.expectations.creationObserved(key);
      this.deps.enqueue(key);
      return;
    }
    for (const rs of this.matchingReplicaSets(pod)) this.deps.enqueue(podKey(rs));
  }

  podUpdated(oldPod: V1Pod | undefined, pod: V1Pod): void {
    const ref = controllerRefOf(pod);
    const oldRef = oldPod ? controllerRefOf(oldPod) : undefined;
    if (oldRef && oldRef.uid !== ref?.uid) {
      const old = this.resolve(pod.metadata?.namespace ?? "", oldRef);
      if (old) this.deps.enqueue(podKey(old));
    }
    if (isTerminating(pod) && ref) {
      const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
      if (rs) this.expectations.deletionObserved(podKey(rs), podKey(pod));
    }
    if (ref) {
      const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
      if (rs) this.deps.enqueue(podKey(rs));
      return;
    }
    for (const rs of this.matchingReplicaSets(pod)) this.deps.enqueue(podKey(rs));
  }

  podDeleted(pod: V1Pod): void {
    const ref = controllerRefOf(pod);
    if (!ref) return;
    const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
    if (!rs) return;
    this.expectations.deletionObserved(podKey(rs), podKey(pod));
    this.deps.enqueue(podKey(rs));
  }

  private resolve(namespace: string, ref: { kind: string; name: string; uid: string }): V1ReplicaSet | undefined {
    if (ref.kind !== "ReplicaSet") return undefined;
    const rs = this.deps.replicaSets.get(ref.name, namespace);
    return rs && rs.metadata?.uid === ref.uid ? rs : undefined;
  }

  private matchingReplicaSets(pod: V1Pod): V1ReplicaSet[] {
    return this.deps.replicaSets
      .list(pod.metadata?.namespace)
      .filter((rs) => selectorMatches(rs.spec?.selector, pod.metadata?.labels));
  }

  async sync(key: string): Promise<SyncResult> {
    const { namespace, name } = splitKey(key);
    const rs = this.deps.replicaSets.get(name, namespace);
    if (!rs) {
      this.expectations.delete(key);
      this.ownWrites.forget(key);
      this.nextScan.delete(key);
      return;
    }
    // The cache does not show this controller's last status write yet: its watch event brings the next sync.
    if (this.ownWrites.behind(key, rs.metadata?.resourceVersion)) return;
    const wait = (this.nextScan.get(key) ?? 0) - performance.now();
    if (wait > 0) return { requeueAfterMs: Math.ceil(wait) };
    const needsSync = this.expectations.satisfied(key);
    let scanStarted = performance.now();
    const owned = await this.claimPods(rs);
    const active = owned.filter(isActive);
    let scanMs = performance.now() - scanStarted;
    if (needsSync && !rs.metadata?.deletionTimestamp) await this.manageReplicas(key, rs, active);
    const now = this.deps.now();
    scanStarted = performance.now();
    const status = this.computeStatus(rs, active, now);
    scanMs += performance.now() - scanStarted;
    this.nextScan.set(key, performance.now() + Math.min(MAX_SCAN_GAP_MS, SCAN_SHARE * scanMs));
    await this.writeStatus(rs, status);
    // Pods become available minReadySeconds after they turn ready: look again then.
    const minReady = rs.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && status.readyReplicas !== status.availableReplicas) return { requeueAfterMs: minReady * 1000 };
    return undefined;
  }

  /** ControllerRefManager.ClaimPods: adopt matching orphans, release non-matching owned pods. */
  private async claimPods(rs: V1ReplicaSet): Promise<V1Pod[]> {
    const namespace = rs.metadata!.namespace!;
    const claimed: V1Pod[] = [];
    const deleting = Boolean(rs.metadata?.deletionTimestamp);
    for (const pod of this.deps.pods.list(namespace)) {
      const ref = controllerRefOf(pod);
      const matches = selectorMatches(rs.spec?.selector, pod.metadata?.labels);
      if (ref) {
        if (ref.uid !== rs.metadata?.uid) continue;
        if (matches || deleting) {
          claimed.push(pod);
          continue;
        }
        await this.release(rs, pod);
        continue;
      }
      if (!matches || deleting || isTerminating(pod)) continue;
      const adopted = await this.adopt(rs, pod);
      if (adopted) claimed.push(adopted);
    }
    return claimed;
  }

  private ownerReference(rs: V1ReplicaSet) {
    return { apiVersion: "apps/v1", kind: "ReplicaSet", name: rs.metadata!.name!, uid: rs.metadata!.uid!, controller: true, blockOwnerDeletion: true };
  }

  private async adopt(rs: V1ReplicaSet, pod: V1Pod): Promise<V1Pod | undefined> {
    // Like the real controller, recheck that the ReplicaSet still exists with this UID first.
    const fresh = await this.deps.apps.readNamespacedReplicaSet({ name: rs.metadata!.name!, namespace: rs.metadata!.namespace! });
    if (fresh.metadata?.uid !== rs.metadata?.uid || fresh.metadata?.deletionTimestamp) return undefined;
    const body = structuredClone(pod);
    body.metadata!.ownerReferences = [...(body.metadata!.ownerReferences ?? []), this.ownerReference(rs)];
    try {
      return await this.deps.core.replaceNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw new Error(`adopting pod ${podKey(pod)} into ReplicaSet ${podKey(rs)}`, { cause: err });
    }
  }

  private async release(rs: V1ReplicaSet, pod: V1Pod): Promise<void> {
    const body = structuredClone(pod);
    body.metadata!.ownerReferences = (body.metadata!.ownerReferences ?? []).filter((r) => r.uid !== rs.metadata?.uid);
    try {
      await this.deps.core.replaceNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body });
    } catch (err) {
      if (isNotFound(err)) return;
      throw new Error(`releasing pod ${podKey(pod)} from ReplicaSet ${podKey(rs)}`, { cause: err });
    }
  }

  private async manageReplicas(key: string, rs: V1ReplicaSet, active: V1Pod[]): Promise<void> {
    const want = rs.spec?.replicas ?? 1;
    const diff = active.length - want;
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expectCreations(key, count);
      const results = await Promise.allSettled(Array.from({ length: count }, () => this.createPod(rs)));
      const failures = results.filter((r) => r.status === "rejected");
      // Creations that failed will never be observed.
      for (let i = 0; i < failures.length; i++) this.expectations.creationObserved(key);
      if (failures.length) throw new Error(`creating ${failures.length} of ${count} pods for ReplicaSet ${key}`, { cause: (failures[0] as PromiseRejectedResult).reason });
    } else if (diff > 0) {
      const victims = [...active].sort(compareForDeletion).slice(0, Math.min(diff, BURST_REPLICAS));
      this.expectations.expectDeletions(key, victims.map(podKey));
      const results = await Promise.allSettled(
        victims.map(async (pod) => {
          try {
            await this.deps.podApi.delete(pod.metadata!.namespace!, pod.metadata!.name!);
          } catch (err) {
            this.expectations.deletionObserved(key, podKey(pod));
            if (!isNotFound(err)) throw err;
          }
        }),
      );
      const failed = results.find((r) => r.status === "rejected") as PromiseRejectedResult | undefined;
      if (failed) throw new Error(`deleting surplus pods of ReplicaSet ${key}`, { cause: failed.reason });
    }
  }

  private async createPod(rs: V1ReplicaSet): Promise<void> {
    const template = rs.spec?.template ?? {};
    const body: V1Pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        generateName: `${rs.metadata!.name}-`,
        namespace: rs.metadata!.namespace,
        labels: { ...(template.metadata?.labels ?? {}) },
        annotations: { ...(template.metadata?.annotations ?? {}) },
        ownerReferences: [this.ownerReference(rs)],
      },
      spec: structuredClone(template.spec!),
    };
    await this.deps.podApi.create(rs.metadata!.namespace!, body);
  }

  computeStatus(rs: V1ReplicaSet, active: V1Pod[], now: number): V1ReplicaSetStatus {
    const templateLabels = Object.entries(rs.spec?.template?.metadata?.labels ?? {});
    const minReady = rs.spec?.minReadySeconds ?? 0;
    // One pass: a sync runs on every pod change, over every pod of the ReplicaSet.
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    for (const p of active) {
      if (templateLabels.every(([k, v]) => p.metadata?.labels?.[k] === v)) fullyLabeled++;
      if (!isPodReady(p)) continue;
      ready++;
      if (isPodAvailable(p, minReady, now)) available++;
    }
    return {
      ...(rs.status ?? {}),
      replicas: active.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata?.generation ?? 0,
    };
  }

  private async writeStatus(rs: V1ReplicaSet, status: V1ReplicaSetStatus): Promise<void> {
    const cur: Partial<V1ReplicaSetStatus> = rs.status ?? {};
    const same =
      (cur.replicas ?? 0) === status.replicas &&
      (cur.fullyLabeledReplicas ?? 0) === status.fullyLabeledReplicas &&
      (cur.readyReplicas ?? 0) === status.readyReplicas &&
      (cur.availableReplicas ?? 0) === status.availableReplicas &&
      (cur.observedGeneration ?? 0) === status.observedGeneration;
    if (same) return;
    const body = { ...structuredClone(rs), status };
    try {
      const written = await this.deps.putStatus(rs.metadata!.namespace!, rs.metadata!.name!, body);
      this.ownWrites.wrote(podKey(rs), rs.metadata?.resourceVersion, written.metadata?.resourceVersion);
    } catch (err) {
      if (isNotFound(err)) return;
      throw new Error(`updating status of ReplicaSet ${podKey(rs)}`, { cause: err });
    }
  }
}
