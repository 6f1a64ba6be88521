// The caches the controllers read, as ports: an ObjectCache each controller part may register
// change handlers on. The informers behind them live in the adapters.
import type {
  KubeObject,
  ObjectCache,
  PodObject,
  PolicyObject,
  ReplicaSetObject,
  ServiceObject,
} from "./kube-objects.js";

export type ChangeType = "add" | "update" | "delete";

export interface WatchedCache<T> extends ObjectCache<T> {
  /**
   * Calls the handler for every change the cache sees, after it has applied it, with the object
   * it held before (undefined on add; on delete obj is the object removed), so a handler can
   * tell what changed without remembering previous values itself.
   */
  onChange(handler: (obj: T, type: ChangeType, old: T | undefined) => void): void;
  /**
   * Calls the handler when the cache forgets a namespace's objects without a change for each
   * (a sharded replica let the namespace go), so that what was built from its changes can be
   * forgotten too. A cache of the whole cluster never forgets, and may leave this out.
   */
  onForget?(handler: (namespace: string) => void): void;
}

export interface Caches {
  policies: WatchedCache<PolicyObject>;
  pods: WatchedCache<PodObject>;
  services: WatchedCache<ServiceObject>;
  nodes: WatchedCache<KubeObject>;
  /** Only the EndpointSlices this operator manages. */
  slices: WatchedCache<KubeObject>;
  /** ReplicaSets, slim (owner Deployment, revision, creation time): rollout awareness. */
  replicaSets: WatchedCache<ReplicaSetObject>;
  /** Only the diagnostics ConfigMaps this operator wrote (labelled healthprobe.io/policy), without their data. */
  diagnostics: WatchedCache<KubeObject>;
  /** Only the policies' replacement ledger ConfigMaps (labelled healthprobe.io/ledger=policy). */
  ledgers: WatchedCache<KubeObject>;
  /** Only the EndpointSlices Kubernetes' EndpointSlice controller writes, slimmed to their endpoints' readiness (drain method ReadinessGate reports them). */
  builtInSlices: WatchedCache<KubeObject>;
}

/** A work queue as the handlers see it. */
export interface Enqueue {
  add(key: string): void;
}
