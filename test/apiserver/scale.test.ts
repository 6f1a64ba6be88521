import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, Watch, type V1ReplicaSet } from "@kubernetes/client-node";
import { startApiServer, requestsBy, type TestApiServer } from "./index.js";
import { Kubectl, asMergePatch, http, kubeConfigFor, statusOf, uniqueName, type Obj } from "./test-kit.js";
import { waitFor } from "../support/wait-for.js";

let server: TestApiServer;
let kubectl: Kubectl;
let apps: AppsV1Api;
let core: CoreV1Api;

beforeAll(async () => {
  // The ReplicaSet controller and the kubelet stand-in run, so a scale turns into pods.
  server = await startApiServer({ simulateKubelet: true });
  kubectl = new Kubectl(server);
  const kc = kubeConfigFor(server, "scaler");
  apps = kc.makeApiClient(AppsV1Api);
  core = kc.makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await server.stop();
  kubectl.cleanup();
});

const RS = { group: "apps", version: "v1", resource: "replicasets" };
const storedRs = (ns: string, name = "web") => server.store.get(RS, ns, name)!;

/** The first event of a watch; the watch is closed then. */
async function firstEvent(res: Response): Promise<{ type: string; object: Obj }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the watch ended before its first event");
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return JSON.parse(text.slice(0, text.indexOf("\n"))) as { type: string; object: Obj };
}

async function freshNamespace(): Promise<string> {
  const name = uniqueName("scale");
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

function aReplicaSet(replicas: number, selector: Obj["spec"] = { matchLabels: { app: "web" } }): V1ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web" },
    spec: {
      replicas,
      selector,
      template: {
        metadata: { labels: { app: "web", tier: "a" } },
        spec: { containers: [{ name: "app", image: "nginx:1.27" }] },
      },
    },
  };
}

/** Pods of the ReplicaSet that run and are not terminating. */
const runningPods = (ns: string): Obj[] =>
  server.store
    .list({ group: "", version: "v1", resource: "pods" }, ns)
    .filter((p) => !p.metadata.deletionTimestamp && p.status?.phase === "Running");

async function runningReplicaSet(replicas: number): Promise<string> {
  const ns = await freshNamespace();
  await apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet(replicas) });
  await waitFor(() => runningPods(ns).length === replicas && storedRs(ns).status?.readyReplicas === replicas, {
    what: `${replicas} running pods`,
  });
  return ns;
}

