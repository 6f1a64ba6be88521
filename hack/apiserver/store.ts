// In-memory storage with one global, monotonically increasing resourceVersion, like etcd.
export type KubeObject = Record<string, any>;

export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/** An event hands its objects to every listener as they are: listeners must not change them. */
export interface StoredEvent {
  type: EventType;
  /** Storage key of the resource, e.g. "/pods" or "apps/replicasets". */
  resource: string;
  object: KubeObject;
  /** The object before this change (MODIFIED and DELETED). */
  old?: KubeObject;
  rv: number;
}

export type EventListener = (event: StoredEvent) => void;

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * A deep copy of stored data. Objects come from JSON (or YAML) and hold only plain objects,
 * arrays and primitives, which are copied by hand: several times faster than structuredClone,
 * and the server copies each object several times per write. Anything else (a Date, a Map) is
 * copied by structuredClone.
 */
export function clone<T>(value: T): T {
  return copyValue(value) as T;
}

function deepFreeze(v: unknown): void {
  if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
}

function copyValue(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyValue(v[i]);
    return out;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const copied = copyValue((v as Record<string, unknown>)[k]);
    // A "__proto__" key from JSON is an own property: plain assignment would set the prototype.
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: copied, enumerable: true, writable: true, configurable: true });
    else out[k] = copied;
  }
  return out;
}

/**
 * How resourceVersions look on the wire. Clients must treat them as opaque strings; the numeric
 * form is etcd's, the opaque one (`opaqueResourceVersions`) proves a client does not compare them
 * as numbers. Both keep the server's own order internally.
 */
export interface ResourceVersionCodec {
  format(rv: number): string;
  /** undefined: not a resourceVersion this server issued. */
  parse(text: string): number | undefined;
}

export const NUMERIC_RESOURCE_VERSIONS: ResourceVersionCodec = {
  format: (rv) => String(rv),
  parse: (text) => (/^\d+$/.test(text) ? Number(text) : undefined),
};

/** Letters only, and not in the order of the numbers they stand for ("rv-z" is older than "rv-1a"). */
export const OPAQUE_RESOURCE_VERSIONS: ResourceVersionCodec = {
  format: (rv) => `rv-${rv.toString(36).split("").reverse().join("")}`,
  parse: (text) => {
    const m = /^rv-([0-9a-z]+)$/.exec(text);
    return m ? parseInt(m[1]!.split("").reverse().join(""), 36) : undefined;
  },
};

export class Store {
  private rv = 1;
  private readonly data = new Map<string, Map<string, KubeObject>>();
  /** Kept events: history[historyStart..] (the dropped front is cut off now and then, not shifted per event). */
  private history: StoredEvent[] = [];
  private historyStart = 0;
  private readonly listeners = new Set<EventListener>();
  /** The newest resourceVersion whose event is no longer kept: watches from before it get 410. */
  compactedRv = 0;
  /** The uids of stored objects, and owner uid -> dependents' keys: what garbage collection looks up. */
  private readonly uids = new Set<string>();
  private readonly dependents = new Map<string, Set<string>>();

  constructor(
    private readonly historySize: number,
    readonly rvCodec: ResourceVersionCodec = NUMERIC_RESOURCE_VERSIONS,
    /** Deep-freeze every stored object, so that a write path changing one throws instead of corrupting storage. */
    readonly freeze = false,
  ) {}

  currentRv(): number {
    return this.rv;
  }

  /** The current resourceVersion as clients see it. */
  currentRvText(): string {
    return this.rvCodec.format(this.rv);
  }

