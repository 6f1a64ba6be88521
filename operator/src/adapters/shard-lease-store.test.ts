import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { DNS1123_SUBDOMAIN } from "../api/dns-names.js";
import { kubeClientOf, loadKubeConfig, makeApis } from "./kube-config.js";
import { kubeShardStore, markerLeaseName, shardLeaseName, LABEL_SHARD_RING } from "./shard-lease-store.js";

const LEASES = { group: "coordination.k8s.io", version: "v1", resource: "leases" };
const NAMESPACE = "healthprobe-system";

let server: TestApiServer;
let ringCounter = 0;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  const apis = makeApis(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("admin") }));
  await apis.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
});

afterAll(async () => {
  await server.stop();
});

/** A store on a ring of its own, so the tests' Leases never meet. */
function aStore(user = "admin") {
  const ring = `ring-${++ringCounter}`;
  return {
    ring,
    store: kubeShardStore(kubeClientOf(loadKubeConfig({ kubeconfigYaml: server.kubeconfig(user) })), NAMESPACE, ring),
  };
}

describe("shard Lease names", () => {
  it.each([
    ["an identity with an underscore", "host-1_ab12cd34"],
    ["an identity in capitals", "Host.Example"],
    ["a very long identity", "x".repeat(400)],
    ["an identity of symbols only", "___"],
  ])("a shard Lease name is a valid Lease name for %s", (_name, identity) => {
    const name = shardLeaseName("healthprobe-operator", identity);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(DNS1123_SUBDOMAIN);
  });

  it("two identities that clean up alike still get different shard Lease names", () => {
    expect(shardLeaseName("r", "a_b")).not.toBe(shardLeaseName("r", "a-b"));
  });

  it("a marker name is valid for the longest namespace and differs between namespaces", () => {
    const ns = "n".repeat(63);
    expect(markerLeaseName("healthprobe-operator", ns)).toMatch(DNS1123_SUBDOMAIN);
    expect(markerLeaseName("healthprobe-operator", ns).length).toBeLessThanOrEqual(253);
    expect(markerLeaseName("r", "shop")).not.toBe(markerLeaseName("r", "payments"));
  });
});

describe("shard Leases on the API test server", () => {
  it("renew creates the replica's Lease labelled with the ring, then updates it; list reads every member", async () => {
    const { ring, store } = aStore();
    await store.renew("a_1", 1_700_000_000_000, 4_500);
    await store.renew("b_2", 1_700_000_000_100, 4_000);
    await store.renew("a_1", 1_700_000_002_000, 4_500);
    const shards = await store.listShards();
    expect(shards.sort((x, y) => x.identity.localeCompare(y.identity))).toEqual([
      { identity: "a_1", renewTime: 1_700_000_002_000, leaseDurationMs: 5_000 },
      { identity: "b_2", renewTime: 1_700_000_000_100, leaseDurationMs: 4_000 },
    ]);
    const stored = server.store.get(LEASES, NAMESPACE, shardLeaseName(ring, "a_1"))!;
    expect(stored.metadata.labels[LABEL_SHARD_RING]).toBe(ring);
  });

  it("retire deletes the replica's Lease, and retiring it again is no error", async () => {
    const { store } = aStore();
    await store.renew("a", 1_700_000_000_000, 3_000);
    await store.retire("a");
    await store.retire("a");
    expect(await store.listShards()).toEqual([]);
    await store.renew("a", 1_700_000_001_000, 3_000);
    expect(await store.listShards()).toHaveLength(1);
  });

  it("another ring's Leases are not listed", async () => {
    const one = aStore();
    const other = aStore();
    await one.store.renew("a", 1_700_000_000_000, 3_000);
    await one.store.writeMarker("shop", "a", undefined);
    expect(await other.store.listShards()).toEqual([]);
    expect(await other.store.listMarkers()).toEqual([]);
  });

  it("a marker is created once, replaced only at its current resourceVersion, and a stale write is a conflict", async () => {
    const { store } = aStore();
    const created = await store.writeMarker("shop", "a", undefined);
    if (created === "conflict") throw new Error("first create conflicted");
    expect(await store.writeMarker("shop", "b", undefined)).toBe("conflict");
    const released = await store.writeMarker("shop", "", created.resourceVersion);
    if (released === "conflict") throw new Error("release at the current version conflicted");
    expect(await store.writeMarker("shop", "b", created.resourceVersion)).toBe("conflict");
    expect(await store.listMarkers()).toEqual([
      { namespace: "shop", holder: "", resourceVersion: released.resourceVersion },
    ]);
  });

  it("a marker is deleted only at its current resourceVersion, and deleting one already gone is no error", async () => {
    const { store } = aStore();
    const created = await store.writeMarker("shop", "a", undefined);
    if (created === "conflict") throw new Error("first create conflicted");
    const rewritten = await store.writeMarker("shop", "b", created.resourceVersion);
    if (rewritten === "conflict") throw new Error("rewrite at the current version conflicted");
    expect(await store.deleteMarker("shop", created.resourceVersion)).toBe("conflict");
    expect(await store.listMarkers()).toHaveLength(1);
    expect(await store.deleteMarker("shop", rewritten.resourceVersion)).toBe("deleted");
    expect(await store.listMarkers()).toEqual([]);
    expect(await store.deleteMarker("shop", rewritten.resourceVersion)).toBe("deleted");
  });

  it("a renewal after the Lease was replaced by someone else fails once, then succeeds at the version it read", async () => {
    const { ring, store } = aStore();
    await store.renew("a", 1_700_000_000_000, 3_000);
    const stored = server.store.get(LEASES, NAMESPACE, shardLeaseName(ring, "a"))!;
    const admin = kubeClientOf(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("admin") }));
    await admin.put(`/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${stored.metadata.name}`, {
      ...stored,
      metadata: { ...stored.metadata, annotations: { touched: "yes" } },
    });
    await expect(store.renew("a", 1_700_000_001_000, 3_000)).rejects.toThrow(/renewing shard Lease/);
    await store.renew("a", 1_700_000_002_000, 3_000);
    expect((await store.listShards())[0]?.renewTime).toBe(1_700_000_002_000);
  });
});
