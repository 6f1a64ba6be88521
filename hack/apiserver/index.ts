// The Kubernetes API test server: real HTTP, in-memory storage, Kubernetes semantics for the kinds the
// operator and its tools use. Start one per test file; point client-node, kubectl or helm at kubeconfig().
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { Cluster } from "./cluster.js";
import { Faults, type FaultInjector } from "./faults.js";
import { createHandler } from "./http-server.js";
import { PodLogs } from "./pod-logs.js";
import { kubeconfigYaml } from "./kubeconfig.js";
import type { RequestLogEntry } from "./request-log.js";
import { apiVersionOf } from "./resource-types.js";
import { NUMERIC_RESOURCE_VERSIONS, OPAQUE_RESOURCE_VERSIONS, Store, type KubeObject } from "./store.js";
import { startControllers } from "./controllers/index.js";

export type { RequestLogEntry } from "./request-log.js";
export { requestsBy, isWrite } from "./request-log.js";
export type { FaultInjector, FailNextOptions, FailRateOptions, FaultFilter } from "./faults.js";
export type { KubeObject } from "./store.js";

export interface ApiServerOptions {
  /** 0 = ephemeral (default). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  simulateKubelet?: boolean;
  /**
   * Pod deletes keep the pod terminating (deletionTimestamp, deletionGracePeriodSeconds) until the kubelet
   * stand-in finishes it, as on a real node. Only with simulateKubelet; default true there.
   */
  gracefulPodDeletion?: boolean;
  /** How long the kubelet stand-in takes to stop a terminating pod's containers, default 0 (the next tick). */
  terminationDelayMs?: number;
  /** Default 127.0.10.0/24. */
  podCidr?: string;
  /** Default true: ReplicaSet, PodDisruptionBudget and EndpointSlice (Services with a selector) controllers. */
  controllers?: boolean;
  /** Events kept for watch resume, default 1000. */
  watchHistory?: number;
  /** Interval of BOOKMARK events on watches that allow them, default 60 s (kube-apiserver's watch cache: about once a minute). */
  bookmarkIntervalMs?: number;
  /** Keep at most this many request log entries (oldest dropped first); default unlimited. */
  requestLogLimit?: number;
  /**
   * Issue non-numeric resourceVersions ("rv-…", not ordered as strings or numbers), as a client
   * must expect of any API server: proves that it treats them as opaque.
   */
  opaqueResourceVersions?: boolean;
  /**
   * Deep-freeze every stored object: the server shares stored objects with watch events and its
   * answers instead of copying them, so a write path that changed one would corrupt storage; frozen,
   * it throws. Default: on under jest (NODE_ENV=test), off elsewhere (it costs a walk per write).
   */
  freezeStoredObjects?: boolean;
}

/** In-process read access to storage, for test assertions. */
export interface StoreReader {
  /** e.g. get({ group: "", version: "v1", resource: "pods" }, "default", "web-1") */
  get(gvr: Gvr, namespace: string | undefined, name: string): KubeObject | undefined;
  list(gvr: Gvr, namespace?: string): KubeObject[];
  /** How many stored objects `matches`, read in place without copies (as stored, not presented): for polling many objects cheaply. `matches` must not change them. */
  count(gvr: Gvr, namespace: string | undefined, matches: (obj: KubeObject) => boolean): number;
  /** What `view` makes of each stored object, read in place without copies (as stored, not presented): `view` must not change them, nor the caller what it keeps of them. */
  map<T>(gvr: Gvr, namespace: string | undefined, view: (obj: KubeObject) => T): T[];
  /** The current global resourceVersion. */
  resourceVersion(): string;
  /** Every stored change as it is made (listeners must not change the objects); returns the unsubscribe. */
  subscribe(listener: (event: { type: string; resource: string; object: KubeObject }) => void): () => void;
}

export interface Gvr {
  group: string;
  version: string;
  resource: string;
}

