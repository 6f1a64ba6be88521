import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import { request } from "node:http";
import type { KubeConfig, V1ConfigMap } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { startHealthServer } from "../runtime/health-server.js";
import { kubeClientOf, loadKubeConfig, makeApis, type KubeApis } from "./kube-config.js";
import { startInformer, waitForCacheSync, type Informer, type InformerEventType } from "./informer.js";

const CONFIGMAPS = { group: "", version: "v1", resource: "configmaps" };
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

let server: TestApiServer;
let kc: KubeConfig;
let apis: KubeApis;
const running: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig("operator") });
  apis = makeApis(kc);
});

// Faults act on every watch of the server, so no informer may outlive its test.
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
  server.faults.clear();
});

afterAll(async () => {
  await server.stop();
});

let nsCounter = 0;
async function aNamespaceWith(names: string[]): Promise<string> {
  const namespace = `informer-${++nsCounter}`;
  await apis.core.createNamespace({ body: { metadata: { name: namespace } } });
  for (const name of names)
    await apis.core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: "1" } } });
  return namespace;
}

function anInformer(namespace: string, user?: string) {
  const events: Array<[InformerEventType, string]> = [];
  const informer: Informer<V1ConfigMap> = startInformer<V1ConfigMap>({
    client: kubeClientOf(user ? loadKubeConfig({ kubeconfigYaml: server.kubeconfig(user) }) : kc),
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    onEvent: (type, obj) => events.push([type, obj.metadata!.name!]),
    logger: quiet,
  });
  running.push(informer);
  return { informer, events };
}

const serverState = (namespace: string) =>
  server.store
    .list(CONFIGMAPS, namespace)
    .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
    .sort();
const cacheState = (informer: Informer<V1ConfigMap>) =>
  informer
    .list()
    .map((o) => `${o.metadata!.name}@${o.metadata!.resourceVersion}`)
    .sort();

async function cacheMatchesServer(informer: Informer<V1ConfigMap>, namespace: string): Promise<void> {
  await waitFor(() => JSON.stringify(cacheState(informer)) === JSON.stringify(serverState(namespace)), {
    timeoutMs: 15_000,
    what: "cache to equal the server's objects",
  });
}

async function mutate(namespace: string): Promise<void> {
  await apis.core.deleteNamespacedConfigMap({ namespace, name: "a" });
  await apis.core.deleteNamespacedConfigMap({ namespace, name: "b" });
  await apis.core.patchNamespacedConfigMap({
    namespace,
    name: "c",
    body: [{ op: "replace", path: "/data/v", value: "2" }],
  });
  await apis.core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "f" } } });
}

