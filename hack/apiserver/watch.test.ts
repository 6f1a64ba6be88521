import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, Watch, makeInformer, type KubeConfig, type V1ConfigMap } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { aConfigMap, asMergePatch, kubeConfigFor, uniqueName } from "./test-kit.js";
import { waitFor } from "../../test/support/wait-for.js";

interface Seen {
  type: string;
  name?: string;
  rv?: string;
  object: any;
}

/** Opens a watch and records its events and its end. */
async function watchEvents(kc: KubeConfig, path: string, params: Record<string, string | number | boolean>) {
  const events: Seen[] = [];
  let ended: { err: unknown } | undefined;
  const controller = await new Watch(kc).watch(
    path,
    params,
    (type, object) =>
      events.push({ type, name: object?.metadata?.name, rv: object?.metadata?.resourceVersion, object }),
    (err) => {
      ended = { err };
    },
  );
  return { events, ended: () => ended, abort: () => controller.abort() };
}

async function aNamespace(core: CoreV1Api): Promise<string> {
  const name = uniqueName("w");
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

describe("watch", () => {
  let server: TestApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  beforeAll(async () => {
    server = await startApiServer({ controllers: false, watchHistory: 50, bookmarkIntervalMs: 50 });
    kc = kubeConfigFor(server);
    core = kc.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await server.stop();
  });

  it("sends the events after the given resourceVersion, in order", async () => {
    const ns = await aNamespace(core);
    const a = await core.createNamespacedConfigMap({
      namespace: ns,
      body: aConfigMap({ name: "a", namespace: ns }) as any,
    });
    await core.createNamespacedConfigMap({ namespace: ns, body: aConfigMap({ name: "b", namespace: ns }) as any });
    const w = await watchEvents(kc, `/api/v1/namespaces/${ns}/configmaps`, {
      resourceVersion: a.metadata!.resourceVersion!,
    });
    await core.patchNamespacedConfigMap({ namespace: ns, name: "a", body: { data: { key: "changed" } } }, asMergePatch);
    await core.deleteNamespacedConfigMap({ namespace: ns, name: "b" });
    await waitFor(() => w.events.length >= 3, { what: "three events" });
    w.abort();
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(["ADDED b", "MODIFIED a", "DELETED b"]);
    const rvs = w.events.map((e) => Number(e.rv));
    expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
  });

  it.each(["", "0"])("with resourceVersion %j starts with synthetic ADDED events for the current state", async (rv) => {
    const ns = await aNamespace(core);
    for (const name of ["x", "y"])
      await core.createNamespacedConfigMap({ namespace: ns, body: aConfigMap({ name, namespace: ns }) as any });
    const w = await watchEvents(kc, `/api/v1/namespaces/${ns}/configmaps`, rv === "" ? {} : { resourceVersion: rv });
    await waitFor(() => w.events.length >= 2, { what: "initial events" });
    w.abort();
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(["ADDED x", "ADDED y"]);
  });

  it("sends BOOKMARK events with the current resourceVersion when asked", async () => {
    const w = await watchEvents(kc, "/api/v1/namespaces/default/configmaps", {
      resourceVersion: server.store.resourceVersion(),
      allowWatchBookmarks: true,
    });
    await core.createNamespacedConfigMap({
      namespace: "kube-public",
      body: aConfigMap({ namespace: "kube-public" }) as any,
    });
    const bookmark = await waitFor(
      () => w.events.find((e) => e.type === "BOOKMARK" && Number(e.rv) >= Number(server.store.resourceVersion())),
      { what: "bookmark" },
    );
    w.abort();
    expect(bookmark.object.kind).toBe("ConfigMap");
  });

  it("answers a resourceVersion older than the kept history with an ERROR event carrying 410 Expired", async () => {
    const start = server.store.resourceVersion();
    for (let i = 0; i < 60; i++)
      await core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    const w = await watchEvents(kc, "/api/v1/namespaces/default/configmaps", { resourceVersion: start });
    await waitFor(() => w.ended(), { what: "watch end" });
    expect(w.events).toHaveLength(1);
    expect(w.events[0]!.type).toBe("ERROR");
    expect(w.events[0]!.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    expect(w.events[0]!.object.message).toMatch(new RegExp(`^too old resource version: ${start} \\(\\d+\\)$`));
  });

  it("expires the next watch on demand", async () => {
    server.faults.expireNextWatch();
    const w = await watchEvents(kc, "/api/v1/namespaces/default/configmaps", {
      resourceVersion: server.store.resourceVersion(),
    });
    await waitFor(() => w.ended(), { what: "watch end" });
    expect(w.events.map((e) => [e.type, e.object.code])).toEqual([["ERROR", 410]]);
  });

  it("ends every watch stream when watches are dropped", async () => {
    const w1 = await watchEvents(kc, "/api/v1/namespaces/default/configmaps", {
      resourceVersion: server.store.resourceVersion(),
    });
    const w2 = await watchEvents(kc, "/api/v1/pods", { resourceVersion: server.store.resourceVersion() });
    await waitFor(() => server.requestLog.filter((e) => e.verb === "watch").length >= 2, {
      what: "watches registered",
    });
    server.faults.dropWatches();
    await waitFor(() => w1.ended() && w2.ended(), { what: "both watches ended" });
  });

  it("ends the stream after timeoutSeconds", async () => {
    const w = await watchEvents(kc, "/api/v1/namespaces/default/configmaps", {
      resourceVersion: server.store.resourceVersion(),
      timeoutSeconds: 1,
    });
    await waitFor(() => w.ended(), { what: "timeout end", timeoutMs: 5000 });
  });

  it("applies label and field selectors, sending DELETED when an object stops matching and ADDED when it starts", async () => {
    const ns = await aNamespace(core);
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: aConfigMap({ name: "sel", namespace: ns, labels: { color: "red" } }) as any,
    });
    const w = await watchEvents(kc, `/api/v1/namespaces/${ns}/configmaps`, {
      labelSelector: "color=red",
      fieldSelector: "metadata.name=sel",
    });
    await waitFor(() => w.events.length >= 1, { what: "initial" });
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: "sel", body: { metadata: { labels: { color: "blue" } } } },
      asMergePatch,
    );
    await core.patchNamespacedConfigMap({ namespace: ns, name: "sel", body: { data: { other: "1" } } }, asMergePatch);
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: "sel", body: { metadata: { labels: { color: "red" } } } },
      asMergePatch,
    );
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: aConfigMap({ name: "other", namespace: ns, labels: { color: "red" } }) as any,
    });
    await core.patchNamespacedConfigMap({ namespace: ns, name: "sel", body: { data: { more: "2" } } }, asMergePatch);
    await waitFor(() => w.events.length >= 4, { what: "selector events" });
    w.abort();
    expect(w.events.map((e) => `${e.type} ${e.name} ${e.object.metadata?.labels?.color}`)).toEqual([
      "ADDED sel red",
      "DELETED sel blue",
      "ADDED sel red",
      "MODIFIED sel red",
    ]);
  });
});

