import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { kubeClientOf, loadKubeConfig, makeApis, type KubeApis } from "./kube-config.js";
import { waitForCacheSync } from "./informer.js";
import { startWatchedCacheIn, type WatchedInformer } from "./watched-cache.js";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const pathOf = (ns: string | undefined) => (ns ? `/api/v1/namespaces/${ns}/configmaps` : "/api/v1/configmaps");

let server: TestApiServer;
let apis: KubeApis;
const running: Array<{ stop(): Promise<void> }> = [];

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  apis = makeApis(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("operator") }));
  for (const ns of ["shop", "payments", "elsewhere"]) {
    await apis.core.createNamespace({ body: { metadata: { name: ns } } });
    await apis.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "a" }, data: { ns } } });
  }
});

afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

afterAll(async () => {
  await server.stop();
});

function aCache(namespaces: string[], user: string): { cache: WatchedInformer<V1ConfigMap>; changes: string[] } {
  const cache = startWatchedCacheIn<V1ConfigMap>(namespaces, pathOf, {
    client: kubeClientOf(loadKubeConfig({ kubeconfigYaml: server.kubeconfig(user) })),
    logger: quiet,
  });
  running.push(cache);
  const changes: string[] = [];
  cache.onChange((cm, type) => changes.push(`${type} ${cm.metadata!.namespace}/${cm.metadata!.name}`));
  return { cache, changes };
}

// A synced cache has listed; its watch may still be on the way, so wait until `count` distinct requests are logged.
async function requestsOf(user: string, count: number): Promise<string[]> {
  const distinct = () =>
    [
      ...new Set(
        server.requestLog
          .filter((e) => e.user === user && e.resource === "configmaps")
          .map((e) => `${e.verb} ${e.namespace}`),
      ),
    ].sort();
  await waitFor(() => distinct().length >= count, { what: `${count} kinds of configmaps requests from ${user}` }).catch(
    () => {},
  );
  return distinct();
}

const names = (cms: V1ConfigMap[]) => cms.map((cm) => `${cm.metadata!.namespace}/${cm.metadata!.name}`).sort();

describe("a watched cache over a list of namespaces (API test server)", () => {
  it("lists and watches each listed namespace on its own and answers get and list from all of them", async () => {
    const { cache, changes } = aCache(["shop", "payments"], "listed");
    expect(await waitForCacheSync([cache], 10_000)).toBe(true);
    expect(names(cache.list())).toEqual(["payments/a", "shop/a"]);
    expect(names(cache.list("payments"))).toEqual(["payments/a"]);
    expect(cache.list("elsewhere")).toEqual([]);
    expect(cache.get("shop", "a")?.data).toEqual({ ns: "shop" });
    expect(cache.get("elsewhere", "a")).toBeUndefined();
    expect(cache.get(undefined, "a")).toBeUndefined();

    await apis.core.createNamespacedConfigMap({ namespace: "payments", body: { metadata: { name: "b" } } });
    await apis.core.createNamespacedConfigMap({ namespace: "elsewhere", body: { metadata: { name: "b" } } });
    await waitFor(() => cache.get("payments", "b"), { what: "payments/b in the cache" });
    expect(changes.sort()).toEqual(["add payments/a", "add payments/b", "add shop/a"]);
    expect(await requestsOf("listed", 4)).toEqual(["list payments", "list shop", "watch payments", "watch shop"]);
  });

  it("is one informer over every namespace when no namespace is listed", async () => {
    const { cache } = aCache([], "everyone");
    expect(await waitForCacheSync([cache], 10_000)).toBe(true);
    expect(names(cache.list())).toEqual(expect.arrayContaining(["elsewhere/a", "payments/a", "shop/a"]));
    expect(await requestsOf("everyone", 2)).toEqual(["list ", "watch "]);
  });
});
