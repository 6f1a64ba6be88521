// An in-memory WatchedCache for unit tests: put and remove call the registered handlers.
import type { ChangeType, WatchedCache } from "../caches.js";
import type { KubeObject } from "../kube-objects.js";

export class MemoryCache<T extends KubeObject> implements WatchedCache<T> {
  private readonly objects = new Map<string, T>();
  private readonly handlers: Array<(obj: T, type: ChangeType, old: T | undefined) => void> = [];

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

  onChange(handler: (obj: T, type: ChangeType, old: T | undefined) => void): void {
    this.handlers.push(handler);
  }
}

function keyFor(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}