describe("an informer against the server", () => {
  let server: TestApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  beforeAll(async () => {
    server = await startApiServer({ controllers: false, watchHistory: 20 });
    kc = kubeConfigFor(server, "informer");
    core = kc.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await server.stop();
  });

  it("survives a forced 410 and a dropped watch, ending with exactly the server's objects", async () => {
    const ns = await aNamespace(core);
    for (let i = 0; i < 5; i++)
      await core.createNamespacedConfigMap({
        namespace: ns,
        body: aConfigMap({ name: `cm-${i}`, namespace: ns }) as any,
      });
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const deleted = new Set<string>();
    let stopped = false;
    informer.on("delete", (o) => deleted.add(o.metadata!.name!));
    informer.on("error", () => {
      // client-node does not restart on errors by itself: the caller does (not after stop()).
      if (!stopped) void informer.start();
    });
    await informer.start();
    const serverState = () =>
      server.store
        .list({ group: "", version: "v1", resource: "configmaps" }, ns)
        .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
        .sort();
    const cacheState = () =>
      informer
        .list(ns)
        .map((o) => `${o.metadata!.name}@${o.metadata!.resourceVersion}`)
        .sort();
    await waitFor(() => cacheState().length === 5, { what: "initial list" });

    // A dropped watch: the informer re-watches from its last resourceVersion and must see what happened meanwhile.
    server.faults.dropWatches();
    await core.deleteNamespacedConfigMap({ namespace: ns, name: "cm-0" });
    await core.patchNamespacedConfigMap(
      { namespace: ns, name: "cm-1", body: { data: { key: "after-drop" } } },
      asMergePatch,
    );
    await waitFor(() => JSON.stringify(cacheState()) === JSON.stringify(serverState()), {
      what: "cache converged after drop",
    });
    expect(deleted.has("cm-0")).toBe(true);

    // A forced 410: the informer must re-list, and deletions that happened while it was away still reach it.
    server.faults.expireNextWatch();
    server.faults.dropWatches();
    await core.deleteNamespacedConfigMap({ namespace: ns, name: "cm-2" });
    await core.createNamespacedConfigMap({ namespace: ns, body: aConfigMap({ name: "cm-new", namespace: ns }) as any });
    for (let i = 0; i < 30; i++)
      await core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    await waitFor(() => JSON.stringify(cacheState()) === JSON.stringify(serverState()), {
      what: "cache converged after 410",
      timeoutMs: 15_000,
    });
    expect(deleted.has("cm-2")).toBe(true);
    expect(informer.get("cm-new", ns)).toBeDefined();
    const relists = server.requestLog.filter((e) => e.user === "informer" && e.verb === "list" && e.namespace === ns);
    expect(relists.length).toBeGreaterThanOrEqual(2);
    stopped = true;
    await informer.stop();
  });
});

describe("watch bookmarks as kube-apiserver's watch cache sends them", () => {
  let server: TestApiServer;
  let kc: KubeConfig;
  beforeAll(async () => {
    server = await startApiServer({ controllers: false });
    kc = kubeConfigFor(server);
  });
  afterAll(async () => {
    await server.stop();
  });

  it.each([
    {
      name: "a watch that allows bookmarks gets one right before its deadline, at the current resourceVersion, and no other within a minute",
      bookmarks: true,
      want: ["BOOKMARK"],
    },
    { name: "a watch that does not allow them ends at its deadline without one", bookmarks: false, want: [] },
  ])("$name", async ({ bookmarks, want }) => {
    const rv = server.store.resourceVersion();
    const w = await watchEvents(kc, "/api/v1/namespaces/default/configmaps", {
      resourceVersion: rv,
      timeoutSeconds: 1,
      ...(bookmarks ? { allowWatchBookmarks: true } : {}),
    });
    await waitFor(() => w.ended(), { what: "the watch to end at its deadline" });
    expect(w.events.map((e) => e.type)).toEqual(want);
    if (bookmarks) expect(w.events[0]!.rv).toBe(server.store.resourceVersion());
  });
});
