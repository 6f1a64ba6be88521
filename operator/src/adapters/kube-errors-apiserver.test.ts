import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startApiServer, type TestApiServer } from "../../../hack/apiserver/index.js";
import { kubeClientOf, loadKubeConfig, makeApis, type KubeApis } from "./kube-config.js";
import { listRaw } from "./informer.js";
import {
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isTooManyRequests,
  reasonOf,
  retryAfterSecondsOf,
  statusCodeOf,
} from "./kube-errors.js";

let server: TestApiServer;
let apis: KubeApis;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  apis = makeApis(loadKubeConfig({ kubeconfigYaml: server.kubeconfig("operator") }));
});

afterAll(async () => {
  await server.stop();
});

async function errorOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}

describe("kube errors from real API responses", () => {
  it("recognises NotFound", async () => {
    const err = await errorOf(apis.core.readNamespacedConfigMap({ namespace: "default", name: "missing" }));
    expect(statusCodeOf(err)).toBe(404);
    expect(isNotFound(err)).toBe(true);
    expect(reasonOf(err)).toBe("NotFound");
  });

  it("tells AlreadyExists from a stale-resourceVersion Conflict", async () => {
    const created = await apis.core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "twice" } },
    });
    const exists = await errorOf(
      apis.core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "twice" } } }),
    );
    expect([isAlreadyExists(exists), isConflict(exists)]).toEqual([true, false]);

    await apis.core.replaceNamespacedConfigMap({
      namespace: "default",
      name: "twice",
      body: { ...created, data: { v: "1" } },
    });
    const stale = await errorOf(
      apis.core.replaceNamespacedConfigMap({
        namespace: "default",
        name: "twice",
        body: { ...created, data: { v: "2" } },
      }),
    );
    expect([isConflict(stale), isAlreadyExists(stale)]).toEqual([true, false]);
  });

  it("recognises throttling and reads its retry hint", async () => {
    server.faults.failNext({ verb: "get", resource: "configmaps", count: 1, code: 429 });
    const err = await errorOf(apis.core.readNamespacedConfigMap({ namespace: "default", name: "twice" }));
    expect(isTooManyRequests(err)).toBe(true);
    expect(retryAfterSecondsOf(err)).toBe(1);
  });

  it("recognises Gone from an expired list continuation", async () => {
    const kc = loadKubeConfig({ kubeconfigYaml: server.kubeconfig("operator") });
    for (let i = 0; i < 3; i++)
      await apis.core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: `page-${i}` } } });
    server.faults.expireWatchesBefore(Number(server.store.resourceVersion()) + 1);
    try {
      const err = await errorOf(listRaw(kubeClientOf(kc), "/api/v1/namespaces/default/configmaps", { pageSize: 1 }));
      expect(isGone(err)).toBe(true);
      expect(reasonOf(err)).toBe("Expired");
    } finally {
      server.faults.clear();
    }
  });

  it("follows the cause chain of an error rethrown with context", async () => {
    const inner = await errorOf(apis.core.readNamespacedConfigMap({ namespace: "default", name: "missing" }));
    const wrapped = new Error("reading ConfigMap default/missing", { cause: inner });
    expect(isNotFound(wrapped)).toBe(true);
  });
});
