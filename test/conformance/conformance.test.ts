// The same user-facing scenarios through client-node and through the real kubectl, each against a fresh
// cluster (the API test server, or the real control plane with HEALTHPROBE_TEST_CLUSTER=real): what one
// client can do with the CRD and the examples, the other can too, with the same result.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { join } from "node:path";
import { clusterKind, startConformanceCluster, type ConformanceCluster } from "./clusters.js";
import { waitFor } from "../support/wait-for.js";
import { drivers, types, type Driver, type Obj } from "./drivers.js";
import {
  aBarePod,
  aConfigMap,
  aNamespace,
  aPolicy,
  aReplicaSet,
  crdName,
  crdsDir,
  documentsOf,
  exampleFiles,
  examplesDir,
  invalidPolicies,
  ownerRef,
  uniqueName,
} from "./fixtures.js";

/** A status as the operator would write it, so every printer column has a value. */
const aStatus = (o: {
  targets: number;
  healthy: number;
  drained: number;
  replaced: number;
  ready: "True" | "False";
}) => ({
  observedGeneration: 1,
  targets: o.targets,
  healthy: o.healthy,
  unhealthy: o.targets - o.healthy,
  unknown: 0,
  drained: o.drained,
  replacedInLastDay: o.replaced,
  conditions: [
    {
      type: "Ready",
      status: o.ready,
      reason: "Probing",
      message: "probing every target",
      lastTransitionTime: "2026-01-01T00:00:00Z",
      observedGeneration: 1,
    },
  ],
});

const crdSchema = documentsOf(join(crdsDir, "healthprobe.io_healthprobepolicies.yaml"))[0]!.spec.versions[0].schema
  .openAPIV3Schema;

/** What only the real control plane does (CEL rules, server-side apply's field ownership) is skipped on the API test server. */
const onTestServer = clusterKind === "test-server";

