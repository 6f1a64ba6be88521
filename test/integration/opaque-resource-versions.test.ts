// The operator treats resourceVersions as opaque: against an API server that issues non-numeric
// ones, not ordered as strings either, it drains and restores a pod, keeps its own writes apart
// from a lagging cache, and a restart against right slices and status writes nothing.
import { expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { servedPods } from "./support/queries.js";
import { describeOnTestServer, useBed } from "./support/test-bed.js";

const PODS = ["web-a", "web-b", "web-c"];

const bed = useBed({ opaqueResourceVersions: true, per: "file" });

async function status(): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
}

// Test server only: it rewrites its own resourceVersions; kube-apiserver's are etcd revisions.
describeOnTestServer("opaque resourceVersions", () => {
  it("drain, restore and a quiet restart work when resourceVersions are neither numbers nor ordered strings", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, PODS);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, { periodSeconds: 1, failureThreshold: 1, maxUnhealthyPercent: 50 }),
    );
    await bed.startOperator();
    await waitFor(async () => (await status())?.healthy === PODS.length, { what: "all pods Healthy" });

    bed.farm.failing(ips.get("web-b")!);
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-b") === false, {
      what: "web-b drained",
    });
    bed.farm.healthy(ips.get("web-b")!);
    await waitFor(async () => (await endpointReadiness(bed.cluster, "web")).get("web-b") === true, {
      what: "web-b restored",
    });
    await waitFor(async () => (await status())?.healthy === PODS.length && (await status())?.drained === 0, {
      what: "status caught up",
    });

    const slices = await bed.cluster.list(
      "discovery.k8s.io/v1",
      "EndpointSlice",
      bed.cluster.namespace,
      "kubernetes.io/service-name=web",
    );
    expect(slices.map((s) => s.metadata?.resourceVersion)).toEqual([expect.stringMatching(/^rv-[0-9a-z]+$/)]);
    const writes = requestsBy(bed.cluster.server.requestLog, { user: "operator", writes: true }).filter(
      (e) => e.code === 409,
    );
    expect(writes).toEqual([]);

    await bed.stopOperator();
    const from = bed.cluster.server.requestLog.length;
    await bed.startOperator([], { user: "restarted" });
    await waitFor(
      () => {
        const t = bed.operator.health.debugTargets();
        return t.length === PODS.length && t.every((x) => x.consecutiveSuccesses >= 3);
      },
      { timeoutMs: 15_000, what: "the restarted operator to probe every pod three times" },
    );
    const restartWrites = requestsBy(bed.cluster.server.requestLog.slice(from), { user: "restarted", writes: true });
    expect(restartWrites.map((e) => `${e.verb} ${e.resource}/${e.subresource}`)).toEqual([]);
  }, 60_000);
});
