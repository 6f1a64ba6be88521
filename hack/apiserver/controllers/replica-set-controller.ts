// ReplicaSet controller, after pkg/controller/replicaset/replica_set.go: claims pods (adopt
// matching orphans, release owned pods that stopped matching), creates or deletes pods to reach
// spec.replicas, guarded by expectations, and writes status only when it changed. The first sync
// of a ReplicaSet (and one after its generation or deletion changed) claims from every pod of the
// namespace, as the real one does each time; later ones claim only the pods whose events came
// since, and the status counts are kept as they change (owned-pods.ts).
import type { AppsV1Api, CoreV1Api, V1Pod, V1ReplicaSet, V1ReplicaSetStatus } from "@kubernetes/client-node";
import { Expectations } from "./expectations.js";
import { OwnedPods } from "./owned-pods.js";
import { OwnWrites } from "./own-writes.js";
import type { PodRequests } from "./pod-requests.js";
import {
  compareForDeletion,
  controllerRefOf,
  isNotFound,
  isTerminating,
  podKey,
  selectorMatches,
  splitKey,
} from "./pods.js";
import type { SyncResult } from "./work-queue.js";

/** The real controller's burst size for creates and deletes in one sync. */
export const BURST_REPLICAS = 500;

export interface ReplicaSetControllerDeps {
  core: CoreV1Api;
  /** Creates and deletes, one per replica: plain JSON on a keep-alive pool. */
  podApi: Pick<PodRequests, "create" | "delete">;
  /** PUT of the status subresource (a full ReplicaSet as the body), resolving to the answer; throws with `code` on an HTTP error. */
  putStatus: (namespace: string, name: string, rs: V1ReplicaSet) => Promise<V1ReplicaSet>;
  apps: AppsV1Api;
  pods: { get(name: string, namespace?: string): V1Pod | undefined; list(namespace?: string): ReadonlyArray<V1Pod> };
  replicaSets: {
    get(name: string, namespace?: string): V1ReplicaSet | undefined;
    list(namespace?: string): ReadonlyArray<V1ReplicaSet>;
  };
  now: () => number;
  enqueue: (key: string) => void;
}

