// An informer whose change handlers are registered by the controller parts that need them,
// after it is started (its first events come asynchronously, after the parts have registered).
import type { KubernetesObject } from "@kubernetes/client-node";
import type { ChangeType, WatchedCache } from "../controllers/caches.js";
import { startInformer, type Informer, type StartInformerOptions } from "./informer.js";

export type WatchedInformer<T extends KubernetesObject> = WatchedCache<T> & Informer<T>;

export function startWatchedCache<T extends KubernetesObject>(opts: Omit<StartInformerOptions<T>, "onEvent">): WatchedInformer<T> {
  const handlers: Array<(obj: T, type: ChangeType) => void> = [];
  const informer = startInformer<T>({ ...opts, onEvent: (type, obj) => handlers.forEach((h) => h(obj, type)) });
  return { ...informer, onChange: (h) => void handlers.push(h) };
}
