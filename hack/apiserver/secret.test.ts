import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, type V1Secret } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { asMergePatch, kubeConfigFor, uniqueName } from "./test-kit.js";

let server: TestApiServer;
let core: CoreV1Api;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  core = kubeConfigFor(server).makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await server.stop();
});

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

function aSecret(opts: { data?: Record<string, string>; stringData?: Record<string, string> } = {}): V1Secret {
  return {
    metadata: { name: uniqueName("secret") },
    ...(opts.data ? { data: opts.data } : {}),
    ...(opts.stringData ? { stringData: opts.stringData } : {}),
  };
}

const readBack = (name: string) => core.readNamespacedSecret({ namespace: "default", name });

describe("Secret stringData", () => {
  it("is merged into data as base64 on create and never stored", async () => {
    const created = await core.createNamespacedSecret({
      namespace: "default",
      body: aSecret({ stringData: { token: "s3cr3t ✓" } }),
    });
    expect(created.data).toEqual({ token: b64("s3cr3t ✓") });
    expect(created.stringData).toBeUndefined();
    const read = await readBack(created.metadata!.name!);
    expect(read.data).toEqual({ token: b64("s3cr3t ✓") });
    expect(read.stringData).toBeUndefined();
  });

  it("wins over data's value for the same key and keeps data's other keys", async () => {
    const created = await core.createNamespacedSecret({
      namespace: "default",
      body: aSecret({ data: { token: b64("old"), other: b64("kept") }, stringData: { token: "new" } }),
    });
    expect((await readBack(created.metadata!.name!)).data).toEqual({ token: b64("new"), other: b64("kept") });
  });

  it("is merged on update", async () => {
    const created = await core.createNamespacedSecret({
      namespace: "default",
      body: aSecret({ data: { token: b64("first") } }),
    });
    const name = created.metadata!.name!;
    const updated = await core.replaceNamespacedSecret({
      namespace: "default",
      name,
      body: { ...created, stringData: { token: "second" } },
    });
    expect(updated.data).toEqual({ token: b64("second") });
    const read = await readBack(name);
    expect(read.data).toEqual({ token: b64("second") });
    expect(read.stringData).toBeUndefined();
  });

  it("is merged on a merge patch", async () => {
    const created = await core.createNamespacedSecret({
      namespace: "default",
      body: aSecret({ data: { token: b64("first") } }),
    });
    const name = created.metadata!.name!;
    await core.patchNamespacedSecret(
      { namespace: "default", name, body: { stringData: { extra: "x" } } },
      asMergePatch,
    );
    const read = await readBack(name);
    expect(read.data).toEqual({ token: b64("first"), extra: b64("x") });
    expect(read.stringData).toBeUndefined();
  });
});
