import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { CoreV1Api, CustomObjectsApi, type KubernetesObjectApi } from "@kubernetes/client-node";
import { startApiServer, type TestApiServer } from "./index.js";
import {
  aConfigMap,
  aPod,
  http,
  kubeConfigFor,
  objectApi,
  ownerRef,
  statusOf,
  uniqueName,
  type Obj,
} from "./test-kit.js";
import { waitFor } from "../../test/support/wait-for.js";

let server: TestApiServer;
let api: KubernetesObjectApi;
let core: CoreV1Api;

beforeAll(async () => {
  server = await startApiServer({ controllers: false });
  api = objectApi(server);
  core = kubeConfigFor(server).makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await server.stop();
});

async function aNamespace(): Promise<string> {
  const name = uniqueName("ns");
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

describe("create, read, update, delete", () => {
  it("creates an object with uid, creationTimestamp, a resourceVersion from one global counter and generation 1 for kinds with status", async () => {
    const before = Number(server.store.resourceVersion());
    const pod = (await api.create(aPod())) as Obj;
    const cm = (await api.create(aConfigMap())) as Obj;
    expect(pod.metadata!.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(pod.metadata!.creationTimestamp).toBeDefined();
    expect(Number(pod.metadata!.resourceVersion)).toBeGreaterThan(before);
    expect(Number(cm.metadata!.resourceVersion)).toBe(Number(pod.metadata!.resourceVersion) + 1);
    expect(pod.metadata!.generation).toBe(1);
    expect(pod.status.phase).toBe("Pending");
  });

  it("names objects from generateName with a random five character suffix", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { generateName: "gen-" }, data: {} },
    });
    expect(created.metadata!.name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it.each([
    [
      "an existing name",
      async () => core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "dup" } } }),
      409,
      "AlreadyExists",
      'configmaps "dup" already exists',
    ],
    [
      "a missing namespace",
      async () => core.createNamespacedConfigMap({ namespace: "nowhere", body: { metadata: { name: "x" } } }),
      404,
      "NotFound",
      'namespaces "nowhere" not found',
    ],
    [
      "a missing object",
      async () => core.readNamespacedConfigMap({ namespace: "default", name: "absent" }),
      404,
      "NotFound",
      'configmaps "absent" not found',
    ],
    [
      "no name",
      async () => core.createNamespacedConfigMap({ namespace: "default", body: { metadata: {} } }),
      422,
      "Invalid",
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    ],
  ])("refuses %s with the real Status", async (_what, call, code, reason, message) => {
    await core
      .createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "dup" } } })
      .catch(() => undefined);
    const status = await statusOf(call());
    expect(status).toMatchObject({ code, reason, message });
  });

  it("refuses an update from a stale resourceVersion with 409 Conflict and the real message", async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    await core.replaceNamespacedConfigMap({
      namespace: "default",
      name: cm.metadata!.name!,
      body: { ...cm, data: { key: "first" } },
    });
    const status = await statusOf(
      core.replaceNamespacedConfigMap({
        namespace: "default",
        name: cm.metadata!.name!,
        body: { ...cm, data: { key: "second" } },
      }),
    );
    expect(status.code).toBe(409);
    expect(status.reason).toBe("Conflict");
    expect(status.message).toBe(
      `Operation cannot be fulfilled on configmaps "${cm.metadata!.name}": the object has been modified; please apply your changes to the latest version and try again`,
    );
    const stored = await core.readNamespacedConfigMap({ namespace: "default", name: cm.metadata!.name! });
    expect(stored.data).toEqual({ key: "first" });
  });

  it("refuses a create that carries a resourceVersion with the real 500", async () => {
    const res = await http(server, "POST", "/api/v1/namespaces/default/configmaps", {
      body: { metadata: { name: uniqueName("rv"), resourceVersion: "12" } },
    });
    expect(res.status).toBe(500);
    expect(res.body.message).toBe("resourceVersion should not be set on objects to be created");
  });

  it("keeps the resourceVersion when an update changes nothing", async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    const again = await core.replaceNamespacedConfigMap({ namespace: "default", name: cm.metadata!.name!, body: cm });
    expect(again.metadata!.resourceVersion).toBe(cm.metadata!.resourceVersion);
  });

  it("does not persist dry-run writes", async () => {
    const name = uniqueName("dry");
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name } },
      dryRun: "All",
    });
    expect(created.metadata!.name).toBe(name);
    expect((await statusOf(core.readNamespacedConfigMap({ namespace: "default", name }))).code).toBe(404);
  });

  it.each([
    ["Strict", 400, 'strict decoding error: unknown field "datta", unknown field "metadata.lables"'],
    ["Warn", 201, undefined],
    ["Ignore", 201, undefined],
  ])("handles unknown fields of a built-in kind with fieldValidation=%s", async (mode, code, message) => {
    const res = await http(server, "POST", `/api/v1/namespaces/default/configmaps?fieldValidation=${mode}`, {
      body: { metadata: { name: uniqueName("fv"), lables: { a: "b" } }, datta: { k: "v" } },
    });
    expect(res.status).toBe(code);
    if (message) expect(res.body.message).toBe(message);
    expect(res.headers.get("warning") !== null).toBe(mode === "Warn");
  });

  it("keeps a Service's allocated cluster IP when an update leaves it out", async () => {
    const svc = await core.createNamespacedService({
      namespace: "default",
      body: { metadata: { name: uniqueName("svc") }, spec: { ports: [{ port: 80 }] } },
    });
    expect(svc.spec!.clusterIP).toMatch(/^10\.96\./);
    const { clusterIP: _ip, clusterIPs: _ips, ...spec } = svc.spec!;
    const updated = await core.replaceNamespacedService({
      namespace: "default",
      name: svc.metadata!.name!,
      body: { ...svc, spec: { ...spec, ports: [{ port: 81 }] } },
    });
    expect(updated.spec!.clusterIP).toBe(svc.spec!.clusterIP);
    expect(updated.spec!.ports![0]!.targetPort).toBe(81);
  });

  it("forbids creating in a terminating namespace", async () => {
    const ns = await aNamespace();
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: aConfigMap({ namespace: ns, finalizers: ["example.com/hold"] }) as any,
    });
    await core.deleteNamespace({ name: ns });
    const status = await statusOf(
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "late" } } }),
    );
    expect(status.code).toBe(403);
    expect(status.reason).toBe("Forbidden");
    expect(status.message).toBe(
      `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
    );
  });

  it("deletes a namespace's content, then the namespace", async () => {
    const ns = await aNamespace();
    await api.create(aPod({ namespace: ns }));
    await core.deleteNamespace({ name: ns });
    await waitFor(
      () => server.store.get({ group: "", version: "v1", resource: "namespaces" }, undefined, ns) === undefined,
      { what: "namespace gone" },
    );
    expect(server.store.list({ group: "", version: "v1", resource: "pods" }, ns)).toEqual([]);
  });
});

describe("generation and the spec/status split", () => {
  it("bumps generation on spec changes only, ignores status on the main resource and everything but status on /status", async () => {
    const pdbApi = api;
    const pdb = (await pdbApi.create({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: uniqueName("pdb"), namespace: "default" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "web" } } },
    } as Obj)) as Obj;
    expect(pdb.metadata!.generation).toBe(1);

    const withStatus = (await pdbApi.replace({ ...pdb, status: { disruptionsAllowed: 5 } } as Obj)) as Obj;
    expect(withStatus.status?.disruptionsAllowed ?? 0).toBe(0);
    expect(withStatus.metadata!.generation).toBe(1);

    const specChanged = (await pdbApi.replace({
      ...withStatus,
      spec: { ...withStatus.spec, minAvailable: 2 },
    } as Obj)) as Obj;
    expect(specChanged.metadata!.generation).toBe(2);

    const statusWrite = await http(
      server,
      "PUT",
      `/apis/policy/v1/namespaces/default/poddisruptionbudgets/${pdb.metadata!.name}/status`,
      {
        body: {
          ...specChanged,
          spec: { ...specChanged.spec, minAvailable: 9 },
          metadata: { ...specChanged.metadata, labels: { sneaky: "yes" } },
          status: { disruptionsAllowed: 3, observedGeneration: 2 },
        },
      },
    );
    expect(statusWrite.status).toBe(200);
    expect(statusWrite.body.status.disruptionsAllowed).toBe(3);
    expect(statusWrite.body.spec.minAvailable).toBe(2);
    expect(statusWrite.body.metadata.labels).toBeUndefined();
    expect(statusWrite.body.metadata.generation).toBe(2);
  });

  it("gives EndpointSlices generation 1 and bumps it when endpoints or labels change, not annotations", async () => {
    const slice = (await api.create({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: uniqueName("eps"), namespace: "default", labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      endpoints: [{ addresses: ["10.244.0.10"], conditions: { ready: true } }],
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    } as Obj)) as Obj;
    expect(slice.metadata!.generation).toBe(1);
    const annotated = (await api.replace({
      ...slice,
      metadata: { ...slice.metadata, annotations: { note: "x" } },
    } as Obj)) as Obj;
    expect(annotated.metadata!.generation).toBe(1);
    const drained = (await api.replace({
      ...annotated,
      endpoints: [{ addresses: ["10.244.0.10"], conditions: { ready: false } }],
    } as Obj)) as Obj;
    expect(drained.metadata!.generation).toBe(2);
    const relabelled = (await api.replace({
      ...drained,
      metadata: { ...drained.metadata, labels: { ...drained.metadata!.labels, extra: "y" } },
    } as Obj)) as Obj;
    expect(relabelled.metadata!.generation).toBe(3);
  });

  it("accepts pod status from the kubelet's side through /status", async () => {
    const pod = await core.createNamespacedPod({ namespace: "default", body: aPod() as any });
    const updated = await core.replaceNamespacedPodStatus({
      namespace: "default",
      name: pod.metadata!.name!,
      body: {
        ...pod,
        status: { phase: "Running", podIP: "127.0.10.7", conditions: [{ type: "Ready", status: "True" }] },
      },
    });
    expect(updated.status!.phase).toBe("Running");
    expect(updated.status!.podIP).toBe("127.0.10.7");
  });
});

describe("finalizers and garbage collection", () => {
  it("keeps an object with finalizers terminating until they are removed", async () => {
    const cm = await core.createNamespacedConfigMap({
      namespace: "default",
      body: aConfigMap({ finalizers: ["example.com/hold"] }) as any,
    });
    const name = cm.metadata!.name!;
    await core.deleteNamespacedConfigMap({ namespace: "default", name });
    const terminating = await core.readNamespacedConfigMap({ namespace: "default", name });
    expect(terminating.metadata!.deletionTimestamp).toBeDefined();
    await core.patchNamespacedConfigMap({
      namespace: "default",
      name,
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
    expect((await statusOf(core.readNamespacedConfigMap({ namespace: "default", name }))).code).toBe(404);
  });

  it.each([
    ["Background", true],
    ["Foreground", true],
    ["Orphan", false],
  ])("with propagationPolicy %s, dependents are deleted: %s", async (policy, dependentsDeleted) => {
    const owner = (await api.create(aConfigMap())) as Obj;
    const dependents = await Promise.all(
      [0, 1].map(() => api.create(aConfigMap({ ownerReferences: [ownerRef(owner)] })) as Promise<Obj>),
    );
    await api.delete(owner, undefined, undefined, undefined, undefined, policy);
    await waitFor(
      () =>
        server.store.get({ group: "", version: "v1", resource: "configmaps" }, "default", owner.metadata!.name!) ===
        undefined,
      { what: "owner gone" },
    );
    const names = dependents.map((d) => d.metadata!.name!);
    if (dependentsDeleted) {
      await waitFor(
        () =>
          names.every(
            (n) => server.store.get({ group: "", version: "v1", resource: "configmaps" }, "default", n) === undefined,
          ),
        { what: "dependents gone" },
      );
    } else {
      for (const n of names) {
        const d = server.store.get({ group: "", version: "v1", resource: "configmaps" }, "default", n);
        expect(d).toBeDefined();
        expect(d!.metadata.ownerReferences).toBeUndefined();
      }
    }
  });

  it("deletes a dependent whose owner never existed", async () => {
    const orphan = (await api.create(
      aConfigMap({
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: "ghost", uid: "00000000-0000-0000-0000-000000000000" },
        ],
      }),
    )) as Obj;
    await waitFor(
      () =>
        server.store.get({ group: "", version: "v1", resource: "configmaps" }, "default", orphan.metadata!.name!) ===
        undefined,
      { what: "dangling dependent gone" },
    );
  });
});

describe("list, selectors, pagination and deletecollection", () => {
  let ns: string;
  beforeAll(async () => {
    ns = await aNamespace();
    const tiers = ["web", "web", "db", "cache", "web"];
    for (const [i, tier] of tiers.entries()) {
      const pod = await core.createNamespacedPod({
        namespace: ns,
        body: aPod({ name: `p${i}`, namespace: ns, labels: { tier, ...(i === 0 ? { canary: "true" } : {}) } }) as any,
      });
      if (i < 2)
        await core.replaceNamespacedPodStatus({
          namespace: ns,
          name: pod.metadata!.name!,
          body: { ...pod, status: { phase: "Running" } },
        });
    }
  });

  it.each([
    ["tier=web", "", ["p0", "p1", "p4"]],
    ["tier==web", "", ["p0", "p1", "p4"]],
    ["tier!=web", "", ["p2", "p3"]],
    ["tier in (db,cache)", "", ["p2", "p3"]],
    ["tier notin (db,cache)", "", ["p0", "p1", "p4"]],
    ["canary", "", ["p0"]],
    ["!canary,tier=web", "", ["p1", "p4"]],
    ["", "status.phase=Running", ["p0", "p1"]],
    ["", "metadata.name=p3", ["p3"]],
    ["tier=web", "status.phase!=Running", ["p4"]],
  ])("labelSelector %j and fieldSelector %j select %j", async (labelSelector, fieldSelector, expected) => {
    const list = await core.listNamespacedPod({
      namespace: ns,
      labelSelector: labelSelector || undefined,
      fieldSelector: fieldSelector || undefined,
    });
    expect(list.items.map((p) => p.metadata!.name)).toEqual(expected);
  });

  it("refuses an unsupported field label", async () => {
    const status = await statusOf(core.listNamespacedPod({ namespace: ns, fieldSelector: "spec.bogus=1" }));
    expect(status).toMatchObject({ code: 400, reason: "BadRequest", message: "field label not supported: spec.bogus" });
  });

  it("pages with limit and continue, reporting remainingItemCount", async () => {
    const first = await core.listNamespacedPod({ namespace: ns, limit: 2 });
    expect(first.items.map((p) => p.metadata!.name)).toEqual(["p0", "p1"]);
    expect(first.metadata!.remainingItemCount).toBe(3);
    const second = await core.listNamespacedPod({ namespace: ns, limit: 2, _continue: first.metadata!._continue });
    expect(second.items.map((p) => p.metadata!.name)).toEqual(["p2", "p3"]);
    const third = await core.listNamespacedPod({ namespace: ns, limit: 2, _continue: second.metadata!._continue });
    expect(third.items.map((p) => p.metadata!.name)).toEqual(["p4"]);
    expect(third.metadata!._continue).toBeUndefined();
  });

  it.each([
    ["a label selector", { labelSelector: "tier=web" }],
    ["a label and a field selector", { labelSelector: "tier=web", fieldSelector: "status.phase!=Running" }],
    ["no selector", {}],
  ])(
    "pages with %s exactly as it lists without a limit",
    async (_name, selectors: { labelSelector?: string; fieldSelector?: string }) => {
      const whole = (await core.listNamespacedPod({ namespace: ns, ...selectors })).items.map((p) => p.metadata!.name);
      const paged: Array<string | undefined> = [];
      let cont: string | undefined;
      do {
        const page = await core.listNamespacedPod({
          namespace: ns,
          ...selectors,
          limit: 1,
          ...(cont ? { _continue: cont } : {}),
        });
        paged.push(...page.items.map((p) => p.metadata!.name));
        if (page.metadata?._continue) expect(page.metadata.remainingItemCount).toBe(whole.length - paged.length);
        cont = page.metadata?._continue;
      } while (cont);
      expect(paged).toEqual(whole);
    },
  );

  it("answers an expired continue token with 410 Expired", async () => {
    const first = await core.listNamespacedPod({ namespace: ns, limit: 2 });
    server.faults.expireWatchesBefore(Number(server.store.resourceVersion()) + 1);
    try {
      const status = await statusOf(
        core.listNamespacedPod({ namespace: ns, limit: 2, _continue: first.metadata!._continue }),
      );
      expect(status.code).toBe(410);
      expect(status.reason).toBe("Expired");
    } finally {
      server.faults.clear();
    }
  });

  it("deletes a collection by label selector", async () => {
    const cns = await aNamespace();
    for (const color of ["red", "red", "blue"]) await api.create(aConfigMap({ namespace: cns, labels: { color } }));
    await core.deleteCollectionNamespacedConfigMap({ namespace: cns, labelSelector: "color=red" });
    const left = await core.listNamespacedConfigMap({ namespace: cns });
    expect(left.items.map((c) => c.metadata!.labels!.color)).toEqual(["blue"]);
  });

  it("lists across namespaces with the list's resourceVersion", async () => {
    const list = await core.listPodForAllNamespaces({ labelSelector: "tier=db" });
    expect(list.items.map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`)).toEqual([`${ns}/p2`]);
    expect(Number(list.metadata!.resourceVersion)).toBeGreaterThan(0);
  });
});

