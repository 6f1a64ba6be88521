import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { PatchStrategy, type KubernetesObjectApi } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { aPod, http, objectApi, statusOf, uniqueName, type Obj } from "./test-kit.js";

let server: TestApiServer;
let api: KubernetesObjectApi;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  api = objectApi(server);
});
afterAll(async () => {
  await server.stop();
});

function aDeployment(name: string): Obj {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: "default",
      labels: { app: "web" },
      finalizers: ["a.example.com/x", "b.example.com/y"],
    },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          containers: [
            {
              name: "app",
              image: "app:1",
              env: [
                { name: "A", value: "1" },
                { name: "B", value: "2" },
              ],
              ports: [{ containerPort: 8080 }],
            },
            { name: "sidecar", image: "side:1" },
          ],
          volumes: [{ name: "data", emptyDir: {} }],
        },
      },
    },
  };
}

const patchPath = (name: string): string => `/apis/apps/v1/namespaces/default/deployments/${name}`;

async function patched(name: string, contentType: string, body: unknown): Promise<Obj> {
  const res = await http(server, "PATCH", patchPath(name), { body, contentType });
  expect(res.status).toBe(200);
  return res.body as Obj;
}

describe("merge and JSON patches", () => {
  it("merges with application/merge-patch+json: null deletes, lists replace", async () => {
    const name = uniqueName("merge");
    await api.create(aDeployment(name));
    const out = await patched(name, "application/merge-patch+json", {
      metadata: { labels: { app: null, tier: "front" } },
      spec: { template: { spec: { volumes: [] } } },
    });
    expect(out.metadata!.labels).toEqual({ tier: "front" });
    expect(out.spec.template.spec.volumes).toEqual([]);
    expect(out.spec.template.spec.containers).toHaveLength(2);
  });

  it("applies RFC 6902 operations including test", async () => {
    const name = uniqueName("json");
    await api.create(aDeployment(name));
    const out = await patched(name, "application/json-patch+json", [
      { op: "test", path: "/spec/template/spec/containers/0/image", value: "app:1" },
      { op: "replace", path: "/spec/template/spec/containers/0/image", value: "app:2" },
      { op: "add", path: "/metadata/labels/tier", value: "front" },
      { op: "remove", path: "/spec/template/spec/containers/1" },
      { op: "add", path: "/metadata/annotations", value: { "a/b": "c" } },
      { op: "copy", from: "/metadata/annotations/a~1b", path: "/metadata/labels/copied" },
    ]);
    expect(out.spec.template.spec.containers.map((c: Obj) => c.image)).toEqual(["app:2"]);
    expect(out.metadata!.labels).toEqual({ app: "web", tier: "front", copied: "c" });
  });

  it("refuses the whole JSON patch when a test fails", async () => {
    const name = uniqueName("jsontest");
    const created = (await api.create(aDeployment(name))) as Obj;
    const res = await http(server, "PATCH", patchPath(name), {
      contentType: "application/json-patch+json",
      body: [
        { op: "replace", path: "/spec/replicas", value: 5 },
        { op: "test", path: "/spec/template/spec/containers/0/image", value: "other" },
      ],
    });
    expect(res.status).toBe(422);
    const stored = (await api.read({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace: "default" },
    })) as Obj;
    expect(stored.spec.replicas).toBe(1);
    expect(stored.metadata!.resourceVersion).toBe(created.metadata!.resourceVersion);
  });

  it("honours a resourceVersion precondition inside a merge patch", async () => {
    const name = uniqueName("rv");
    await api.create(aDeployment(name));
    const res = await http(server, "PATCH", patchPath(name), {
      contentType: "application/merge-patch+json",
      body: { metadata: { resourceVersion: "1" }, spec: { replicas: 3 } },
    });
    expect(res.status).toBe(409);
    expect(res.body.reason).toBe("Conflict");
  });
});

