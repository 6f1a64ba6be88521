// The test server's controllers watch through the operator's informer (list+watch that restarts
// with backoff on any error), seen through the small interface they were written against: typed
// handlers per event and a cache looked up by name, then namespace.
import type { KubeConfig, KubernetesObject, ListPromise } from "@kubernetes/client-node";
import {
  startInformer as startCache,
  waitForCacheSync,
  type InformerEventType,
} from "../../../operator/src/adapters/informer.js";
import { KubeClient } from "../../../operator/src/adapters/kube-client.js";
import { connectionOf, kubeClientOf } from "../../../operator/src/adapters/kube-config.js";
import { LoopbackKubeClient } from "../loopback-client.js";
import { LoopbackDispatcher } from "../loopback-dispatcher.js";
import type { RequestHandler } from "../loopback.js";

export interface WatchedObjects<T extends KubernetesObject> {
  on(type: InformerEventType, handler: (obj: T) => void): void;
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): T[];
}

export interface RunningInformer<T extends KubernetesObject> {
  informer: WatchedObjects<T>;
  stop(): Promise<void>;
}

/** How long the first list may take before start fails (the server may still be warming up). */
const SYNC_TIMEOUT_MS = 20_000;

/**
 * The client the informers watch through: over HTTP, or, given the server's own request handler
 * (the controllers run inside the test server), in process to that handler (loopback-client.ts).
 */
export function watchClientOf(kc: KubeConfig, handler?: RequestHandler): KubeClient {
  if (!handler) return kubeClientOf(kc);
  const http = connectionOf(kc);
  const dispatcher = new LoopbackDispatcher(handler, new URL(http.server).host);
  const connection = {
    server: http.server,
    dispatcher,
    headers: () => http.headers(),
    close: async () => {
      await dispatcher.close();
      await http.close();
    },
  };
  return new LoopbackKubeClient(connection, handler);
}

export async function startInformer<T extends KubernetesObject>(
  /** A kubeconfig (then over HTTP) or the client to watch through. */
  source: KubeConfig | KubeClient,
  path: string,
  list: ListPromise<T>,
  onError: (err: unknown) => void,
  setup: (informer: WatchedObjects<T>) => void,
  /** Watches only these objects; `list` must ask for the same selector. */
  labelSelector?: string,
): Promise<RunningInformer<T>> {
  const handlers: Record<InformerEventType, Array<(obj: T) => void>> = { add: [], update: [], delete: [] };
  const report = (obj: object, msg?: string) =>
    onError(new Error(`informer for ${path}: ${msg ?? "failed"}`, { cause: (obj as { err?: unknown }).err }));
  const cache = startCache<T>({
    client: source instanceof KubeClient ? source : kubeClientOf(source),
    path,
    ...(labelSelector ? { labelSelector } : {}),
    list: () => list(),
    onEvent: (type, obj) => handlers[type].forEach((h) => h(obj)),
    logger: { debug: () => {}, info: () => {}, warn: report, error: report },
    backoff: { initialMs: 20, maxMs: 2_000 },
  });
  const informer: WatchedObjects<T> = {
    on: (type, handler) => void handlers[type].push(handler),
    get: (name, namespace) => cache.get(namespace, name),
    list: (namespace) => cache.list(namespace),
  };
  setup(informer);
  if (!(await waitForCacheSync([cache], SYNC_TIMEOUT_MS))) {
    await cache.stop();
    throw new Error(`starting informer for ${path}: no complete list within ${SYNC_TIMEOUT_MS} ms`);
  }
  return { informer, stop: () => cache.stop() };
}