describe.each(drivers)("through %s", (_name, makeDriver) => {
  let server: ConformanceCluster;
  let driver: Driver;

  beforeAll(async () => {
    server = await startConformanceCluster({ bookmarkIntervalMs: 60_000 });
    driver = makeDriver(server);
    expect(await driver.applyFile(crdsDir)).toEqual({ ok: true });
    await driver.waitEstablished(crdName);
    // The real control plane takes a while to start.
  }, 180_000);
  afterAll(async () => {
    driver?.close();
    await server?.stop();
  }, 60_000);

  async function freshNamespace(): Promise<string> {
    const ns = uniqueName("ns");
    expect(await driver.apply([aNamespace(ns)])).toEqual({ ok: true });
    return ns;
  }

  it("serves the CRD from crds/: discovery lists healthprobepolicies with short name hpp and category healthprobe", async () => {
    const resources = await driver.apiResources("healthprobe.io", "v1alpha1");
    expect(resources).toEqual([
      {
        name: "healthprobepolicies",
        kind: "HealthProbePolicy",
        namespaced: true,
        shortNames: ["hpp"],
        categories: ["healthprobe"],
      },
    ]);
    expect(await driver.list(types.policy, "default")).toEqual([]);
  });

  it("applies every example file, and bare pods with each example's labels land behind its policy", async () => {
    const ns = await freshNamespace();
    const expected: Array<{ policy: string; service: string; labels: Record<string, string> }> = [];
    for (const file of exampleFiles) {
      expect(await driver.applyFile(join(examplesDir, file), ns)).toEqual({ ok: true });
      const policy = documentsOf(join(examplesDir, file)).find((d) => d.kind === "HealthProbePolicy")!;
      expected.push({
        policy: policy.metadata!.name!,
        service: policy.spec.serviceName,
        labels: policy.spec.selector.matchLabels,
      });
    }
    for (const e of expected) {
      expect(
        await driver.apply(
          [
            aBarePod({ name: `${e.policy}-a`, labels: e.labels }),
            aBarePod({ name: `${e.policy}-b`, labels: e.labels }),
          ],
          ns,
        ),
      ).toEqual({ ok: true });
    }

    const policies = await driver.list(types.policy, ns);
    expect(policies.map((p) => p.metadata!.name).sort()).toEqual(expected.map((e) => e.policy).sort());
    for (const e of expected) {
      const service = await driver.get(types.service, ns, e.service);
      expect(service?.spec.selector).toBeUndefined();
      const selector = Object.entries(e.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
      expect((await driver.list(types.pod, ns, selector)).map((p) => p.metadata!.name).sort()).toEqual([
        `${e.policy}-a`,
        `${e.policy}-b`,
      ]);
    }
    // Defaults from the schema are filled in on the way in: the Front Door example sets no period.
    const api = policies.find((p) => p.metadata!.name === "api")!;
    expect(api.spec.probe).toMatchObject({ method: "HEAD", periodSeconds: 60, timeoutSeconds: 60, scheme: "HTTP" });
  });

  it("shows the printer columns of get hpp with the values set through the status subresource", async () => {
    const ns = await freshNamespace();
    expect(
      await driver.apply(
        [
          aPolicy({ name: "with-status", spec: { serviceName: "web" } }),
          aPolicy({ name: "without-status", spec: { serviceName: "shop" } }),
        ],
        ns,
      ),
    ).toEqual({ ok: true });
    expect(
      await driver.patch(
        types.policy,
        ns,
        "with-status",
        { status: aStatus({ targets: 4, healthy: 3, drained: 1, replaced: 2, ready: "True" }) },
        { subresource: "status" },
      ),
    ).toEqual({ ok: true });

    const table = await driver.table(types.policy, ns);
    expect(table.headers).toEqual([
      "NAME",
      "SERVICE",
      "TARGETS",
      "HEALTHY",
      "DRAINED",
      "REPLACED(24H)",
      "READY",
      "AGE",
    ]);
    const byName = new Map(table.rows.map((r) => [r[0], r]));
    expect(byName.get("with-status")!.slice(0, 7)).toEqual(["with-status", "web", "4", "3", "1", "2", "True"]);
    expect(byName.get("without-status")!.slice(0, 7)).toEqual(["without-status", "shop", "", "", "", "", ""]);
    for (const row of table.rows) expect(row[7]).toMatch(/^\d+s$/);
  });

  it("explains spec.probe with the schema's field descriptions", async () => {
    const docs = await driver.explain(types.policy, "spec.probe");
    const probe = crdSchema.properties.spec.properties.probe;
    const described = (field: string) => String(probe.properties[field].description).replace(/\s+/g, " ").trim();
    expect(docs.get("path")).toEqual({ type: "string", required: false, description: described("path") });
    expect(docs.get("timeoutSeconds")).toEqual({
      type: "integer",
      required: false,
      description: described("timeoutSeconds"),
    });
    expect(docs.get("periodSeconds")).toEqual({
      type: "integer",
      required: false,
      description: described("periodSeconds"),
    });
    expect(docs.get("headers")).toEqual({ type: "[]Object", required: false, description: described("headers") });
    expect(docs.get("match")).toEqual({ type: "Object", required: false, description: described("match") });
    expect(docs.get("signature")?.description).toBe(described("signature"));
    expect(docs.get("port")).toMatchObject({ required: true, description: described("port") });
    expect([...docs.keys()].sort()).toEqual(Object.keys(probe.properties).sort());
  });

  it("watches pods and sees a label change", async () => {
    const ns = await freshNamespace();
    expect(
      await driver.apply(
        [
          aBarePod({ name: "first", labels: { app: "watched", tier: "blue" } }),
          aBarePod({ name: "second", labels: { app: "watched", tier: "blue" } }),
        ],
        ns,
      ),
    ).toEqual({ ok: true });
    const view = await driver.watch(types.pod, ns, "tier");
    try {
      await waitFor(() => view.events.filter((e) => e.type === "ADDED").length === 2, { what: "both pods listed" });
      // With a kubelet a pod may already be MODIFIED (bound, status written), unrelabelled: checked below.
      expect(view.events.filter((e) => e.type === "ADDED")).toEqual([
        { type: "ADDED", name: "first", label: "blue" },
        { type: "ADDED", name: "second", label: "blue" },
      ]);
      expect(await driver.patch(types.pod, ns, "second", { metadata: { labels: { tier: "green" } } })).toEqual({
        ok: true,
      });
      await waitFor(
        () => view.events.some((e) => e.type === "MODIFIED" && e.name === "second" && e.label === "green"),
        { what: "the label change" },
      );
    } finally {
      await view.stop();
    }
    // On a cluster with a kubelet, "first" may also be MODIFIED (bound, status written): never relabelled.
    const first = view.events.filter((e) => e.name === "first");
    expect(first[0]).toEqual({ type: "ADDED", name: "first", label: "blue" });
    expect(first.filter((e) => e.type !== "MODIFIED" || e.label !== "blue")).toEqual([first[0]]);
  });

  it("patches status through the subresource without touching spec or generation; a spec patch bumps generation", async () => {
    const ns = await freshNamespace();
    expect(await driver.apply([aPolicy({ name: "gen" })], ns)).toEqual({ ok: true });
    const before = (await driver.get(types.policy, ns, "gen"))!;
    expect(before.metadata!.generation).toBe(1);

    // The spec in this body must be ignored: the status subresource only writes status.
    const statusPatch = {
      status: aStatus({ targets: 2, healthy: 1, drained: 1, replaced: 0, ready: "False" }),
      spec: { probe: { periodSeconds: 99 } },
    };
    expect(await driver.patch(types.policy, ns, "gen", statusPatch, { subresource: "status" })).toEqual({ ok: true });
    const afterStatus = (await driver.get(types.policy, ns, "gen"))!;
    expect(afterStatus.status).toMatchObject({ targets: 2, healthy: 1, drained: 1 });
    expect(afterStatus.spec).toEqual(before.spec);
    expect(afterStatus.metadata!.generation).toBe(1);
    expect(afterStatus.metadata!.resourceVersion).not.toBe(before.metadata!.resourceVersion);

    expect(
      await driver.patch(types.policy, ns, "gen", { spec: { probe: { periodSeconds: 20 } }, status: { targets: 9 } }),
    ).toEqual({ ok: true });
    const afterSpec = (await driver.get(types.policy, ns, "gen"))!;
    expect(afterSpec.spec.probe.periodSeconds).toBe(20);
    expect(afterSpec.metadata!.generation).toBe(2);
    // ...and the main resource does not write status.
    expect(afterSpec.status.targets).toBe(2);
  });

  // Field ownership (managedFields, conflicts, force) is kube-apiserver's: the API test server merges an apply without it.
  (onTestServer ? it.skip : it)(
    "applies server-side: creates, updates a changed field, and takes a field another manager set only when forced",
    async () => {
      const ns = await freshNamespace();
      const policy = aPolicy({ name: "ssa", spec: { probe: { periodSeconds: 10, timeoutSeconds: 5 } } });
      expect(await driver.applyServerSide(policy, { namespace: ns })).toEqual({ ok: true });
      const created = (await driver.get(types.policy, ns, "ssa"))!;
      expect(created.spec.probe.periodSeconds).toBe(10);
      expect(created.metadata!.managedFields!.map((m: Obj) => m.operation)).toEqual(["Apply"]);

      expect(
        await driver.applyServerSide(
          aPolicy({ name: "ssa", spec: { probe: { periodSeconds: 30, timeoutSeconds: 5 } } }),
          { namespace: ns },
        ),
      ).toEqual({ ok: true });
      const updated = (await driver.get(types.policy, ns, "ssa"))!;
      expect(updated.spec.probe.periodSeconds).toBe(30);
      expect(updated.metadata!.generation).toBe(2);

      // Another applier takes timeoutSeconds; applying a different value is then a conflict, unless forced.
      const theirs = aPolicy({ name: "ssa", spec: { probe: { periodSeconds: 30, timeoutSeconds: 7 } } });
      expect(
        await driver.applyServerSide(
          { ...theirs, spec: { probe: { timeoutSeconds: 7 } } },
          { namespace: ns, fieldManager: "tuner", force: true },
        ),
      ).toEqual({ ok: true });
      const changed = aPolicy({ name: "ssa", spec: { probe: { periodSeconds: 30, timeoutSeconds: 8 } } });
      const conflict = await driver.applyServerSide(changed, { namespace: ns });
      expect(conflict).toMatchObject({ ok: false, code: driver.codeFor(409) });
      expect(conflict.ok === false && conflict.message).toMatch(
        /conflict with "tuner"[\s\S]*\.spec\.probe\.timeoutSeconds/,
      );
      expect((await driver.get(types.policy, ns, "ssa"))!.spec.probe.timeoutSeconds).toBe(7);

      expect(await driver.applyServerSide(changed, { namespace: ns, force: true })).toEqual({ ok: true });
      const forced = (await driver.get(types.policy, ns, "ssa"))!;
      expect(forced.spec.probe.timeoutSeconds).toBe(8);
      expect(forced.metadata!.generation).toBe(4);
    },
  );

  it("deletes an owner ConfigMap and the garbage collector removes its dependents, not others", async () => {
    const ns = await freshNamespace();
    expect(await driver.apply([aConfigMap({ name: "owner" }), aConfigMap({ name: "bystander" })], ns)).toEqual({
      ok: true,
    });
    const owner = (await driver.get(types.configMap, ns, "owner"))!;
    expect(
      await driver.apply(
        [
          aConfigMap({ name: "dep-a", ownerReferences: [ownerRef(owner)] }),
          aConfigMap({ name: "dep-b", ownerReferences: [ownerRef(owner)] }),
        ],
        ns,
      ),
    ).toEqual({ ok: true });

    expect(await driver.delete(types.configMap, ns, "owner")).toEqual({ ok: true });
    await waitFor(
      async () => (await driver.list(types.configMap, ns)).every((c) => !c.metadata!.name!.startsWith("dep-")),
      { what: "dependents collected" },
    );
    expect(
      (await driver.list(types.configMap, ns)).map((c) => c.metadata!.name).filter((n) => n !== "kube-root-ca.crt"),
    ).toEqual(["bystander"]);
  });

  it("deletes a ReplicaSet and the garbage collector removes its pods", async () => {
    const ns = await freshNamespace();
    expect(await driver.apply([aReplicaSet({ name: "web", replicas: 2, labels: { app: "rs-web" } })], ns)).toEqual({
      ok: true,
    });
    const pods = await waitFor(
      async () => {
        const list = await driver.list(types.pod, ns, "app=rs-web");
        return list.length === 2 && list;
      },
      { what: "the ReplicaSet's pods" },
    );
    for (const p of pods)
      expect(p.metadata!.ownerReferences).toEqual([
        expect.objectContaining({ kind: "ReplicaSet", name: "web", controller: true }),
      ]);

    expect(await driver.delete(types.replicaSet, ns, "web")).toEqual({ ok: true });
    await waitFor(async () => (await driver.list(types.pod, ns, "app=rs-web")).length === 0, {
      what: "pods collected",
    });
  });

  // The CRD's CEL rules run on the real control plane only: the API test server does not run CEL.
  it.each(invalidPolicies.filter((p) => !(p.cel && onTestServer)))(
    "refuses a policy with $what, naming $field",
    async ({ spec, field }) => {
      const name = uniqueName("invalid");
      const result = await driver.apply([aPolicy({ name, spec })], "default");
      expect(result).toMatchObject({ ok: false, code: driver.codeFor(422) });
      expect(result.ok === false && result.message).toContain(field);
      expect(await driver.get(types.policy, "default", name)).toBeUndefined();
    },
  );
  if (onTestServer)
    it.skip.each(invalidPolicies.filter((p) => p.cel && onTestServer))(
      "refuses a policy with $what, naming $field (CEL: on the real control plane only)",
      () => undefined,
    );
});