describe("strategic merge patch", () => {
  it.each([
    [
      "merges containers by name and env by name",
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: "app",
                  env: [
                    { name: "B", value: "20" },
                    { name: "C", value: "3" },
                  ],
                },
              ],
            },
          },
        },
      },
      (o: Obj) => {
        const app = o.spec.template.spec.containers.find((c: Obj) => c.name === "app");
        expect(app.image).toBe("app:1");
        expect(app.env).toEqual([
          { name: "A", value: "1" },
          { name: "B", value: "20" },
          { name: "C", value: "3" },
        ]);
        expect(o.spec.template.spec.containers).toHaveLength(2);
      },
    ],
    [
      "deletes a list element with $patch: delete",
      { spec: { template: { spec: { containers: [{ name: "sidecar", $patch: "delete" }] } } } },
      (o: Obj) => expect(o.spec.template.spec.containers.map((c: Obj) => c.name)).toEqual(["app"]),
    ],
    [
      "replaces a list with $patch: replace",
      { spec: { template: { spec: { volumes: [{ name: "other", emptyDir: {} }, { $patch: "replace" }] } } } },
      (o: Obj) => expect(o.spec.template.spec.volumes).toEqual([{ name: "other", emptyDir: {} }]),
    ],
    [
      "reorders with $setElementOrder",
      {
        spec: {
          template: {
            spec: {
              $setElementOrder: undefined,
              "$setElementOrder/containers": [{ name: "sidecar" }, { name: "app" }],
              containers: [{ name: "app", image: "app:3" }],
            },
          },
        },
      },
      (o: Obj) =>
        expect(o.spec.template.spec.containers.map((c: Obj) => `${c.name}=${c.image}`)).toEqual([
          "sidecar=side:1",
          "app=app:3",
        ]),
    ],
    [
      "removes primitives with $deleteFromPrimitiveList and merges finalizers as a set",
      { metadata: { "$deleteFromPrimitiveList/finalizers": ["a.example.com/x"], finalizers: ["c.example.com/z"] } },
      (o: Obj) => expect(o.metadata!.finalizers).toEqual(["b.example.com/y", "c.example.com/z"]),
    ],
    [
      "keeps only listed keys with $retainKeys",
      { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } },
      (o: Obj) => expect(o.spec.strategy).toEqual({ type: "Recreate" }),
    ],
    [
      "merges container ports by containerPort",
      {
        spec: {
          template: { spec: { containers: [{ name: "app", ports: [{ containerPort: 9090, name: "metrics" }] }] } },
        },
      },
      (o: Obj) =>
        expect(o.spec.template.spec.containers[0].ports.map((p: Obj) => p.containerPort)).toEqual([8080, 9090]),
    ],
  ])("%s", async (_what, body, check) => {
    const name = uniqueName("smp");
    await api.create(aDeployment(name));
    check(await patched(name, "application/strategic-merge-patch+json", JSON.parse(JSON.stringify(body))));
  });

  it("merges pod conditions by type through /status", async () => {
    const pod = (await api.create(aPod())) as Obj;
    const path = `/api/v1/namespaces/default/pods/${pod.metadata!.name}/status`;
    const smp = "application/strategic-merge-patch+json";
    await http(server, "PATCH", path, {
      contentType: smp,
      body: {
        status: {
          phase: "Running",
          conditions: [
            { type: "Ready", status: "False" },
            { type: "Initialized", status: "True" },
          ],
        },
      },
    });
    const res = await http(server, "PATCH", path, {
      contentType: smp,
      body: { status: { conditions: [{ type: "Ready", status: "True" }] } },
    });
    expect(res.body.status.conditions).toEqual([
      { type: "Ready", status: "True" },
      { type: "Initialized", status: "True" },
    ]);
  });
});

// Simplified: the applied configuration is merged into the live object; field ownership (managedFields,
// conflicts, force, removal of fields no longer applied) is kube-apiserver's (the conformance suite there).
describe("server-side apply", () => {
  const applyPath = (name: string, manager: string): string =>
    `/api/v1/namespaces/default/configmaps/${name}?fieldManager=${manager}`;
  const apply = (name: string, manager: string, body: unknown) =>
    http(server, "PATCH", applyPath(name, manager), { body, contentType: "application/apply-patch+yaml" });

  it("creates when absent, then merges a changed field, leaving fields set by others and keeping the resourceVersion on a no-op", async () => {
    const name = uniqueName("ssa");
    const config = { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { a: "1" } }, data: { mine: "1" } };
    const created = await apply(name, "tool", config);
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ mine: "1" });
    await http(server, "PATCH", `/api/v1/namespaces/default/configmaps/${name}`, {
      contentType: "application/merge-patch+json",
      body: { data: { theirs: "2" } },
    });
    const first = await apply(name, "tool", { ...config, data: { mine: "10" } });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ mine: "10", theirs: "2" });
    expect(first.body.metadata.labels).toEqual({ a: "1" });
    const second = await apply(name, "tool", { ...config, data: { mine: "10" } });
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
  });

  it("requires a fieldManager", async () => {
    const res = await http(server, "PATCH", `/api/v1/namespaces/default/configmaps/${uniqueName("ssa")}`, {
      body: "data: {}",
      contentType: "application/apply-patch+yaml",
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
  });

  it("merges applied containers by name into a deployment", async () => {
    const name = uniqueName("ssa-deploy");
    await api.create(aDeployment(name));
    const res = await http(server, "PATCH", `${patchPath(name)}?fieldManager=tool`, {
      contentType: "application/apply-patch+yaml",
      body: `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:9\n`,
    });
    expect(res.status).toBe(200);
    expect(res.body.spec.template.spec.containers.map((c: Obj) => `${c.name}=${c.image}`)).toEqual([
      "app=app:9",
      "sidecar=side:1",
    ]);
  });

  it("applies through client-node's patch with the apply strategy", async () => {
    const name = uniqueName("ssa-client");
    const out = (await api.patch(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" }, data: { k: "v" } } as Obj,
      undefined,
      undefined,
      "client",
      true,
      PatchStrategy.ServerSideApply,
    )) as Obj;
    expect(out.data).toEqual({ k: "v" });
    const log = server.requestLog.filter((e) => e.name === name);
    expect(log.map((e) => [e.verb, e.fieldManager])).toEqual([["patch", "client"]]);
  });
});

describe("unsupported patches", () => {
  it("404s a patch of a missing object", async () => {
    const status = await statusOf(
      api.patch({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "absent", namespace: "default" },
        data: {},
      } as Obj),
    );
    expect(status.code).toBe(404);
  });

  it("refuses an unknown patch content type with 415", async () => {
    const name = uniqueName("ct");
    await api.create(aDeployment(name));
    const res = await http(server, "PATCH", patchPath(name), { body: {}, contentType: "application/x-unknown" });
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe("UnsupportedMediaType");
  });
});
