// Caches of namespaced kinds that follow this replica's namespaces when namespaces are sharded
// across replicas: one namespace-scoped list+watch per kind for each namespace the replica owns
// or is about to, behind the same WatchedCache port the controllers read, so a replica holds (and
// decodes the watch events of) its own share of the cluster only. A namespace let go is stopped
// and its objects dropped without a change handler firing (dropping is forgetting, not deleting);
// the forget handlers hear of it instead.
import type { KubernetesObject } from "@kubernetes/client-node";
import type { ChangeType } from "../controllers/caches.js";
import { startInformer, type Informer, type StartInformerOptions } from "./informer.js";
import type { WatchedInformer } from "./watched-cache.js";

export interface FollowingCache<T extends KubernetesObject> extends WatchedInformer<T> {
  /** Starts the namespace's list+watch (nothing if it runs already). */
  follow(namespace: string): void;
  /** Stops the namespace's list+watch and forgets its objects; no change handler sees them go, the forget handlers hear of the namespace. */
  drop(namespace: string): Promise<void>;
  /** The namespaces followed now. */
  followed(): string[];
  /** True once the namespace's first complete list is in (false for a namespace not followed). */
  syncedIn(namespace: string): boolean;
  onForget(handler: (namespace: string) => void): void;
}

type Handler<T> = (obj: T, type: ChangeType, old: T | undefined) => void;

interface Followed<T extends KubernetesObject> {
  informer: Informer<T>;
}

export function startFollowingCache<T extends KubernetesObject>(
  pathOf: (namespace: string) => string,
  opts: Omit<StartInformerOptions<T>, "onEvent" | "path">,
): FollowingCache<T> {
  const handlers: Array<Handler<T>> = [];
  const forgetHandlers: Array<(namespace: string) => void> = [];
  const byNamespace = new Map<string, Followed<T>>();
  return {
    follow(namespace) {
      if (byNamespace.has(namespace)) return;
      const f: Followed<T> = { informer: undefined as unknown as Informer<T> };
      byNamespace.set(namespace, f);
      f.informer = startInformer<T>({
        ...opts,
        path: pathOf(namespace),
        // Only the namespace's current informer speaks: one stopped mid-event says nothing more.
        onEvent: (type, obj, old) => {
          if (byNamespace.get(namespace) === f) handlers.forEach((h) => h(obj, type, old));
        },
      });
    },
    async drop(namespace) {
      const f = byNamespace.get(namespace);
      if (!f) return;
      byNamespace.delete(namespace);
      await f.informer.stop();
      forgetHandlers.forEach((h) => h(namespace));
    },
    followed: () => [...byNamespace.keys()].sort(),
    syncedIn: (namespace) => byNamespace.get(namespace)?.informer.hasSynced() ?? false,
    // A namespaced kind has no cluster-scoped names (as one informer over all namespaces answers).
    get: (namespace, name) => (namespace ? byNamespace.get(namespace)?.informer.get(namespace, name) : undefined),
    list: (namespace) =>
      namespace
        ? (byNamespace.get(namespace)?.informer.list(namespace) ?? [])
        : [...byNamespace.values()].flatMap((f) => f.informer.list()),
    // Complete for what it follows: each namespace's own sync gates acting there (NamespaceFollower).
    hasSynced: () => true,
    restarts: () => [...byNamespace.values()].reduce((n, f) => n + f.informer.restarts(), 0),
    stop: async () => {
      const all = [...byNamespace.keys()];
      await Promise.all(all.map((ns) => byNamespace.get(ns)?.informer.stop()));
    },
    onChange: (h) => void handlers.push(h),
    onForget: (h) => void forgetHandlers.push(h),
  };
}

/** Every following cache of the operator as one: what the shard membership starts, asks about and drops. */
export interface NamespaceFollower {
  /** Follows exactly these namespaces: starts the missing ones, stops and drops the others. */
  follow(namespaces: ReadonlySet<string>): Promise<void>;
  /** True once every kind's cache of the namespace holds a complete list. */
  synced(namespace: string): boolean;
  followed(): string[];
}

export function followerOf(caches: ReadonlyArray<FollowingCache<KubernetesObject>>): NamespaceFollower {
  const synced = (ns: string) => caches.every((c) => c.syncedIn(ns));
  return {
    async follow(namespaces) {
      for (const ns of namespaces) for (const c of caches) c.follow(ns);
      const gone = new Set(caches.flatMap((c) => c.followed()).filter((ns) => !namespaces.has(ns)));
      await Promise.all([...gone].flatMap((ns) => caches.map((c) => c.drop(ns))));
    },
    synced,
    followed: () => caches[0]?.followed() ?? [],
  };
}

/** Whether a cache of the set follows this replica's namespaces. */
export function isFollowing<T extends KubernetesObject>(c: WatchedInformer<T>): c is FollowingCache<T> {
  return typeof (c as Partial<FollowingCache<T>>).follow === "function";
}
