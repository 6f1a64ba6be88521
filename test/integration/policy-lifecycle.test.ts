import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, podIP } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";

const bed = useBed();

const slicesOf = (service: string) =>
  bed.cluster.list(
    "discovery.k8s.io/v1",
    "EndpointSlice",
    bed.cluster.namespace,
    `kubernetes.io/service-name=${service}`,
  );

describe("a policy's lifecycle", () => {
  it("reads back with the CRD's defaults when created with only the required fields (the test bed installs the CRD whole); the HTTP-only ones are the operator's", async () => {
    const minimal = {
      serviceName: "web",
      selector: { matchLabels: { app: "web" } },
      probe: { path: "/healthz", port: 8080 },
    };
    const created = await bed.cluster.create({
      apiVersion: "healthprobe.io/v1alpha1",
      kind: "HealthProbePolicy",
      metadata: { name: "web", namespace: bed.cluster.namespace },
      spec: minimal,
    });
    expect(created.spec).toEqual({
      ...minimal,
      dryRun: false,
      probe: {
        path: "/healthz",
        port: 8080,
        type: "HTTP",
        scheme: "HTTP",
        periodSeconds: 60,
        timeoutSeconds: 60,
        match: {},
      },
      evaluation: { failureThreshold: 10, successThreshold: 1, startupGraceSeconds: 0 },
      drain: { enabled: true, maxUnhealthyPercent: 50, method: "EndpointSlice", whenAllUnhealthy: "FailOpen" },
      replacement: {
        enabled: true,
        after: "1h",
        maxPerHour: 1,
        maxPerDay: 3,
        method: "Evict",
        pauseAboveUnhealthyPercent: 50,
        keepDiagnostics: true,
        diagnosticsRetention: "24h",
      },
    });
  });

  it("removes the slices it wrote when the policy is deleted, and leaves other Services' slices alone", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aService("api", bed.cluster.namespace));
    await bed.cluster.create(aPod("web-a", bed.cluster.namespace));
    await bed.cluster.create(aPod("api-a", bed.cluster.namespace, { labels: { app: "api" } }));
    for (const name of ["web-a", "api-a"]) await bed.farm.serve(await podIP(bed.cluster, name));
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.cluster.create(aPolicy("api", bed.cluster.namespace, { serviceName: "api", selector: { app: "api" } }));
    await bed.startOperator();
    await waitFor(async () => (await slicesOf("web")).length > 0 && (await slicesOf("api")).length > 0, {
      what: "slices for both Services",
    });

    await bed.cluster.remove("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
    await waitFor(async () => (await slicesOf("web")).length === 0, { what: "web's slices to be removed" });
    expect((await slicesOf("api")).length).toBeGreaterThan(0);
  });

  it("collects slices of a policy deleted while the operator was down", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aPod("web-a", bed.cluster.namespace));
    await bed.farm.serve(await podIP(bed.cluster, "web-a"));
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace));
    await bed.startOperator();
    await waitFor(async () => (await slicesOf("web")).length > 0, { what: "slices for web" });
    await bed.stopOperator();

    await bed.cluster.remove("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
    await bed.startOperator();
    await waitFor(async () => (await slicesOf("web")).length === 0, { what: "the orphaned slices to be collected" });
  });
});
