import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, podIP, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeEach(async () => {
  ({ cluster, farm } = await openBed());
});

afterEach(async () => {
  await closeBed({ cluster, farm }, [operator]);
  operator = undefined;
});

const slicesOf = (service: string) => cluster.list("discovery.k8s.io/v1", "EndpointSlice", cluster.namespace, `kubernetes.io/service-name=${service}`);

describe("a policy's lifecycle", () => {
  it("reads back with the CRD's defaults when created with only the required fields (the test bed installs the CRD whole); the HTTP-only ones are the operator's", async () => {
    const minimal = { serviceName: "web", selector: { matchLabels: { app: "web" } }, probe: { path: "/healthz", port: 8080 } };
    const created = await cluster.create({ apiVersion: "healthprobe.io/v1alpha1", kind: "HealthProbePolicy", metadata: { name: "web", namespace: cluster.namespace }, spec: minimal });
    expect(created.spec).toEqual({
      ...minimal,
      dryRun: false,
      probe: { path: "/healthz", port: 8080, type: "HTTP", scheme: "HTTP", periodSeconds: 60, timeoutSeconds: 60, match: {} },
      evaluation: { failureThreshold: 10, successThreshold: 1, startupGraceSeconds: 0 },
      drain: { enabled: true, maxUnhealthyPercent: 50, method: "EndpointSlice", whenAllUnhealthy: "FailOpen" },
      replacement: { enabled: true, after: "1h", maxPerHour: 1, maxPerDay: 3, method: "Evict", pauseAboveUnhealthyPercent: 50, keepDiagnostics: true, diagnosticsRetention: "24h" },
    });
  });

  it("removes the slices it wrote when the policy is deleted, and leaves other Services' slices alone", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aService("api", cluster.namespace));
    await cluster.create(aPod("web-a", cluster.namespace));
    await cluster.create(aPod("api-a", cluster.namespace, { labels: { app: "api" } }));
    for (const name of ["web-a", "api-a"]) await farm.serve(await podIP(cluster, name));
    await cluster.create(aPolicy("web", cluster.namespace));
    await cluster.create(aPolicy("api", cluster.namespace, { serviceName: "api", selector: { app: "api" } }));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await slicesOf("web")).length > 0 && (await slicesOf("api")).length > 0, { what: "slices for both Services" });

    await cluster.remove("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
    await waitFor(async () => (await slicesOf("web")).length === 0, { what: "web's slices to be removed" });
    expect((await slicesOf("api")).length).toBeGreaterThan(0);
  });

  it("collects slices of a policy deleted while the operator was down", async () => {
    await cluster.create(aService("web", cluster.namespace));
    await cluster.create(aPod("web-a", cluster.namespace));
    await farm.serve(await podIP(cluster, "web-a"));
    await cluster.create(aPolicy("web", cluster.namespace));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await slicesOf("web")).length > 0, { what: "slices for web" });
    await operator.stop();
    operator = undefined;

    await cluster.remove("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await slicesOf("web")).length === 0, { what: "the orphaned slices to be collected" });
  });
});