describe("the request log", () => {
  it("records the user from the bearer token and the verb of every request", async () => {
    const kc = kubeConfigFor(server, "operator");
    const opCore = kc.makeApiClient(CoreV1Api);
    const cm = await opCore.createNamespacedConfigMap({ namespace: "default", body: aConfigMap() as any });
    await opCore.readNamespacedConfigMap({ namespace: "default", name: cm.metadata!.name! });
    await opCore.deleteNamespacedConfigMap({ namespace: "default", name: cm.metadata!.name! });
    const mine = server.requestLog.filter((e) => e.user === "operator" && e.name === cm.metadata!.name);
    expect(mine.map((e) => [e.verb, e.method, e.resource, e.code])).toEqual([
      ["get", "GET", "configmaps", 200],
      ["delete", "DELETE", "configmaps", 200],
    ]);
    const create = server.requestLog.find((e) => e.user === "operator" && e.verb === "create");
    expect(create).toMatchObject({ resource: "configmaps", namespace: "default", code: 201 });
  });

  it("reaches custom objects through the generic clients too", async () => {
    const custom = kubeConfigFor(server).makeApiClient(CustomObjectsApi);
    const status = await statusOf(
      custom.getNamespacedCustomObject({
        group: "example.com",
        version: "v1",
        namespace: "default",
        plural: "widgets",
        name: "w",
      }),
    );
    expect(status.code).toBe(404);
  });
});
