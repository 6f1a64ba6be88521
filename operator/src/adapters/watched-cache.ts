// An informer whose change handlers are registered by the controller parts that need them,
// after it is started (its first events come asynchronously, after the parts have registered).
import type { KubernetesObject } from "@kubernetes/client-node";
import type { ChangeType, WatchedCache } from "../controllers/caches.js";
import { startInformer, type Informer, type StartInformerOptions } from "./informer.js";

export type WatchedInformer<T extends KubernetesObject> = WatchedCache<T> & Informer<T>;

export function startWatchedCache<T extends KubernetesObject>(
  opts: Omit<StartInformerOptions<T>, "onEvent">,
): WatchedInformer<T> {
  const handlers: Array<(obj: T, type: ChangeType, old: T | undefined) => void> = [];
  const informer = startInformer<T>({
    ...opts,
    onEvent: (type, obj, old) => handlers.forEach((h) => h(obj, type, old)),
  });
  return { ...informer, onChange: (h) => void handlers.push(h) };
}

/**
 * One cache of a namespaced kind over the watched namespaces: with none given, one informer for
 * all namespaces; otherwise one informer per namespace, each listing and watching only its own
 * namespace's collection (a Role there allows no more), merged behind the same cache.
 */
export function startWatchedCacheIn<T extends KubernetesObject>(
  namespaces: readonly string[],
  pathOf: (namespace: string | undefined) => string,
  opts: Omit<StartInformerOptions<T>, "onEvent" | "path">,
): WatchedInformer<T> {
  if (namespaces.length === 0) return startWatchedCache<T>({ ...opts, path: pathOf(undefined) });
  const handlers: Array<(obj: T, type: ChangeType, old: T | undefined) => void> = [];
  const onEvent = (type: ChangeType, obj: T, old: T | undefined) => handlers.forEach((h) => h(obj, type, old));
  const byNamespace = new Map(namespaces.map((ns) => [ns, startInformer<T>({ ...opts, path: pathOf(ns), onEvent })]));
  const all = [...byNamespace.values()];
  return {
    // No namespace: a cluster-scoped name, which a namespaced kind never has (as one informer over all namespaces answers).
    get: (namespace, name) => (namespace ? byNamespace.get(namespace)?.get(namespace, name) : undefined),
    list: (namespace) =>
      namespace ? (byNamespace.get(namespace)?.list(namespace) ?? []) : all.flatMap((i) => i.list()),
    hasSynced: () => all.every((i) => i.hasSynced()),
    restarts: () => all.reduce((n, i) => n + i.restarts(), 0),
    stop: async () => {
      await Promise.all(all.map((i) => i.stop()));
    },
    onChange: (h) => void handlers.push(h),
  };
}
