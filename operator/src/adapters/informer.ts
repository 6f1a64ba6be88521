// List+watch caches over plain JSON, made to survive an API server that restarts, compacts and
// drops watches: a watch that ends is resumed from the last resourceVersion seen, a 410 (too old)
// relists, and any other error restarts the list/watch with backoff. A relist reports what changed
// while the watch was down, deletes included, as events.
import { realClock, type Clock, type TimerHandle } from "../runtime/clock.js";
import type { LogSink } from "../runtime/logger.js";
import type { KubeClient } from "./kube-client.js";
import type { KubernetesObject } from "./kube-object.js";

export type InformerEventType = "add" | "update" | "delete";

/** A list as the API server returns it. */
export interface KubernetesListObject<T> {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  metadata?: { resourceVersion?: string | undefined; continue?: string | undefined } | undefined;
  items: T[];
}

export interface Informer<T extends KubernetesObject> {
  /** Cached object by namespace ("" or undefined for cluster-scoped) and name. */
  get(namespace: string | undefined, name: string): T | undefined;
  /** Cached objects, all or one namespace's. */
  list(namespace?: string): T[];
  /** True once the first complete list has been loaded into the cache (stays true). */
  hasSynced(): boolean;
  /** Times the list/watch has been restarted after an error. */
  restarts(): number;
  stop(): Promise<void>;
}

export interface StartInformerOptions<T extends KubernetesObject> {
  client: KubeClient;
  /** Collection path, e.g. "/api/v1/pods" or "/api/v1/namespaces/shop/pods". */
  path: string;
  /** Lists the collection; by default the path is listed as plain JSON, the same shape watch events have. */
  list?: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  fieldSelector?: string;
  /** old: the object the cache held before (undefined on add; on delete, the same as obj). */
  onEvent: (type: InformerEventType, obj: T, old: T | undefined) => void;
  /**
   * Applied to every object as it arrives (listed or watched), before it is cached or handed to
   * onEvent: keep only the fields the operator reads, so the cache does not hold whole objects
   * (managedFields, container specs, statuses) for thousands of pods. It must keep
   * metadata.name, namespace, uid and resourceVersion, which the cache itself uses.
   */
  transform?: (obj: T) => T;
  logger: LogSink;
  clock?: Clock;
  /** Restart backoff after an error: initial delay doubling to max, reset on success. */
  backoff?: { initialMs?: number; maxMs?: number };
  /**
   * Delay before re-watching after a watch ended quietly (without an event), called with a delay
   * doubling from 1 s to 30 s; by default it waits at most 1 s, so a cache is never blind long.
   */
  reconnectDelay?: (ms: number) => Promise<void>;
}

/**
 * A watch that sends nothing (not even a bookmark) this long is given up and resumed: a
 * connection gone half-open never ends by itself. kube-apiserver sends a quiet watch a bookmark
 * about once a minute, so anything shorter would reconnect every quiet watch over and over.
 */
const WATCH_INACTIVITY_MS = 90_000;

/** The server ends each watch after 5–10 min (client-go's reflector asks the same), with a bookmark just before, so watches spread out instead of all ending together. */
const watchTimeoutSeconds = (): number => 300 + Math.floor(Math.random() * 300);

