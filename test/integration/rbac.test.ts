// The chart's RBAC against what the operator really calls: one scenario that makes the operator
// use every part of its job (drain, restore, replacement by eviction and by deletion, the
// operator-wide ledger, Secret-sourced probe headers, leader election, aggregated Events,
// collecting a deleted policy's slices), then the test server's request log for the operator's
// user is compared with the rules the chart renders: nothing used is missing, nothing granted
// is unused.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ScaledClock } from "../../operator/src/runtime/testing/scaled-clock.js";
import { requestsBy } from "../apiserver/index.js";
import { checkRequestsAgainstRbac, rbacRulesFromChart } from "../chart/rbac.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aReplicaSet, aService, type Obj, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import * as queries from "./support/queries.js";
import { openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

const HPP = "healthprobe.io/v1alpha1";
let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeAll(async () => {
  ({ cluster, farm } = await openBed());
});

afterAll(async () => {
  if (process.env.DUMP_LOGS) console.log(JSON.stringify((await cluster.get(HPP, "HealthProbePolicy", "web"))?.status, null, 1));
  await operator?.stop();
  await farm.close();
  await cluster.stop();
});

function livePods(app: string, n: number): Promise<Obj[]> {
  return queries.livePods(cluster, farm, n, app);
}


describe("the chart's RBAC", () => {
  it("grants exactly what the operator uses", async () => {
    const ns = cluster.namespace;
    await cluster.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "probe-auth", namespace: ns }, data: { token: Buffer.from("s3cret").toString("base64") } });
    for (const app of ["web", "api"]) {
      await cluster.create({ ...aService(app, ns) });
      await cluster.create({ ...aReplicaSet(app, ns, 3, { app }) });
    }
    const web = aPolicy("web", ns, {
      failureThreshold: 1,
      probe: { headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "probe-auth", key: "token" } } }] },
      // Two of three pods fail below: above the mass-failure breaker's default of 50%, so it is off here.
      replacement: { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 10, method: "Evict", pauseAboveUnhealthyPercent: 100 },
    });
    const api = aPolicy("api", ns, { serviceName: "api", selector: { app: "api" }, failureThreshold: 1, replacement: { enabled: true, after: "30s", maxPerHour: 5, maxPerDay: 10, method: "Delete" } });
    await cluster.create(web);
    await cluster.create(api);
    const webPods = await livePods("web", 3);
    const apiPods = await livePods("api", 3);

    // Ten virtual seconds per real one: windows of 30 s pass in three.
    operator = await startTestOperator(cluster.server, ["--leader-elect"], { clock: new ScaledClock(10) });
    await waitFor(async () => (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.healthy === 3, { what: "web settled" });

    // Drain, restore and drain again: the repeated Event becomes a series (a patch).
    const flapping = webPods[0]!.status.podIP as string;
    farm.failing(flapping);
    await waitFor(async () => (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.drained === 1, { what: "a drain" });
    farm.healthy(flapping);
    await waitFor(async () => (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.drained === 0, { what: "a restore" });
    farm.failing(flapping);
    await waitFor(async () => (await cluster.get(HPP, "HealthProbePolicy", "web"))?.status?.drained === 1, { what: "the same pod drained again" });

    // Two evictions (the operator-wide ledger ConfigMap is created, then updated) and one deletion.
    farm.failing(webPods[1]!.status.podIP);
    farm.failing(apiPods[0]!.status.podIP);
    // Counted at the API (a ledger entry is charged before its call, so it alone proves nothing).
    const calls = (subresource: string | undefined, verb: string) =>
      requestsBy(cluster.server.requestLog, { user: "operator", resource: "pods", verb }).filter((e) => (e.subresource || undefined) === subresource && e.code < 300).length;
    await waitFor(() => calls("eviction", "create") >= 2 && calls(undefined, "delete") >= 1, { what: "two evictions and a deletion" });

    // A deleted policy's slices are collected.
    await cluster.remove(HPP, "HealthProbePolicy", "api");
    await waitFor(async () => (await cluster.list("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=api")).length === 0, { what: "api's slices collected" });

    await operator.stop(); // flushes pending Event series and releases the Lease
    operator = undefined;

    const used = requestsBy(cluster.server.requestLog, { user: "operator" });
    const check = checkRequestsAgainstRbac(used, rbacRulesFromChart({ namespace: "healthprobe-system" }));
    expect(check.missing).toEqual([]);
    expect(check.unused).toEqual([]);
    // The scenario really exercised the sensitive verbs.
    const verbs = new Set(used.map((e) => `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""}`));
    for (const v of ["create pods/eviction", "delete pods", "get secrets", "patch events", "update leases", "update configmaps", "delete endpointslices"]) expect(verbs).toContain(v);
  }, 120_000);
});