describe("informer against the API test server", () => {
  it("syncs the cache with the server's objects and answers get and list", async () => {
    const ns = await aNamespaceWith(["a", "b", "c"]);
    const { informer, events } = anInformer(ns);
    expect(await waitForCacheSync([informer], 10_000)).toBe(true);
    expect(cacheState(informer)).toEqual(serverState(ns));
    expect(informer.get(ns, "b")?.data).toEqual({ v: "1" });
    expect(informer.get(ns, "missing")).toBeUndefined();
    expect(events.map(([t]) => t)).toEqual(["add", "add", "add"]);
  });

  it("keeps only what the transform returns, for listed and watched objects alike", async () => {
    const ns = await aNamespaceWith(["a"]);
    const seen: Array<Record<string, unknown>> = [];
    const informer = startInformer<V1ConfigMap>({
      client: kubeClientOf(kc),
      path: `/api/v1/namespaces/${ns}/configmaps`,
      transform: (cm) => ({
        metadata: {
          name: cm.metadata!.name!,
          namespace: cm.metadata!.namespace!,
          uid: cm.metadata!.uid!,
          resourceVersion: cm.metadata!.resourceVersion!,
        },
      }),
      onEvent: (_type, obj) => seen.push(obj as Record<string, unknown>),
      logger: quiet,
    });
    running.push(informer);
    expect(await waitForCacheSync([informer], 10_000)).toBe(true);
    await apis.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "b" }, data: { v: "1" } } });
    await cacheMatchesServer(informer, ns);
    expect(informer.list().map((cm) => Object.keys(cm).sort())).toEqual([["metadata"], ["metadata"]]);
    expect(informer.get(ns, "b")?.data).toBeUndefined();
    expect(
      seen.every(
        (o) => o.data === undefined && (o.metadata as { managedFields?: unknown }).managedFields === undefined,
      ),
    ).toBe(true);
  });

  it("delivers deletes that happened while the watch was down once a 410 forces a relist", async () => {
    const ns = await aNamespaceWith(["a", "b", "c", "d", "e"]);
    const { informer, events } = anInformer(ns);
    await waitForCacheSync([informer], 10_000);
    const listsBefore = server.requestLog.filter((e) => e.verb === "list" && e.namespace === ns).length;

    // Keep the watch down while the objects change, then make its resume point too old.
    server.faults.failRate({ verb: "watch", resource: "configmaps", rate: 1, code: 503 });
    const failedBefore = server.requestLog.filter((e) => e.verb === "watch" && e.code >= 500).length;
    server.faults.dropWatches();
    await waitFor(() => server.requestLog.filter((e) => e.verb === "watch" && e.code >= 500).length > failedBefore, {
      what: "a failed watch",
    });
    await mutate(ns);
    server.faults.clear();
    server.faults.expireNextWatch();

    await cacheMatchesServer(informer, ns);
    // The server logs a request when its response ends, which may be just after the client has used it.
    await waitFor(() => server.requestLog.filter((e) => e.verb === "list" && e.namespace === ns).length > listsBefore, {
      what: "a relist",
    });
    expect(events).toEqual(
      expect.arrayContaining([
        ["delete", "a"],
        ["delete", "b"],
        ["update", "c"],
        ["add", "f"],
      ]),
    );
    expect(informer.get(ns, "a")).toBeUndefined();
    expect(informer.get(ns, "c")?.data).toEqual({ v: "2" });
    expect(informer.restarts()).toBeGreaterThanOrEqual(1);
  });

  it("reports an object recreated under the same name during an outage as a delete and an add", async () => {
    const ns = await aNamespaceWith(["a", "b"]);
    const { informer, events } = anInformer(ns);
    await waitForCacheSync([informer], 10_000);
    const oldUid = informer.get(ns, "a")!.metadata!.uid;
    server.faults.failRate({ verb: "watch", resource: "configmaps", rate: 1, code: 503 });
    const failedBefore = server.requestLog.filter((e) => e.verb === "watch" && e.code >= 500).length;
    server.faults.dropWatches();
    await waitFor(() => server.requestLog.filter((e) => e.verb === "watch" && e.code >= 500).length > failedBefore, {
      what: "a failed watch",
    });
    await apis.core.deleteNamespacedConfigMap({ namespace: ns, name: "a" });
    await apis.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "a" }, data: { v: "new" } } });
    server.faults.clear();
    server.faults.expireNextWatch();
    await cacheMatchesServer(informer, ns);
    const newUid = informer.get(ns, "a")!.metadata!.uid;
    expect(newUid).not.toBe(oldUid);
    expect(events.slice(2)).toEqual([
      ["delete", "a"],
      ["add", "a"],
    ]);
  });

  it("resumes after a dropped watch and ends with exactly the server's objects", async () => {
    const ns = await aNamespaceWith(["a", "b", "c"]);
    const { informer, events } = anInformer(ns);
    await waitForCacheSync([informer], 10_000);
    server.faults.dropWatches();
    await mutate(ns);
    await cacheMatchesServer(informer, ns);
    expect(events).toEqual(
      expect.arrayContaining([
        ["delete", "a"],
        ["delete", "b"],
        ["update", "c"],
        ["add", "f"],
      ]),
    );
  });

  it("keeps retrying a failing list with backoff and syncs once the server recovers", async () => {
    const ns = await aNamespaceWith(["a"]);
    server.faults.failNext({ verb: "list", resource: "configmaps", count: 3, code: 500 });
    const { informer } = anInformer(ns);
    await waitFor(() => informer.restarts() >= 3, { what: "three restarts" });
    expect(await waitForCacheSync([informer], 10_000)).toBe(true);
    expect(cacheState(informer)).toEqual(serverState(ns));
  });

  it("keeps /readyz at 503 until the cache has synced", async () => {
    const ns = await aNamespaceWith(["a"]);
    server.faults.failRate({ verb: "list", resource: "configmaps", rate: 1, code: 503 });
    const { informer } = anInformer(ns);
    const health = await startHealthServer({
      address: { disabled: false, host: "127.0.0.1", port: 0 },
      isReady: () => informer.hasSynced(),
    });
    running.push({ stop: () => health!.close() });
    await waitFor(() => informer.restarts() >= 1, { what: "a failed list" });
    expect(await status(health!.port, "/readyz")).toBe(503);
    expect(informer.hasSynced()).toBe(false);
    server.faults.clear();
    await waitFor(async () => (await status(health!.port, "/readyz")) === 200, {
      timeoutMs: 15_000,
      what: "/readyz 200",
    });
    expect(informer.hasSynced()).toBe(true);
  });

  it("stops without restarting itself", async () => {
    const ns = await aNamespaceWith(["a"]);
    const { informer } = anInformer(ns, "stopped-replica");
    await waitForCacheSync([informer], 10_000);
    await waitFor(() => server.requestLog.some((e) => e.user === "stopped-replica" && e.verb === "watch"), {
      what: "the watch to connect",
    });
    await informer.stop();
    const stoppedAt = Date.now();
    // Requests are logged with their start time; a watch that was connecting at stop() started before it.
    const startedAfterStop = () =>
      server.requestLog.filter((e) => e.user === "stopped-replica" && Date.parse(e.time) > stoppedAt);
    await apis.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "late" } } });
    server.faults.dropWatches();
    // A second, live informer proves the change was observable while the stopped one stayed silent.
    const other = anInformer(ns, "live-replica");
    await waitFor(() => other.informer.get(ns, "late"), { what: "the live informer to see the change" });
    expect(informer.restarts()).toBe(0);
    expect(informer.get(ns, "late")).toBeUndefined();
    expect(startedAfterStop()).toEqual([]);
  });

  it("delivers nothing after stop even when stopped while its watch was still connecting", async () => {
    const ns = await aNamespaceWith(["a"]);
    const { informer, events } = anInformer(ns, "early-stop");
    await waitForCacheSync([informer], 10_000);
    await informer.stop();
    const seen = events.length;
    await apis.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "late" } } });
    const other = anInformer(ns, "live-replica");
    await waitFor(() => other.informer.get(ns, "late"), { what: "the live informer to see the change" });
    expect(events.length).toBe(seen);
    expect(informer.get(ns, "late")).toBeUndefined();
  });
});

function status(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}
