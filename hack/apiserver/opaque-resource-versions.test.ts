// The opaque resourceVersion mode: what a client sees is neither numeric nor ordered as a string,
// and the server still behaves as etcd does (optimistic concurrency, watch from a version, 410).
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { NUMERIC_RESOURCE_VERSIONS, OPAQUE_RESOURCE_VERSIONS } from "./store.js";
import { aConfigMap, kubeConfigFor, uniqueName } from "./test-kit.js";

describe("opaque resourceVersions", () => {
  it.each([
    { rv: 9, text: "rv-9" },
    { rv: 35, text: "rv-z" },
    { rv: 36, text: "rv-01" },
    { rv: 1000, text: "rv-sr" },
  ])("encode $rv as $text and read it back", ({ rv, text }) => {
    expect(OPAQUE_RESOURCE_VERSIONS.format(rv)).toBe(text);
    expect(OPAQUE_RESOURCE_VERSIONS.parse(text)).toBe(rv);
  });

  it("are not ordered as strings, so a client that compares them gets the order wrong", () => {
    const [older, newer] = [OPAQUE_RESOURCE_VERSIONS.format(35), OPAQUE_RESOURCE_VERSIONS.format(36)];
    expect(older > newer).toBe(true);
    expect(Number.isNaN(Number(older.slice(3)) + Number(newer))).toBe(true);
  });

  it.each(["", "12", "rv-", "rv-A", "x-1"])("refuse %j as a version this server issued", (text) => {
    expect(OPAQUE_RESOURCE_VERSIONS.parse(text)).toBeUndefined();
  });

  it("leave the numeric form alone by default", () => {
    expect(NUMERIC_RESOURCE_VERSIONS.format(36)).toBe("36");
    expect(NUMERIC_RESOURCE_VERSIONS.parse("rv-01")).toBeUndefined();
  });

  describe("on the server", () => {
    let server: TestApiServer;
    let kc: KubeConfig;
    let core: CoreV1Api;
    beforeAll(async () => {
      server = await startApiServer({ controllers: false, opaqueResourceVersions: true });
      kc = kubeConfigFor(server);
      core = kc.makeApiClient(CoreV1Api);
    });
    afterAll(async () => {
      await server.stop();
    });

    it("issue opaque versions on objects and lists, and refuse a write over a stale one with 409", async () => {
      const namespace = uniqueName("o");
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const created = await core.createNamespacedConfigMap({
        namespace,
        body: aConfigMap({ name: "c", namespace, data: { a: "1" } }),
      });
      expect(created.metadata?.resourceVersion).toMatch(/^rv-[0-9a-z]+$/);
      const list = await core.listNamespacedConfigMap({ namespace });
      expect(list.metadata?.resourceVersion).toMatch(/^rv-[0-9a-z]+$/);
      const updated = await core.replaceNamespacedConfigMap({
        name: "c",
        namespace,
        body: { ...created, data: { a: "2" } },
      });
      expect(updated.metadata?.resourceVersion).not.toBe(created.metadata?.resourceVersion);
      await expect(
        core.replaceNamespacedConfigMap({ name: "c", namespace, body: { ...created, data: { a: "3" } } }),
      ).rejects.toMatchObject({ code: 409 });
    });

    it("refuse a watch from a version the server never issued", async () => {
      const res = await fetch(`${server.url}/api/v1/configmaps?watch=true&resourceVersion=12`, {
        headers: { authorization: "Bearer admin" },
      });
      expect(await res.text()).toMatch(/invalid resource version: 12/);
    });
  });
});
