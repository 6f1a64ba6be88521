// An in-memory WatchedCache for unit tests: put and remove call the registered handlers.
import type { ChangeType, WatchedCache } from "../caches.js";
import type { KubeObject } from "../kube-objects.js";

export class MemoryCache<T extends KubeObject> implements WatchedCache<T> {
  private readonly objects = new Map<string, T>();
  private readonly handlers: Array<(obj: T, type: ChangeType, old: T | undefined) => void> = [];
  private readonly forgetHandlers: Array<(namespace: string) => void> = [];

  constructor(objects: readonly T[] = []) {
    for (const o of objects) this.objects.set(keyFor(o.metadata?.namespace, o.metadata?.name ?? ""), o);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(keyFor(namespace, name));
  }

  list(namespace?: string): T[] {
    return [...this.objects.values()].filter(
      (o) => namespace === undefined || (o.metadata?.namespace ?? "") === namespace,
    );
  }

  put(obj: T): void {
    const key = keyFor(obj.metadata?.namespace, obj.metadata?.name ?? "");
    const old = this.objects.get(key);
    this.objects.set(key, obj);
    for (const h of this.handlers) h(obj, old ? "update" : "add", old);
  }

  remove(namespace: string | undefined, name: string): void {
    const key = keyFor(namespace, name);
    const obj = this.objects.get(key);
    if (!obj) return;
    this.objects.delete(key);
    for (const h of this.handlers) h(obj, "delete", obj);
  }

  /** Drops the namespace's objects without a change for each, as a cache following a sharded replica's namespaces does. */
  forget(namespace: string): void {
    for (const o of this.list(namespace)) this.objects.delete(keyFor(namespace, o.metadata?.name ?? ""));
    for (const h of this.forgetHandlers) h(namespace);
  }

  onChange(handler: (obj: T, type: ChangeType, old: T | undefined) => void): void {
    this.handlers.push(handler);
  }

  onForget(handler: (namespace: string) => void): void {
    this.forgetHandlers.push(handler);
  }
}

function keyFor(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}
