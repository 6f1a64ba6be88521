// List+watch caches built on client-node's ListWatch (what makeInformer returns), made to
// survive an API server that restarts, compacts and drops watches: client-node stops on any
// error other than 410, so every such error restarts it here with backoff.
import {
  HttpMethod,
  ListWatch,
  RequestContext,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { fetch } from "undici";
import { realClock, type Clock, type TimerHandle } from "../runtime/clock.js";
import type { LogSink } from "../runtime/logger.js";

export type InformerEventType = "add" | "update" | "delete";

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
  kc: KubeConfig;
  /** Collection path, e.g. "/api/v1/pods" or "/api/v1/namespaces/shop/pods". */
  path: string;
  /** Lists the collection; by default the path is listed as plain JSON, the same shape watch events have. */
  list?: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  fieldSelector?: string;
  onEvent: (type: InformerEventType, obj: T) => void;
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
   * Delay before re-watching after a watch ended quietly. client-node doubles it up to 30 s, which
   * would leave a cache blind that long; by default it is capped at 1 s.
   */
  reconnectDelay?: (ms: number) => Promise<void>;
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/** Lists a collection as plain JSON (paginated), so cached objects look like watch objects. */
export async function listRaw<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  opts: { labelSelector?: string | undefined; fieldSelector?: string | undefined; pageSize?: number; transform?: ((obj: T) => T) | undefined } = {},
): Promise<KubernetesListObject<T>> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`listing ${path}: no current cluster`);
  const items: T[] = [];
  let cont: string | undefined;
  let resourceVersion = "";
  let first: Record<string, unknown> | undefined;
  do {
    const url = new URL(cluster.server.replace(/\/$/, "") + path);
    url.searchParams.set("limit", String(opts.pageSize ?? 500));
    if (opts.labelSelector) url.searchParams.set("labelSelector", opts.labelSelector);
    if (opts.fieldSelector) url.searchParams.set("fieldSelector", opts.fieldSelector);
    if (cont) url.searchParams.set("continue", cont);
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    const res = await fetch(url, { method: "GET", headers: { ...ctx.getHeaders(), accept: "application/json" }, dispatcher: ctx.getDispatcher() as never });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) {
      throw Object.assign(new Error(`listing ${path}: HTTP ${res.status}`), { statusCode: res.status, body: text });
    }
    const page = JSON.parse(text) as { metadata?: { resourceVersion?: string; continue?: string }; items?: T[] } & Record<string, unknown>;
    first ??= page;
    for (const item of page.items ?? []) items.push(opts.transform ? opts.transform(item) : item);
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return { apiVersion: first?.apiVersion as string | undefined, kind: first?.kind as string | undefined, metadata: { resourceVersion }, items };
}

export function startInformer<T extends KubernetesObject>(opts: StartInformerOptions<T>): Informer<T> {
  const clock = opts.clock ?? realClock;
  const initialMs = opts.backoff?.initialMs ?? 100;
  const maxMs = opts.backoff?.maxMs ?? 30_000;
  const log = opts.logger;
  const what = opts.path + (opts.labelSelector ? `?labelSelector=${opts.labelSelector}` : "");

  let stopped = false;
  let synced = false;
  let listed = false;
  let delayMs = initialMs;
  let restartTimer: TimerHandle | undefined;
  let restartCount = 0;

  const succeeded = () => {
    delayMs = initialMs;
  };

  const list = opts.list ?? (() => listRaw<T>(opts.kc, opts.path, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, transform: opts.transform }));
  const transform = opts.transform;
  const trackedList = async (): Promise<KubernetesListObject<T>> => {
    const result = await list();
    if (transform && opts.list) result.items = result.items.map(transform);
    succeeded();
    listed = true;
    // ListWatch fills its cache synchronously right after this promise settles; a macrotask later it is complete.
    setImmediate(() => {
      if (!stopped) synced = true;
    });
    return result;
  };

  // Watch wrapper: counts delivered events as success (resets backoff) and asks for bookmarks.
  // client-node's stop() cannot abort a watch that is still connecting, so the wrapper drops
  // whatever such a watch delivers after stop() and aborts it once it has connected.
  const realWatch = new Watch(opts.kc);
  const watch = {
    watch: async (path: string, query: Record<string, unknown>, cb: (phase: string, obj: any, raw: any) => void, done: (err: any) => void) => {
      const controller = await realWatch.watch(
        path,
        { ...query, allowWatchBookmarks: true },
        (phase, obj, raw) => {
          if (stopped) return;
          if (phase === "ERROR") log.debug({ path: what, status: obj }, "watch reported an error");
          else succeeded();
          // The raw line is dropped: nothing reads it, and it would keep the whole object alive.
          cb(phase, transform && phase !== "ERROR" && phase !== "BOOKMARK" ? transform(obj as T) : obj, transform ? undefined : raw);
        },
        done,
      );
      if (stopped) controller.abort();
      return controller;
    },
  };

  const lw = new ListWatch<T>(
    opts.path,
    watch as unknown as Watch,
    trackedList,
    false,
    opts.labelSelector,
    opts.fieldSelector,
    { delayFn: opts.reconnectDelay ?? ((ms) => sleep(clock, Math.min(ms, 1000))) },
  );
  // A relist reports an object deleted and recreated under the same name (a StatefulSet pod, say)
  // as an update; consumers key state by uid, so it is delivered as the delete and add it was.
  const known = new Map<string, T>();
  const keyOf = (o: T) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
  lw.on("add", (o) => {
    if (stopped) return;
    known.set(keyOf(o), o);
    opts.onEvent("add", o);
  });
  lw.on("update", (o) => {
    if (stopped) return;
    const previous = known.get(keyOf(o));
    known.set(keyOf(o), o);
    if (previous?.metadata?.uid && o.metadata?.uid && previous.metadata.uid !== o.metadata.uid) {
      opts.onEvent("delete", previous);
      opts.onEvent("add", o);
    } else {
      opts.onEvent("update", o);
    }
  });
  lw.on("delete", (o) => {
    if (stopped) return;
    known.delete(keyOf(o));
    opts.onEvent("delete", o);
  });

  const scheduleRestart = (err: unknown) => {
    // client-node reports an AbortError after stop(): that one is ours, not a failure.
    if (stopped) return;
    if (restartTimer !== undefined) return;
    const wait = delayMs;
    delayMs = Math.min(maxMs, delayMs * 2);
    log.warn({ path: what, err, retryInMs: wait }, "list/watch failed; restarting");
    restartTimer = clock.setTimeout(() => {
      restartTimer = undefined;
      if (stopped) return;
      restartCount++;
      lw.start().catch(scheduleRestart);
    }, wait);
  };
  lw.on("error", scheduleRestart);
  lw.start().catch(scheduleRestart);

  return {
    get: (namespace, name) => lw.get(name, namespace ?? ""),
    list: (namespace) => [...lw.list(namespace)],
    hasSynced: () => {
      if (!synced && listed && lw.latestResourceVersion() !== "") synced = true;
      return synced;
    },
    restarts: () => restartCount,
    stop: async () => {
      stopped = true;
      if (restartTimer !== undefined) clock.clearTimeout(restartTimer);
      restartTimer = undefined;
      await lw.stop();
    },
  };
}

/** Resolves true once every informer has synced, false if the deadline passes first. */
export async function waitForCacheSync(informers: ReadonlyArray<Pick<Informer<any>, "hasSynced">>, timeoutMs: number, pollMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (informers.every((i) => i.hasSynced())) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
