import { describe, it, expect, beforeAll, afterAll, afterEach } from "@jest/globals";
import type { V1ConfigMap } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { waitFor } from "../../../test/support/wait-for.js";
import { kubeClientOf, loadKubeConfig, makeApis, type KubeApis } from "./kube-config.js";
import { followerOf, isFollowing, startFollowingCache, type FollowingCache } from "./following-cache.js";
import { startWatchedCache } from "./watched-cache.js";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const pathOf = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

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

function aCache(user: string): { cache: FollowingCache<V1ConfigMap>; changes: string[] } {
  const cache = startFollowingCache<V1ConfigMap>(pathOf, {
    client: kubeClientOf(loadKubeConfig({ kubeconfigYaml: server.kubeconfig(user) })),
    logger: quiet,
  });
  running.push(cache);
  const changes: string[] = [];
  cache.onChange((cm, type) => changes.push(`${type} ${cm.metadata!.namespace}/${cm.metadata!.name}`));
  return { cache, changes };
}

const names = (cms: V1ConfigMap[]) => cms.map((cm) => `${cm.metadata!.namespace}/${cm.metadata!.name}`).sort();
const requestsOf = (user: string) =>
  [
    ...new Set(
      server.requestLog
        .filter((e) => e.user === user && e.resource === "configmaps")
        .map((e) => `${e.verb} ${e.namespace}`),
    ),
  ].sort();

describe("a cache that follows namespaces (API test server)", () => {
  it("holds nothing until told to follow a namespace, then lists and watches that namespace only", async () => {
    const { cache, changes } = aCache("follower");
    expect(cache.list()).toEqual([]);
    expect(cache.syncedIn("shop")).toBe(false);
    cache.follow("shop");
    await waitFor(() => cache.syncedIn("shop"), { what: "shop synced" });
    expect(names(cache.list())).toEqual(["shop/a"]);
    expect(cache.get("shop", "a")?.data).toEqual({ ns: "shop" });
    expect(cache.get("payments", "a")).toBeUndefined();
    expect(cache.get(undefined, "a")).toBeUndefined();
    expect(changes).toEqual(["add shop/a"]);

    await apis.core.createNamespacedConfigMap({ namespace: "shop", body: { metadata: { name: "b" } } });
    await apis.core.createNamespacedConfigMap({ namespace: "payments", body: { metadata: { name: "b" } } });
    await waitFor(() => cache.get("shop", "b"), { what: "shop/b in the cache" });
    expect(changes).toEqual(["add shop/a", "add shop/b"]);
    await waitFor(() => requestsOf("follower").length >= 2, { what: "the watch of shop" });
    expect(requestsOf("follower")).toEqual(["list shop", "watch shop"]);
  });

  it("a namespace dropped is forgotten without any change handler seeing its objects go, the forget handlers told once, and its later changes reach no one", async () => {
    const { cache, changes } = aCache("dropper");
    const forgotten: string[] = [];
    cache.onForget((ns) => forgotten.push(ns));
    cache.follow("shop");
    cache.follow("payments");
    await waitFor(() => cache.syncedIn("shop") && cache.syncedIn("payments"), { what: "both synced" });
    changes.length = 0;

    await cache.drop("payments");
    await cache.drop("payments");
    expect(forgotten).toEqual(["payments"]);
    expect(cache.followed()).toEqual(["shop"]);
    expect(cache.syncedIn("payments")).toBe(false);
    expect(cache.list("payments")).toEqual([]);
    expect(names(cache.list())).toEqual(names(cache.list("shop")));
    expect(changes).toEqual([]);

    await apis.core.createNamespacedConfigMap({ namespace: "payments", body: { metadata: { name: "late" } } });
    await apis.core.createNamespacedConfigMap({ namespace: "shop", body: { metadata: { name: "late" } } });
    await waitFor(() => cache.get("shop", "late"), { what: "shop/late in the cache" });
    expect(changes).toEqual(["add shop/late"]);
    expect(cache.get("payments", "late")).toBeUndefined();
  });

  it("a namespace followed again is listed afresh, its objects reported as added", async () => {
    const { cache, changes } = aCache("returner");
    cache.follow("elsewhere");
    await waitFor(() => cache.syncedIn("elsewhere"), { what: "elsewhere synced" });
    await cache.drop("elsewhere");
    changes.length = 0;
    cache.follow("elsewhere");
    await waitFor(() => cache.syncedIn("elsewhere"), { what: "elsewhere synced" });
    expect(changes).toEqual(["add elsewhere/a"]);
  });
});

describe("the follower over every following cache", () => {
  it("follows exactly the namespaces given and says when a namespace is complete in every cache", async () => {
    const one = aCache("set-one").cache;
    const two = aCache("set-two").cache;
    const follower = followerOf([one, two]);
    await follower.follow(new Set(["shop", "payments"]));
    await waitFor(() => follower.synced("shop") && follower.synced("payments"), { what: "both namespaces synced" });

    await follower.follow(new Set(["shop"]));
    expect(follower.followed()).toEqual(["shop"]);
    expect(two.followed()).toEqual(["shop"]);
    expect(follower.synced("payments")).toBe(false);
  });

  it("tells a following cache from a cluster-wide one", () => {
    const wide = startWatchedCache<V1ConfigMap>({
      client: kubeClientOf(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("wide") })),
      path: "/api/v1/configmaps",
      logger: quiet,
    });
    running.push(wide);
    expect(isFollowing(wide)).toBe(false);
    expect(isFollowing(aCache("kind").cache)).toBe(true);
  });
});