describe("the scale subresource of workloads", () => {
  it("reads a ReplicaSet's Scale: its replicas, observed replicas and selector string", async () => {
    const ns = await freshNamespace();
    const selector = {
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }],
    };
    const rs = await apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet(2, selector) });
    // Read once the controller is done writing status, so the resourceVersion holds still.
    await waitFor(() => storedRs(ns).status?.availableReplicas === 2 && storedRs(ns).status?.observedGeneration === 1, {
      what: "two available replicas",
    });
    const { status, body } = await http(server, "GET", `/apis/apps/v1/namespaces/${ns}/replicasets/web/scale`);
    expect(status).toBe(200);
    expect(body).toEqual({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: {
        name: "web",
        namespace: ns,
        uid: rs.metadata!.uid,
        resourceVersion: storedRs(ns).metadata.resourceVersion,
        creationTimestamp: rs.metadata!.creationTimestamp!.toISOString().replace(/\.\d{3}Z$/, "Z"),
      },
      spec: { replicas: 2 },
      status: { replicas: 2, selector: "app=web,tier in (a,b)" },
    });
    const typed = await apps.readNamespacedReplicaSetScale({ namespace: ns, name: "web" });
    expect(typed.spec?.replicas).toBe(2);
  });

  it("reads and writes a Deployment's Scale", async () => {
    const ns = await freshNamespace();
    const body = {
      metadata: { name: "api" },
      spec: {
        selector: { matchLabels: { app: "api" } },
        template: { metadata: { labels: { app: "api" } }, spec: { containers: [{ name: "app", image: "api:1" }] } },
      },
    };
    await apps.createNamespacedDeployment({ namespace: ns, body });
    const scale = await apps.readNamespacedDeploymentScale({ namespace: ns, name: "api" });
    // Defaulted to one replica; no deployment controller here, so none observed.
    expect(scale).toMatchObject({ kind: "Scale", spec: { replicas: 1 }, status: { replicas: 0, selector: "app=api" } });
    const out = await kubectl.run(["scale", "deployment", "api", "-n", ns, "--replicas=0"]);
    expect(out.stdout.trim()).toBe("deployment.apps/api scaled");
    expect(server.store.get({ group: "apps", version: "v1", resource: "deployments" }, ns, "api")!.spec.replicas).toBe(
      0,
    );
    // A zero int32 is omitted from the Scale's spec, as the real (omitempty) type serialises it.
    expect((await http(server, "GET", `/apis/apps/v1/namespaces/${ns}/deployments/api/scale`)).body.spec).toEqual({});
  });

  it("kubectl scale sets spec.replicas as an ordinary update, and the ReplicaSet controller converges the pods", async () => {
    const ns = await runningReplicaSet(2);
    const before = storedRs(ns);
    const events: Array<{ type: string; replicas: number; rv: string }> = [];
    const watch = await new Watch(kubeConfigFor(server)).watch(
      `/apis/apps/v1/namespaces/${ns}/replicasets`,
      { resourceVersion: before.metadata.resourceVersion },
      (type, obj) => events.push({ type, replicas: obj.spec.replicas, rv: obj.metadata.resourceVersion }),
      () => {},
    );
    try {
      const out = await kubectl.run(["scale", "rs", "web", "-n", ns, "--replicas=5"]);
      expect(out).toMatchObject({ code: 0, stdout: "replicaset.apps/web scaled\n", stderr: "" });
      const after = storedRs(ns);
      expect(after.spec.replicas).toBe(5);
      expect(after.metadata.generation).toBe(before.metadata.generation + 1);
      expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
      expect(after.metadata.managedFields).toContainEqual(
        expect.objectContaining({
          manager: "kubectl",
          operation: "Update",
          apiVersion: "apps/v1",
          subresource: "scale",
        }),
      );
      // kubectl 1.33 sends one merge patch of the subresource.
      const writes = requestsBy(server.requestLog, {
        resource: "replicasets",
        subresource: "scale",
        writes: true,
      }).filter((e) => e.namespace === ns);
      expect(writes.map((e) => `${e.verb} ${e.code}`)).toEqual(["patch 200"]);
      await waitFor(
        () => events.some((e) => e.type === "MODIFIED" && e.replicas === 5 && e.rv === after.metadata.resourceVersion),
        { what: "the watch to see the scale" },
      );
      await waitFor(() => runningPods(ns).length === 5 && storedRs(ns).status?.readyReplicas === 5, {
        what: "five running pods",
      });

      await kubectl.run(["scale", "rs", "web", "-n", ns, "--replicas=1"]);
      await waitFor(() => runningPods(ns).length === 1 && storedRs(ns).status?.replicas === 1, {
        what: "one pod left",
      });
      const scale = await apps.readNamespacedReplicaSetScale({ namespace: ns, name: "web" });
      expect(scale.spec?.replicas).toBe(1);
      expect(scale.status?.replicas).toBe(1);
    } finally {
      watch.abort();
    }
  });

  it("kubectl scale --current-replicas reads the Scale, refuses a mismatch itself, and otherwise PUTs it", async () => {
    const ns = await freshNamespace();
    await apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet(3) });
    const refused = await kubectl.run(["scale", "rs", "web", "-n", ns, "--current-replicas=2", "--replicas=4"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim()).toBe("error: Expected replicas to be 2, was 3");
    expect(storedRs(ns).spec.replicas).toBe(3);
    const ok = await kubectl.run(["scale", "rs", "web", "-n", ns, "--current-replicas=3", "--replicas=4"]);
    expect(ok.stdout.trim()).toBe("replicaset.apps/web scaled");
    expect(storedRs(ns).spec.replicas).toBe(4);
    const calls = requestsBy(server.requestLog, { resource: "replicasets", subresource: "scale" }).filter(
      (e) => e.namespace === ns,
    );
    expect(calls.map((e) => `${e.verb} ${e.code}`)).toEqual(["get 200", "get 200", "update 200"]);
  });

  it("refuses negative replicas with 422 Invalid naming spec.replicas, and reports unknown Scale fields per fieldValidation", async () => {
    const ns = await freshNamespace();
    await apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet(1) });
    const expected = {
      code: 422,
      reason: "Invalid",
      message:
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      details: {
        name: "web",
        group: "autoscaling",
        kind: "Scale",
        causes: [
          {
            reason: "FieldValueInvalid",
            message: "Invalid value: -1: must be greater than or equal to 0",
            field: "spec.replicas",
          },
        ],
      },
    };
    const scale = await apps.readNamespacedReplicaSetScale({ namespace: ns, name: "web" });
    expect(
      await statusOf(
        apps.replaceNamespacedReplicaSetScale({
          namespace: ns,
          name: "web",
          body: { ...scale, spec: { replicas: -1 } },
        }),
      ),
    ).toEqual(expected);
    expect(
      await statusOf(
        apps.patchNamespacedReplicaSetScale(
          { namespace: ns, name: "web", body: { spec: { replicas: -1 } } },
          asMergePatch,
        ),
      ),
    ).toEqual(expected);
    expect(storedRs(ns).spec.replicas).toBe(1);
    // The Scale is decoded like any body: unknown fields per fieldValidation.
    const strict = await http(
      server,
      "PATCH",
      `/apis/apps/v1/namespaces/${ns}/replicasets/web/scale?fieldValidation=Strict`,
      { body: { spec: { replicas: 2, paused: true } }, contentType: "application/merge-patch+json" },
    );
    expect(strict.body).toMatchObject({ code: 400, message: 'strict decoding error: unknown field "spec.paused"' });
    const warned = await http(server, "PATCH", `/apis/apps/v1/namespaces/${ns}/replicasets/web/scale`, {
      body: { spec: { replicas: 2, paused: true } },
      contentType: "application/merge-patch+json",
    });
    expect(warned.headers.get("warning")).toBe('299 - "unknown field \\"spec.paused\\""');
    expect(storedRs(ns).spec.replicas).toBe(2);
    // kubectl does not even send it.
    const out = await kubectl.run(["scale", "rs", "web", "-n", ns, "--replicas=-1"]);
    expect(out.stderr).toContain("COUNT must be greater than or equal to 0");
  });

  it("checks a given resourceVersion: a stale one is a 409 Conflict, none is an unconditional write", async () => {
    const ns = await freshNamespace();
    await apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet(0) });
    const stale = await apps.readNamespacedReplicaSetScale({ namespace: ns, name: "web" });
    await apps.patchNamespacedReplicaSetScale({
      namespace: ns,
      name: "web",
      body: [{ op: "add", path: "/spec/replicas", value: 2 }],
    });
    const conflict = {
      code: 409,
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on replicasets.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    };
    expect(
      await statusOf(
        apps.replaceNamespacedReplicaSetScale({
          namespace: ns,
          name: "web",
          body: { ...stale, spec: { replicas: 3 } },
        }),
      ),
    ).toMatchObject(conflict);
    const rvPatch = { metadata: { resourceVersion: stale.metadata!.resourceVersion }, spec: { replicas: 3 } };
    expect(
      await statusOf(apps.patchNamespacedReplicaSetScale({ namespace: ns, name: "web", body: rvPatch }, asMergePatch)),
    ).toMatchObject(conflict);
    expect(storedRs(ns).spec.replicas).toBe(2);

    // A fresh read succeeds; read it once the controller has answered the change and holds still.
    await waitFor(() => storedRs(ns).status?.availableReplicas === 2 && storedRs(ns).status?.observedGeneration === 2, {
      what: "two available replicas",
    });
    const current = await apps.readNamespacedReplicaSetScale({ namespace: ns, name: "web" });
    // The next change after the read is the replace (the controller answers it with changes of its own).
    const changes = await fetch(
      `${server.url}/apis/apps/v1/namespaces/${ns}/replicasets?watch=true&fieldSelector=metadata.name%3Dweb&resourceVersion=${current.metadata!.resourceVersion}`,
      {
        headers: { authorization: "Bearer admin" },
      },
    );
    const replaced = await apps.replaceNamespacedReplicaSetScale({
      namespace: ns,
      name: "web",
      body: { ...current, spec: { replicas: 3 } },
    });
    expect(replaced.spec?.replicas).toBe(3);
    expect(replaced.metadata?.resourceVersion).toBe((await firstEvent(changes)).object.metadata!.resourceVersion);
    const unconditional = await http(server, "PUT", `/apis/apps/v1/namespaces/${ns}/replicasets/web/scale`, {
      body: { apiVersion: "autoscaling/v1", kind: "Scale", metadata: { name: "web" }, spec: { replicas: 4 } },
    });
    expect(unconditional.status).toBe(200);
    expect(storedRs(ns).spec.replicas).toBe(4);
  });

  it("keeps the resourceVersion on a no-op and stores nothing on a dry run", async () => {
    const ns = await freshNamespace();
    await apps.createNamespacedReplicaSet({ namespace: ns, body: aReplicaSet(0) });
    // The controller's status write moves the resourceVersion once; after it nothing else writes.
    await waitFor(() => storedRs(ns).status?.observedGeneration === 1, { what: "the controller's status" });
    const rv = storedRs(ns).metadata.resourceVersion;
    const same = await apps.patchNamespacedReplicaSetScale(
      { namespace: ns, name: "web", body: { spec: { replicas: 0 } } },
      asMergePatch,
    );
    expect(same.metadata?.resourceVersion).toBe(rv);
    const dry = await http(server, "PATCH", `/apis/apps/v1/namespaces/${ns}/replicasets/web/scale?dryRun=All`, {
      body: { spec: { replicas: 7 } },
      contentType: "application/merge-patch+json",
    });
    expect(dry.body.spec).toEqual({ replicas: 7 });
    expect(storedRs(ns).spec.replicas).toBe(0);
    expect(storedRs(ns).metadata.resourceVersion).toBe(rv);
  });

  it("answers 404 for a workload that does not exist", async () => {
    const ns = await freshNamespace();
    expect(await statusOf(apps.readNamespacedReplicaSetScale({ namespace: ns, name: "nope" }))).toEqual({
      code: 404,
      reason: "NotFound",
      message: 'replicasets/scale.apps "nope" not found',
      details: { name: "nope", group: "apps", kind: "replicasets/scale" },
    });
    // Writes fail in the ReplicaSet storage itself, which names the resource without the subresource.
    const scale = {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "nope", namespace: ns },
      spec: { replicas: 1 },
    };
    expect(
      await statusOf(apps.replaceNamespacedReplicaSetScale({ namespace: ns, name: "nope", body: scale })),
    ).toMatchObject({ code: 404, message: 'replicasets.apps "nope" not found' });
    expect(
      await statusOf(
        apps.patchNamespacedReplicaSetScale(
          { namespace: ns, name: "nope", body: { spec: { replicas: 1 } } },
          asMergePatch,
        ),
      ),
    ).toMatchObject({ code: 404, message: 'replicasets.apps "nope" not found' });
    const out = await kubectl.run(["scale", "rs", "nope", "-n", ns, "--replicas=2"]);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('replicasets.apps "nope" not found');
  });

  it("lists replicasets/scale and deployments/scale in discovery and OpenAPI, and kubectl api-resources stays clean", async () => {
    const scale = {
      namespaced: true,
      group: "autoscaling",
      version: "v1",
      kind: "Scale",
      verbs: ["get", "patch", "update"],
    };
    const list = (await http(server, "GET", "/apis/apps/v1")).body;
    expect(list.resources).toContainEqual({ name: "replicasets/scale", singularName: "", ...scale });
    expect(list.resources).toContainEqual({ name: "deployments/scale", singularName: "", ...scale });
    const aggregated = (
      await http(server, "GET", "/apis", {
        accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
      })
    ).body;
    const rs = aggregated.items
      .find((g: Obj) => g.metadata?.name === "apps")
      .versions[0].resources.find((r: Obj) => r.resource === "replicasets");
    expect(rs.subresources).toContainEqual({
      subresource: "scale",
      responseKind: { group: "autoscaling", version: "v1", kind: "Scale" },
      verbs: ["get", "patch", "update"],
    });
    const doc = (await http(server, "GET", "/openapi/v3/apis/apps/v1")).body;
    expect(doc.paths["/apis/apps/v1/namespaces/{namespace}/replicasets/{name}/scale"].get).toMatchObject({
      operationId: expect.stringMatching(/V1NamespacedReplicaSetScale$/),
      "x-kubernetes-group-version-kind": { group: "autoscaling", version: "v1", kind: "Scale" },
    });
    expect(doc.components.schemas["io.k8s.api.autoscaling.v1.Scale"]["x-kubernetes-group-version-kind"]).toEqual([
      { group: "autoscaling", version: "v1", kind: "Scale" },
    ]);

    const out = await kubectl.run(["api-resources", "--api-group=apps"]);
    expect(out).toMatchObject({ code: 0, stderr: "" });
    const names = out.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual(["deployments", "replicasets"]);
    const all = await kubectl.run(["api-resources", "-o", "name"]);
    expect(all).toMatchObject({ code: 0, stderr: "" });
    expect(all.stdout).not.toContain("/");
  });
});