/** Lists a collection as plain JSON (paginated), so cached objects look like watch objects. */
export async function listRaw<T extends KubernetesObject>(
  client: KubeClient,
  path: string,
  opts: {
    labelSelector?: string | undefined;
    fieldSelector?: string | undefined;
    pageSize?: number;
    transform?: ((obj: T) => T) | undefined;
  } = {},
): Promise<KubernetesListObject<T>> {
  const items: T[] = [];
  let cont: string | undefined;
  let resourceVersion = "";
  let first: Record<string, unknown> | undefined;
  do {
    const page = await client.get<
      { metadata?: { resourceVersion?: string; continue?: string }; items?: T[] } & Record<string, unknown>
    >(path, {
      limit: opts.pageSize ?? 500,
      labelSelector: opts.labelSelector || undefined,
      fieldSelector: opts.fieldSelector || undefined,
      continue: cont,
    });
    first ??= page;
    for (const item of page.items ?? []) items.push(opts.transform ? opts.transform(item) : item);
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return {
    apiVersion: first?.apiVersion as string | undefined,
    kind: first?.kind as string | undefined,
    metadata: { resourceVersion },
    items,
  };
}

/** The cache: objects by namespace, then name. */
class ObjectStore<T extends KubernetesObject> {
  private readonly byNamespace = new Map<string, Map<string, T>>();

  get(namespace: string, name: string): T | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  list(namespace?: string): T[] {
    if (namespace) return [...(this.byNamespace.get(namespace)?.values() ?? [])];
    const out: T[] = [];
    for (const objects of this.byNamespace.values()) for (const o of objects.values()) out.push(o);
    return out;
  }

  set(o: T): T | undefined {
    const ns = o.metadata?.namespace ?? "";
    let objects = this.byNamespace.get(ns);
    if (!objects) this.byNamespace.set(ns, (objects = new Map()));
    const name = o.metadata?.name ?? "";
    const previous = objects.get(name);
    objects.set(name, o);
    return previous;
  }

  delete(o: T): T | undefined {
    const ns = o.metadata?.namespace ?? "";
    const objects = this.byNamespace.get(ns);
    const name = o.metadata?.name ?? "";
    const previous = objects?.get(name);
    if (!objects || previous === undefined) return undefined;
    objects.delete(name);
    if (objects.size === 0) this.byNamespace.delete(ns);
    return previous;
  }
}

type WatchEnd = "ended" | "gone" | "inactive";

export function startInformer<T extends KubernetesObject>(opts: StartInformerOptions<T>): Informer<T> {
  const clock = opts.clock ?? realClock;
  const initialMs = opts.backoff?.initialMs ?? 100;
  const maxMs = opts.backoff?.maxMs ?? 30_000;
  const log = opts.logger;
  const what = opts.path + (opts.labelSelector ? `?labelSelector=${opts.labelSelector}` : "");
  const transform = opts.transform ?? ((o: T) => o);
  // The default list slims each page as it arrives, so a whole list of full objects never exists at once.
  const list = opts.list
    ? async () => {
        const listed = await opts.list!();
        return { ...listed, items: listed.items.map(transform) };
      }
    : () =>
        listRaw<T>(opts.client, opts.path, {
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          transform,
        });
  const reconnectDelay = opts.reconnectDelay ?? ((ms: number) => sleep(Math.min(ms, 1000)));

  const store = new ObjectStore<T>();
  let stopped = false;
  let synced = false;
  let restartCount = 0;
  let resourceVersion = "";
  let abort: AbortController | undefined;
  let sleeping: { timer: TimerHandle; resolve: () => void } | undefined;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = clock.setTimeout(() => {
        sleeping = undefined;
        resolve();
      }, ms);
      sleeping = { timer, resolve };
    });
  }

  // An object whose uid changed under the same name (deleted and recreated while the watch was
  // down) is delivered as the delete and add it was: consumers key state by uid.
  const upsert = (o: T) => {
    const previous = store.set(o);
    if (previous === undefined) opts.onEvent("add", o, undefined);
    else if (previous.metadata?.uid && o.metadata?.uid && previous.metadata.uid !== o.metadata.uid) {
      opts.onEvent("delete", previous, previous);
      opts.onEvent("add", o, undefined);
    } else if (
      previous.metadata?.resourceVersion === undefined ||
      previous.metadata.resourceVersion !== o.metadata?.resourceVersion
    )
      opts.onEvent("update", o, previous);
  };
  const remove = (o: T) => {
    const previous = store.delete(o);
    if (previous !== undefined) opts.onEvent("delete", o, previous);
  };
  const replaceAll = (items: readonly T[]) => {
    const keep = new Set(items.map((o) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`));
    for (const o of store.list()) if (!keep.has(`${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`)) remove(o);
    for (const o of items) upsert(o);
  };

  /** Watches from resourceVersion until the watch ends; returns how it ended, throws on an error. */
  const watchOnce = async (): Promise<{ end: WatchEnd; events: number }> => {
    const controller = (abort = new AbortController());
    let inactive = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const resetTimer = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => {
        inactive = true;
        controller.abort();
      }, WATCH_INACTIVITY_MS);
      timer.unref();
    };
    let events = 0;
    resetTimer();
    try {
      const query = {
        resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: watchTimeoutSeconds(),
        labelSelector: opts.labelSelector || undefined,
        fieldSelector: opts.fieldSelector || undefined,
      };
      for await (const e of opts.client.watch<T & { code?: number }>(opts.path, query, controller.signal)) {
        if (stopped) break;
        resetTimer();
        if (e.type === "ERROR") {
          if (e.object?.code === 410) return { end: "gone", events };
          log.debug({ path: what, status: e.object }, "watch reported an error");
          continue;
        }
        events++;
        delayMs = initialMs;
        if (e.type === "ADDED" || e.type === "MODIFIED") upsert(transform(e.object));
        else if (e.type === "DELETED") remove(transform(e.object));
        resourceVersion = e.object?.metadata?.resourceVersion ?? resourceVersion;
      }
      return { end: "ended", events };
    } catch (err) {
      if (inactive) return { end: "inactive", events };
      if ((err as { statusCode?: number }).statusCode === 410) return { end: "gone", events };
      throw err;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      // A watch left early (a 410, a stop) would otherwise hold its connection, unread, for good.
      controller.abort();
    }
  };

  let delayMs = initialMs;
  // A function of its own: a list held in the run loop's frame would stay alive for the whole
  // watch that follows (the async frame keeps it), every listed object with it.
  const relist = async () => {
    const listed = await list();
    if (stopped) return;
    replaceAll(listed.items);
    resourceVersion = listed.metadata?.resourceVersion ?? "";
    synced = true;
    delayMs = initialMs;
  };

  const run = async () => {
    let quietMs = 0;
    while (!stopped) {
      try {
        if (!resourceVersion) {
          await relist();
          if (stopped) return;
        }
        const { end, events } = await watchOnce();
        if (end === "gone") resourceVersion = "";
        // A watch that ends quietly is resumed after a delay growing to 30 s (capped by reconnectDelay).
        if (end === "ended" && events === 0 && !stopped) {
          quietMs = quietMs > 0 ? Math.min(quietMs * 2, 30_000) : 1000;
          await reconnectDelay(quietMs);
        } else quietMs = 0;
      } catch (err) {
        if (stopped) return;
        const wait = delayMs;
        delayMs = Math.min(maxMs, delayMs * 2);
        log.warn({ path: what, err, retryInMs: wait }, "list/watch failed; restarting");
        await sleep(wait);
        if (stopped) return;
        restartCount++;
      }
    }
  };
  void run();

  return {
    get: (namespace, name) => store.get(namespace ?? "", name),
    list: (namespace) => store.list(namespace),
    hasSynced: () => synced,
    restarts: () => restartCount,
    stop: async () => {
      stopped = true;
      abort?.abort();
      if (sleeping) {
        clock.clearTimeout(sleeping.timer);
        sleeping.resolve();
      }
    },
  };
}

/** Resolves true once every informer has synced, false if the deadline passes first. */
export async function waitForCacheSync(
  informers: ReadonlyArray<Pick<Informer<any>, "hasSynced">>,
  timeoutMs: number,
  pollMs = 20,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (informers.every((i) => i.hasSynced())) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
