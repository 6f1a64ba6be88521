// The controllers run in the test server's process, so they watch its store itself rather than
// over HTTP: a cache per resource of copies (nothing may change stored objects), filled from the
// stored objects and then kept by the store's events, in order, handed over a microtask after
// each write (never within it, so a handler cannot come between a write and its other watchers).
import type { KubernetesObject } from "@kubernetes/client-node";
import type { Gvr, StoreReader } from "../index.js";
import { storageKey } from "../resource-types.js";
import { clone, type KubeObject } from "../store.js";

export type InformerEventType = "add" | "update" | "delete";
export type StoreSource = Pick<StoreReader, "subscribe" | "map">;

export interface WatchedObjects<T extends KubernetesObject> {
  on(type: InformerEventType, handler: (obj: T) => void): void;
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): T[];
}

export interface RunningInformer<T extends KubernetesObject> {
  informer: WatchedObjects<T>;
  stop(): void;
}

export function startInformer<T extends KubernetesObject>(
  store: StoreSource,
  gvr: Gvr,
  onError: (err: unknown) => void,
  setup: (informer: WatchedObjects<T>) => void,
  /** Watches only objects with this label (name, value), as a label selector would. */
  label?: [string, string],
): RunningInformer<T> {
  const handlers: Record<InformerEventType, Array<(obj: T) => void>> = { add: [], update: [], delete: [] };
  const cache = new Map<string, Map<string, T>>();
  const apply = (stored: KubeObject, deleted: boolean): void => {
    const { namespace = "", name, labels } = stored.metadata;
    const objects = cache.get(namespace) ?? cache.set(namespace, new Map()).get(namespace)!;
    const gone = deleted || (label !== undefined && labels?.[label[0]] !== label[1]);
    if (gone && !objects.has(name)) return;
    const obj = clone(stored) as T;
    const type = gone ? "delete" : objects.has(name) ? "update" : "add";
    if (gone) objects.delete(name);
    else objects.set(name, obj);
    try {
      for (const handler of handlers[type]) handler(obj);
    } catch (err) {
      onError(new Error(`informer for ${gvr.resource}: handling ${type} of ${namespace}/${name}`, { cause: err }));
    }
  };
  const informer: WatchedObjects<T> = {
    on: (type, handler) => void handlers[type].push(handler),
    get: (name, namespace) => cache.get(namespace ?? "")?.get(name),
    list: (namespace) =>
      namespace ? [...(cache.get(namespace)?.values() ?? [])] : [...cache.values()].flatMap((m) => [...m.values()]),
  };
  setup(informer);
  const key = storageKey(gvr.group, gvr.resource);
  let pending: Array<{ type: string; object: KubeObject }> = [];
  let stopped = false;
  const deliver = (): void => {
    const events = pending;
    pending = [];
    for (const e of events) if (!stopped) apply(e.object, e.type === "DELETED");
  };
  // Listed and subscribed in one turn: no write comes between.
  for (const stored of store.map(gvr, undefined, (o) => o)) apply(stored, false);
  const unsubscribe = store.subscribe((e) => {
    if (e.resource === key && pending.push(e) === 1) queueMicrotask(deliver);
  });
  return { informer, stop: () => void ((stopped = true), unsubscribe()) };
}
