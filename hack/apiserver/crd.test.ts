import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { ApiextensionsV1Api, CustomObjectsApi, type KubernetesObjectApi } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import { http, kubeConfigFor, objectApi, statusOf, uniqueName, type Obj } from "./test-kit.js";
import { aWidget, widgetCrd } from "./crd-fixture.js";

let server: TestApiServer;
let api: KubernetesObjectApi;
let custom: CustomObjectsApi;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  api = objectApi(server);
  custom = kubeConfigFor(server).makeApiClient(CustomObjectsApi);
  // Raw JSON: client-node's typed serializer would drop "enum" and "x-kubernetes-*" keys written this way.
  const res = await http(server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    body: widgetCrd,
  });
  expect(res.status).toBe(201);
});
afterAll(async () => {
  await server.stop();
});

const widgets = "/apis/example.com/v1/namespaces/default/widgets";
describe("a created CRD", () => {
  it("is established and served in discovery at once, with names, scope, verbs and the status subresource", async () => {
    const crd = await kubeConfigFor(server)
      .makeApiClient(ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: "widgets.example.com" });
    expect(crd.status!.conditions!.find((c) => c.type === "Established")!.status).toBe("True");
    const list = await http(server, "GET", "/apis/example.com/v1");
    expect(list.body.resources).toEqual([
      expect.objectContaining({
        name: "widgets",
        singularName: "widget",
        namespaced: true,
        kind: "Widget",
        shortNames: ["wd"],
        categories: ["gadgets"],
      }),
      expect.objectContaining({ name: "widgets/status", kind: "Widget", verbs: ["get", "patch", "update"] }),
    ]);
    const groups = await http(server, "GET", "/apis");
    expect(groups.body.groups.map((g: Obj) => g.name)).toContain("example.com");
  });

  it("applies schema defaults on create, and on read for objects stored before a default existed", async () => {
    const w = (await api.create(aWidget(uniqueName("w"), { size: 2, probe: { port: 80 } }))) as Obj;
    expect(w.spec).toEqual({
      size: 2,
      color: "red",
      minReplicas: 1,
      maxReplicas: 3,
      probe: { port: 80, timeoutSeconds: 5 },
    });
    expect(w.metadata!.generation).toBe(1);
  });

  it("prunes unknown fields, keeps those under x-kubernetes-preserve-unknown-fields, and warns by default", async () => {
    const res = await http(server, "POST", widgets, {
      body: aWidget(uniqueName("w"), { size: 2, bogus: 1, extra: { anything: { goes: true } } }),
    });
    expect(res.status).toBe(201);
    expect(res.body.spec.bogus).toBeUndefined();
    expect(res.body.spec.extra).toEqual({ anything: { goes: true } });
    expect(res.headers.get("warning")).toContain('unknown field \\"spec.bogus\\"');
  });

  it("refuses unknown fields with fieldValidation=Strict", async () => {
    const res = await http(server, "POST", `${widgets}?fieldValidation=Strict`, {
      body: aWidget("strict", { size: 2, foo: 1 }),
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('strict decoding error: unknown field "spec.foo"');
  });

  it.each([
    [
      { size: 61 },
      "spec.size",
      "FieldValueInvalid",
      "Invalid value: 61: spec.size in body should be less than or equal to 60",
    ],
    [
      { size: 0 },
      "spec.size",
      "FieldValueInvalid",
      "Invalid value: 0: spec.size in body should be greater than or equal to 1",
    ],
    [
      { size: "big" },
      "spec.size",
      "FieldValueTypeInvalid",
      'Invalid value: "string": spec.size in body must be of type integer: "string"',
    ],
    [{}, "spec.size", "FieldValueRequired", "Required value"],
    [
      { size: 1, color: "pink" },
      "spec.color",
      "FieldValueNotSupported",
      'Unsupported value: "pink": supported values: "red", "green", "blue"',
    ],
    [{ size: 1, name: "toolongname" }, "spec.name", "FieldValueTooLong", "Too long: may not be more than 8 bytes"],
    [
      { size: 1, name: "UPPER" },
      "spec.name",
      "FieldValueInvalid",
      "Invalid value: \"UPPER\": spec.name in body should match '^[a-z]+$'",
    ],
    [{ size: 1, tags: ["a", "b", "c"] }, "spec.tags", "FieldValueTooMany", "Too many: 3: must have at most 2 items"],
  ])("refuses %j naming %s", async (spec, field, reason, message) => {
    const name = uniqueName("bad");
    const status = await statusOf(api.create(aWidget(name, spec)));
    expect(status.code).toBe(422);
    expect(status.reason).toBe("Invalid");
    // CEL rules are not run here (kube-apiserver is the reference), nor is the real server's note
    // after a blocking schema error that it skipped them.
    expect(status.details.causes).toEqual([{ reason, field, message }]);
    expect(status.message).toBe(`Widget.example.com "${name}" is invalid: ${field}: ${message}`);
    expect(status.details).toMatchObject({ name, group: "example.com", kind: "Widget" });
  });

  it("lists several violations in brackets, like the real server", async () => {
    const status = await statusOf(api.create(aWidget("multi", { size: 99, color: "pink" })));
    expect(status.message).toBe(
      `Widget.example.com "multi" is invalid: [spec.color: Unsupported value: "pink": supported values: "red", "green", "blue", spec.size: Invalid value: 99: spec.size in body should be less than or equal to 60]`,
    );
  });

  it("requires a resourceVersion on update of a custom resource", async () => {
    const name = uniqueName("rv");
    const w = (await api.create(aWidget(name))) as Obj;
    const res = await http(server, "PUT", `${widgets}/${name}`, {
      body: { ...w, metadata: { name, namespace: "default" } },
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(
      `Widget.example.com "${name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`,
    );
  });

  it("splits spec and status: generation moves with spec only, /status writes only status", async () => {
    const name = uniqueName("split");
    const w = (await api.create({ ...aWidget(name), status: { observedGeneration: 7 } } as Obj)) as Obj;
    expect(w.status).toBeUndefined();
    const st = (await custom.replaceNamespacedCustomObjectStatus({
      group: "example.com",
      version: "v1",
      namespace: "default",
      plural: "widgets",
      name,
      body: {
        ...w,
        spec: { size: 50 },
        status: { observedGeneration: 1, conditions: [{ type: "Ready", status: "True" }] },
      },
    })) as Obj;
    expect(st.spec.size).toBe(3);
    expect(st.status.observedGeneration).toBe(1);
    expect(st.metadata!.generation).toBe(1);
    const labelled = (await api.replace({ ...st, metadata: { ...st.metadata, labels: { a: "b" } } } as Obj)) as Obj;
    expect(labelled.metadata!.generation).toBe(1);
    const resized = (await api.replace({
      ...labelled,
      spec: { ...labelled.spec, size: 4 },
      status: { observedGeneration: 99 },
    } as Obj)) as Obj;
    expect(resized.metadata!.generation).toBe(2);
    expect(resized.status.observedGeneration).toBe(1);
  });

  it("refuses strategic merge patches of custom resources with 415", async () => {
    const name = uniqueName("smp");
    await api.create(aWidget(name));
    const res = await http(server, "PATCH", `${widgets}/${name}`, {
      body: { spec: { size: 4 } },
      contentType: "application/strategic-merge-patch+json",
    });
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe("UnsupportedMediaType");
  });

  it("serves a Table with the CRD's printer columns", async () => {
    const name = uniqueName("tbl");
    const w = (await api.create(aWidget(name, { size: 7, color: "blue" }))) as Obj;
    await custom.replaceNamespacedCustomObjectStatus({
      group: "example.com",
      version: "v1",
      namespace: "default",
      plural: "widgets",
      name,
      body: { ...w, status: { conditions: [{ type: "Ready", status: "True" }] } },
    });
    const res = await http(server, "GET", `${widgets}?fieldSelector=metadata.name=${name}`, {
      accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    });
    expect(res.body.kind).toBe("Table");
    expect(res.body.columnDefinitions.map((c: Obj) => c.name)).toEqual(["Name", "Size", "Color", "Ready", "Age"]);
    expect(res.body.rows[0].cells.slice(0, 4)).toEqual([name, 7, "blue", "True"]);
    expect(res.body.rows[0].cells[4]).toMatch(/^\d+s$/);
  });

  it("serves the CRD's schema in OpenAPI v3 with its group-version-kind and a fieldValidation parameter on PATCH", async () => {
    const index = await http(server, "GET", "/openapi/v3");
    const url = index.body.paths["apis/example.com/v1"].serverRelativeURL as string;
    const doc = await http(server, "GET", url);
    const schema = doc.body.components.schemas["com.example.v1.Widget"];
    expect(schema["x-kubernetes-group-version-kind"]).toEqual([
      { group: "example.com", version: "v1", kind: "Widget" },
    ]);
    expect(schema.properties.spec.properties.probe.description).toBe("How to probe the widget.");
    const patch = doc.body.paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"].patch;
    expect(patch.parameters.map((p: Obj) => p.name)).toContain("fieldValidation");
  });

  it("stops serving and deletes instances when the CRD is deleted", async () => {
    const crd = {
      ...widgetCrd,
      metadata: { name: "gizmos.example.com" },
      spec: { ...widgetCrd.spec, names: { plural: "gizmos", kind: "Gizmo" } },
    };
    await http(server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd });
    await api.create({
      apiVersion: "example.com/v1",
      kind: "Gizmo",
      metadata: { name: "g", namespace: "default" },
      spec: { size: 1 },
    } as Obj);
    await api.delete(crd as Obj);
    const res = await http(server, "GET", "/apis/example.com/v1/namespaces/default/gizmos");
    expect(res.status).toBe(404);
    expect(server.store.list({ group: "example.com", version: "v1", resource: "gizmos" })).toEqual([]);
  });
});