export class ReplicaSetController {
  readonly expectations: Expectations;
  private readonly ownWrites = new OwnWrites();
  /** Per ReplicaSet key: the pods it owns, and those touched since its last sync. */
  private readonly owned = new Map<string, OwnedPods>();

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
      this.wake(key, pod);
      return;
    }
    for (const rs of this.matchingReplicaSets(pod)) this.wake(podKey(rs), pod);
  }

  /** Queues the ReplicaSet, and marks the pod for its next sync to claim again. */
  private wake(rsKey: string, pod: V1Pod): void {
    this.owned.get(rsKey)?.touch(podKey(pod));
    this.deps.enqueue(rsKey);
  }

  podUpdated(oldPod: V1Pod | undefined, pod: V1Pod): void {
    const ref = controllerRefOf(pod);
    const oldRef = oldPod ? controllerRefOf(oldPod) : undefined;
    if (oldRef && oldRef.uid !== ref?.uid) {
      const old = this.resolve(pod.metadata?.namespace ?? "", oldRef);
      if (old) this.wake(podKey(old), pod);
    }
    if (isTerminating(pod) && ref) {
      const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
      if (rs) this.expectations.deletionObserved(podKey(rs), podKey(pod));
    }
    if (ref) {
      const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
      if (rs) this.wake(podKey(rs), pod);
      return;
    }
    for (const rs of this.matchingReplicaSets(pod)) this.wake(podKey(rs), pod);
  }

  podDeleted(pod: V1Pod): void {
    const ref = controllerRefOf(pod);
    if (!ref) return;
    const rs = this.resolve(pod.metadata?.namespace ?? "", ref);
    if (!rs) return;
    this.expectations.deletionObserved(podKey(rs), podKey(pod));
    this.wake(podKey(rs), pod);
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
      this.owned.delete(key);
      return;
    }
    // The cache does not show this controller's last status write yet: its watch event brings the next sync.
    if (this.ownWrites.behind(key, rs.metadata?.resourceVersion)) return;
    const needsSync = this.expectations.satisfied(key);
    const owned = await this.claimPods(key, rs);
    if (needsSync && !rs.metadata?.deletionTimestamp) await this.manageReplicas(key, rs, owned);
    const status = this.computeStatus(rs, owned, this.deps.now());
    await this.writeStatus(rs, status);
    // Pods become available minReadySeconds after they turn ready: look again then.
    const minReady = rs.spec?.minReadySeconds ?? 0;
    if (minReady > 0 && status.readyReplicas !== status.availableReplicas) return { requeueAfterMs: minReady * 1000 };
    return undefined;
  }

  /**
   * ControllerRefManager.ClaimPods over every pod of the namespace when the ReplicaSet's index is
   * new (or its uid, generation or deletion changed), else over the pods touched since the last sync.
   */
  private async claimPods(key: string, rs: V1ReplicaSet): Promise<OwnedPods> {
    const namespace = rs.metadata!.namespace!;
    const deleting = Boolean(rs.metadata?.deletionTimestamp);
    const version = `${rs.metadata?.uid}/${rs.metadata?.generation ?? 0}/${deleting}`;
    let owned = this.owned.get(key);
    if (owned?.version === version) {
      for (const k of owned.takeTouched()) {
        const pod = this.deps.pods.get(splitKey(k).name, namespace);
        owned.set(k, pod ? await this.claim(rs, pod, deleting) : undefined);
      }
      return owned;
    }
    // Registered first: pods touched while this scan waits on an adoption are claimed again next time.
    owned = new OwnedPods(version, Object.entries(rs.spec?.template?.metadata?.labels ?? {}));
    this.owned.set(key, owned);
    for (const pod of this.deps.pods.list(namespace)) owned.set(podKey(pod), await this.claim(rs, pod, deleting));
    return owned;
  }

  /** One pod's claim: the pod when it is (or now becomes) the ReplicaSet's, undefined otherwise. */
  private async claim(rs: V1ReplicaSet, pod: V1Pod, deleting: boolean): Promise<V1Pod | undefined> {
    const ref = controllerRefOf(pod);
    const matches = selectorMatches(rs.spec?.selector, pod.metadata?.labels);
    if (ref) {
      if (ref.uid !== rs.metadata?.uid) return undefined;
      if (matches || deleting) return pod;
      await this.release(rs, pod);
      return undefined;
    }
    if (!matches || deleting || isTerminating(pod)) return undefined;
    return this.adopt(rs, pod);
  }

  private ownerReference(rs: V1ReplicaSet) {
    return {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: rs.metadata!.name!,
      uid: rs.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
  }

  private async adopt(rs: V1ReplicaSet, pod: V1Pod): Promise<V1Pod | undefined> {
    // Like the real controller, recheck that the ReplicaSet still exists with this UID first.
    const fresh = await this.deps.apps.readNamespacedReplicaSet({
      name: rs.metadata!.name!,
      namespace: rs.metadata!.namespace!,
    });
    if (fresh.metadata?.uid !== rs.metadata?.uid || fresh.metadata?.deletionTimestamp) return undefined;
    const body = structuredClone(pod);
    body.metadata!.ownerReferences = [...(body.metadata!.ownerReferences ?? []), this.ownerReference(rs)];
    try {
      return await this.deps.core.replaceNamespacedPod({
        name: pod.metadata!.name!,
        namespace: pod.metadata!.namespace!,
        body,
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw new Error(`adopting pod ${podKey(pod)} into ReplicaSet ${podKey(rs)}`, { cause: err });
    }
  }

  private async release(rs: V1ReplicaSet, pod: V1Pod): Promise<void> {
    const body = structuredClone(pod);
    body.metadata!.ownerReferences = (body.metadata!.ownerReferences ?? []).filter((r) => r.uid !== rs.metadata?.uid);
    try {
      await this.deps.core.replaceNamespacedPod({
        name: pod.metadata!.name!,
        namespace: pod.metadata!.namespace!,
        body,
      });
    } catch (err) {
      if (isNotFound(err)) return;
      throw new Error(`releasing pod ${podKey(pod)} from ReplicaSet ${podKey(rs)}`, { cause: err });
    }
  }

  private async manageReplicas(key: string, rs: V1ReplicaSet, owned: OwnedPods): Promise<void> {
    const want = rs.spec?.replicas ?? 1;
    const diff = owned.active - want;
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expectCreations(key, count);
      const results = await Promise.allSettled(Array.from({ length: count }, () => this.createPod(rs)));
      const failures = results.filter((r) => r.status === "rejected");
      // Creations that failed will never be observed.
      for (let i = 0; i < failures.length; i++) this.expectations.creationObserved(key);
      if (failures.length)
        throw new Error(`creating ${failures.length} of ${count} pods for ReplicaSet ${key}`, {
          cause: (failures[0] as PromiseRejectedResult).reason,
        });
    } else if (diff > 0) {
      const victims = owned.activePods().sort(compareForDeletion).slice(0, Math.min(diff, BURST_REPLICAS));
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

  /** Counted over the active owned pods. */
  computeStatus(rs: V1ReplicaSet, owned: OwnedPods, now: number): V1ReplicaSetStatus {
    return {
      ...(rs.status ?? {}),
      replicas: owned.active,
      fullyLabeledReplicas: owned.labeled,
      readyReplicas: owned.ready,
      availableReplicas: owned.available(rs.spec?.minReadySeconds ?? 0, now),
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
