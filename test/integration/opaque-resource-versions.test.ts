// The operator treats resourceVersions as opaque: against an API server that issues non-numeric
// ones, not ordered as strings either, it drains and restores a pod, keeps its own writes apart
// from a lagging cache, and a restart against right slices and status writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { requestsBy } from "../apiserver/index.js";
import { PodFarm } from "../support/pod-farm.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness, type TestCluster } from "./support/cluster.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";
import { servedPods } from "./support/queries.js";
import { closeBed, openBed } from "./support/test-bed.js";

const PODS = ["web-a", "web-b", "web-c"];

let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeAll(async () => {
  ({ cluster, farm } = await openBed({ opaqueResourceVersions: true }));
});

afterAll(async () => {
  await closeBed({ cluster, farm }, [operator]);
});

async function status(): Promise<Record<string, any> | undefined> {
  return (await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
}

describe("opaque resourceVersions", () => {
  it("drain, restore and a quiet restart work when resourceVersions are neither numbers nor ordered strings", async () => {
    await cluster.create(aService("web", cluster.namespace));
    const ips = await servedPods(cluster, farm, PODS);
    await cluster.create(aPolicy("web", cluster.namespace, { periodSeconds: 1, failureThreshold: 1, maxUnhealthyPercent: 50 }));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await status())?.healthy === PODS.length, { what: "all pods Healthy" });

    farm.failing(ips.get("web-b")!);
    await waitFor(async () => (await endpointReadiness(cluster, "web")).get("web-b") === false, { what: "web-b drained" });
    farm.healthy(ips.get("web-b")!);
    await waitFor(async () => (await endpointReadiness(cluster, "web")).get("web-b") === true, { what: "web-b restored" });
    await waitFor(async () => (await status())?.healthy === PODS.length && (await status())?.drained === 0, { what: "status caught up" });

    const slices = await cluster.list("discovery.k8s.io/v1", "EndpointSlice", cluster.namespace, "kubernetes.io/service-name=web");
    expect(slices.map((s) => s.metadata?.resourceVersion)).toEqual([expect.stringMatching(/^rv-[0-9a-z]+$/)]);
    const writes = requestsBy(cluster.server.requestLog, { user: "operator", writes: true }).filter((e) => e.code === 409);
    expect(writes).toEqual([]);

    await operator.stop();
    const from = cluster.server.requestLog.length;
    operator = await startTestOperator(cluster.server, [], { user: "restarted" });
    await waitFor(() => {
      const t = operator!.health.debugTargets();
      return t.length === PODS.length && t.every((x) => x.consecutiveSuccesses >= 3);
    }, { timeoutMs: 15_000, what: "the restarted operator to probe every pod three times" });
    const restartWrites = requestsBy(cluster.server.requestLog.slice(from), { user: "restarted", writes: true });
    expect(restartWrites.map((e) => `${e.verb} ${e.resource}/${e.subresource}`)).toEqual([]);
  }, 60_000);
});