describe("the scale subresource of a custom resource", () => {
  const gizmoCrd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "gizmos.scale.example.com" },
    spec: {
      group: "scale.example.com",
      scope: "Namespaced",
      names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo", listKind: "GizmoList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: {
              specReplicasPath: ".spec.size",
              statusReplicasPath: ".status.size",
              labelSelectorPath: ".status.selector",
            },
          },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { size: { type: "integer", minimum: 0 } } },
                status: { type: "object", properties: { size: { type: "integer" }, selector: { type: "string" } } },
              },
            },
          },
        },
      ],
    },
  };
  const path = (ns: string, name: string) => `/apis/scale.example.com/v1/namespaces/${ns}/gizmos/${name}`;

  beforeAll(async () => {
    await kubeConfigFor(server)
      .makeApiClient(ApiextensionsV1Api)
      .createCustomResourceDefinition({ body: gizmoCrd as any });
  });

  it("maps the CRD's replicas and selector paths, and writes through the custom resource's validation", async () => {
    const ns = await freshNamespace();
    await http(server, "POST", `/apis/scale.example.com/v1/namespaces/${ns}/gizmos`, {
      body: { apiVersion: "scale.example.com/v1", kind: "Gizmo", metadata: { name: "g" }, spec: { size: 2 } },
    });
    await http(server, "PUT", `${path(ns, "g")}/status`, {
      body: {
        ...server.store.get({ group: "scale.example.com", version: "v1", resource: "gizmos" }, ns, "g"),
        status: { size: 1, selector: "app=g" },
      },
    });
    const scale = await http(server, "GET", `${path(ns, "g")}/scale`);
    expect(scale.body).toMatchObject({
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "g", namespace: ns },
      spec: { replicas: 2 },
      status: { replicas: 1, selector: "app=g" },
    });

    const out = await kubectl.run(["scale", "gizmo", "g", "-n", ns, "--replicas=4"]);
    expect(out.stdout.trim()).toBe("gizmo.scale.example.com/g scaled");
    const stored = server.store.get({ group: "scale.example.com", version: "v1", resource: "gizmos" }, ns, "g")!;
    expect(stored.spec.size).toBe(4);
    expect(stored.metadata.generation).toBe(2);

    // No Scale validation for custom resources: the CRD's schema refuses the value at its own path.
    const negative = await http(server, "PATCH", `${path(ns, "g")}/scale`, {
      body: { spec: { replicas: -1 } },
      contentType: "application/merge-patch+json",
    });
    expect(negative.status).toBe(422);
    expect(negative.body.details.causes).toEqual([expect.objectContaining({ field: "spec.size" })]);
  });

  it("answers 500 when the object has no value at the spec replicas path, and 404 for a missing object", async () => {
    const ns = await freshNamespace();
    await http(server, "POST", `/apis/scale.example.com/v1/namespaces/${ns}/gizmos`, {
      body: { apiVersion: "scale.example.com/v1", kind: "Gizmo", metadata: { name: "empty" }, spec: {} },
    });
    const empty = await http(server, "GET", `${path(ns, "empty")}/scale`);
    expect(empty.status).toBe(500);
    expect(empty.body.message).toBe('Internal error occurred: the spec replicas field ".spec.size" does not exist');
    const noReplicas = await http(server, "PATCH", `${path(ns, "empty")}/scale`, {
      body: { metadata: { labels: { a: "b" } } },
      contentType: "application/merge-patch+json",
    });
    expect(noReplicas.body).toMatchObject({
      code: 400,
      message: 'the spec replicas field ".spec.size" cannot be empty',
    });
    const set = await http(server, "PATCH", `${path(ns, "empty")}/scale`, {
      body: { spec: { replicas: 1 } },
      contentType: "application/merge-patch+json",
    });
    expect(set.body.spec).toEqual({ replicas: 1 });
    const missing = await http(server, "GET", `${path(ns, "nope")}/scale`);
    expect(missing.body).toMatchObject({ code: 404, message: 'gizmos.scale.example.com "nope" not found' });
  });
});