export interface TestApiServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Kubeconfig YAML; the user name doubles as bearer token (default "admin"). */
  kubeconfig(user?: string): string;
  writeKubeconfig(path: string, user?: string): void;
  requestLog: RequestLogEntry[];
  faults: FaultInjector;
  store: StoreReader;
  /** The container logs GET pods/{name}/log serves: a test (or the pod servers) writes them. */
  podLogs: Pick<PodLogs, "append" | "restart">;
  stop(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions = {}): Promise<TestApiServer> {
  const store = new Store(
    opts.watchHistory ?? 1000,
    opts.opaqueResourceVersions ? OPAQUE_RESOURCE_VERSIONS : NUMERIC_RESOURCE_VERSIONS,
    opts.freezeStoredObjects ?? process.env.NODE_ENV === "test",
  );
  const cluster = new Cluster(store);
  cluster.podsHaveKubelet = (opts.simulateKubelet ?? false) && (opts.gracefulPodDeletion ?? true);
  const watches = new Set<ServerResponse>();
  const faults = new Faults(
    () => {
      for (const w of [...watches]) w.end();
      watches.clear();
    },
    Math.random,
    (text) => store.rvCodec.parse(text),
  );
  const requestLog: RequestLogEntry[] = [];
  const podLogs = new PodLogs(cluster);
  let url = "";
  const handler = createHandler({
    cluster,
    faults,
    log: requestLog,
    serverAddress: () => url.replace(/^https?:\/\//, ""),
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    requestLogLimit: opts.requestLogLimit ?? Number.POSITIVE_INFINITY,
    watches,
    podLogs,
  });
  const server = createServer(handler);
  server.keepAliveTimeout = 5000;
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  url = `http://${host}:${port}`;
  const ctx = { user: "system:apiserver", dryRun: false, fieldValidation: "Ignore" as const, warnings: [] };
  const nsType = cluster.registry.find("", "v1", "namespaces")!;
  for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"])
    cluster.create(nsType, undefined, { metadata: { name } }, ctx);
  cluster.create(
    cluster.registry.find("", "v1", "services")!,
    "default",
    {
      metadata: { name: "kubernetes", labels: { component: "apiserver", provider: "kubernetes" } },
      spec: { ports: [{ name: "https", port: 443, targetPort: port }], clusterIP: "10.96.0.1" },
    },
    ctx,
  );

  const kubeconfig = (user = "admin"): string => kubeconfigYaml(url, user);
  // The stored objects themselves, without copies: for reading in place.
  const stored = (gvr: Gvr, namespace: string | undefined): readonly KubeObject[] => {
    const t = cluster.registry.find(gvr.group, gvr.version, gvr.resource);
    return t ? store.listShared(cluster.key(t), t.namespaced ? namespace : undefined) : [];
  };
  const storeReader: StoreReader = {
    subscribe: (listener) => store.subscribe(listener),
    get: (gvr, namespace, name) => {
      const t = cluster.registry.find(gvr.group, gvr.version, gvr.resource);
      if (!t) return undefined;
      try {
        return cluster.get(t, namespace, name);
      } catch {
        return undefined;
      }
    },
    list: (gvr, namespace) => {
      const t = cluster.registry.find(gvr.group, gvr.version, gvr.resource);
      return t ? cluster.list(t, namespace) : [];
    },
    count: (gvr, namespace, matches) => {
      let n = 0;
      for (const o of stored(gvr, namespace)) if (matches(o)) n++;
      return n;
    },
    map: (gvr, namespace, view) => stored(gvr, namespace).map(view),
    resourceVersion: () => store.currentRvText(),
  };

  let controllers: { stop(): Promise<void> } | undefined;
  if (opts.controllers !== false || opts.simulateKubelet) {
    const enabled = opts.controllers !== false;
    controllers = await startControllers({
      kubeconfig: kubeconfig("controller-manager"),
      simulateKubelet: opts.simulateKubelet ?? false,
      podCidr: opts.podCidr ?? "127.0.10.0/24",
      terminationDelayMs: opts.terminationDelayMs ?? 0,
      replicaSet: enabled,
      podDisruptionBudget: enabled,
      endpointSlice: enabled,
      handler,
      store: storeReader,
    });
  }

  let stopped = false;
  return {
    url,
    kubeconfig,
    writeKubeconfig: (path, user) => writeFileSync(path, kubeconfig(user)),
    requestLog,
    faults,
    store: storeReader,
    podLogs,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await controllers?.stop();
      cluster.stop();
      for (const w of [...watches]) w.end();
      watches.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export { apiVersionOf };