  private table(resource: string): Map<string, KubeObject> {
    let t = this.data.get(resource);
    if (!t) {
      t = new Map();
      this.data.set(resource, t);
    }
    return t;
  }

  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.table(resource).get(objectKey(namespace, name));
    return o ? clone(o) : undefined;
  }

  /** The stored object itself, without a copy: callers must not change it (nor anything in it). */
  getShared(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.table(resource).get(objectKey(namespace, name));
  }

  has(resource: string, namespace: string | undefined, name: string): boolean {
    return this.table(resource).has(objectKey(namespace, name));
  }

  /**
   * The stored objects themselves, sorted by key, without copies: for a paginated list that
   * copies only the page it returns. Callers must not change them.
   */
  listShared(resource: string, namespace?: string): readonly KubeObject[] {
    const table = this.table(resource);
    const out: KubeObject[] = [];
    for (const k of [...table.keys()].sort()) {
      const o = table.get(k)!;
      if (!namespace || o.metadata?.namespace === namespace) out.push(o);
    }
    return out;
  }

  /** Objects sorted by key (namespace/name), as etcd returns them. */
  list(resource: string, namespace?: string): KubeObject[] {
    const out: KubeObject[] = [];
    const keys = [...this.table(resource).keys()].sort();
    for (const k of keys) {
      const o = this.table(resource).get(k)!;
      if (namespace && o.metadata?.namespace !== namespace) continue;
      out.push(clone(o));
    }
    return out;
  }

  resources(): string[] {
    return [...this.data.keys()];
  }

  /** Writes a copy of the object with a new resourceVersion and emits the event; returns another copy, the caller's to change. */
  put(resource: string, obj: KubeObject): KubeObject {
    return clone(this.write(resource, clone(obj)));
  }

  /**
   * Writes the object itself with a new resourceVersion (no copy) and emits the event; returns it.
   * The store owns it from then on: neither the caller nor anyone it hands the result to may change
   * it, or anything it shares with other objects. For the server's own write paths, which build a
   * fresh object per write and only read or present what was stored.
   */
  write(resource: string, obj: KubeObject): KubeObject {
    const key = objectKey(obj.metadata.namespace, obj.metadata.name);
    const t = this.table(resource);
    const old = t.get(key);
    this.rv++;
    const stored = obj;
    stored.metadata = { ...stored.metadata, resourceVersion: this.rvCodec.format(this.rv) };
    if (this.freeze) deepFreeze(stored);
    t.set(key, stored);
    if (old) this.unindex(resource, key, old);
    this.index(resource, key, stored);
    // Neither copy is ever changed: the table replaces objects, never edits them.
    this.emit({ type: old ? "MODIFIED" : "ADDED", resource, object: stored, old, rv: this.rv });
    return stored;
  }

  remove(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = objectKey(namespace, name);
    const t = this.table(resource);
    const old = t.get(key);
    if (!old) return undefined;
    t.delete(key);
    this.unindex(resource, key, old);
    this.rv++;
    // The DELETED event carries the object at the deletion's resourceVersion, as the watch cache sends it.
    const gone = clone(old);
    gone.metadata.resourceVersion = this.rvCodec.format(this.rv);
    this.emit({ type: "DELETED", resource, object: gone, old, rv: this.rv });
    return clone(gone);
  }

  private index(resource: string, key: string, obj: KubeObject): void {
    if (obj.metadata.uid) this.uids.add(obj.metadata.uid);
    for (const ref of (obj.metadata.ownerReferences ?? []) as Array<{ uid: string }>) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(`${resource}|${key}`);
    }
  }

  private unindex(resource: string, key: string, obj: KubeObject): void {
    if (obj.metadata.uid) this.uids.delete(obj.metadata.uid);
    for (const ref of (obj.metadata.ownerReferences ?? []) as Array<{ uid: string }>) {
      const set = this.dependents.get(ref.uid);
      set?.delete(`${resource}|${key}`);
      if (set && set.size === 0) this.dependents.delete(ref.uid);
    }
  }

  hasUid(uid: string): boolean {
    return this.uids.has(uid);
  }

  hasDependents(uid: string): boolean {
    return (this.dependents.get(uid)?.size ?? 0) > 0;
  }

  private emit(event: StoredEvent): void {
    this.history.push(event);
    if (this.history.length - this.historyStart > this.historySize) {
      this.historyStart = this.history.length - this.historySize;
      this.compactedRv = this.history[this.historyStart - 1]!.rv;
      if (this.historyStart >= this.historySize) {
        this.history = this.history.slice(this.historyStart);
        this.historyStart = 0;
      }
    }
    for (const l of [...this.listeners]) l(event);
  }

  /** Events with rv > since, or undefined when some of them are no longer kept. */
  eventsSince(since: number): StoredEvent[] | undefined {
    if (since < this.compactedRv) return undefined;
    const out: StoredEvent[] = [];
    for (let i = this.historyStart; i < this.history.length; i++)
      if (this.history[i]!.rv > since) out.push(this.history[i]!);
    return out;
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
