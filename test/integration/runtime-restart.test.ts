// A restart (or a new leader) seeded from status drains exactly the pods the replica before it
// drained, with the same reasons, even when several pods turned Unhealthy within one second —
// status keeps unhealthySince in whole seconds, so the order of drains must not depend on more.
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { requestsBy } from "../apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { servedPods } from "./support/queries.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

const PODS = ["web-a", "web-b", "web-c", "web-d", "web-e", "web-f", "web-g", "web-h"];
/** Five fail at once; maxUnhealthyPercent 50 of 8 drains four, so one is kept in rotation by the cap. */
const FAILING = ["web-b", "web-c", "web-e", "web-f", "web-h"];

let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeAll(async () => {
  ({ cluster, farm } = await openBed());
});

afterAll(async () => {
  await closeBed({ cluster, farm }, [operator]);
});

async function snapshot(): Promise<{ status: Record<string, any>; readiness: Array<[string, boolean]>; slices: unknown[] }> {
  const status = (await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status ?? {};
  const slices = (await cluster.list("discovery.k8s.io/v1", "EndpointSlice", cluster.namespace, "kubernetes.io/service-name=web")).map((s) => ({ name: s.metadata?.name, resourceVersion: s.metadata?.resourceVersion }));
  return { status, readiness: [...(await endpointReadiness(cluster, "web"))].sort(), slices };
}

describe("restart consistency", () => {
  it("drains the same pods with the same status after a restart when several turned Unhealthy in one second", async () => {
    await cluster.create(aService("web", cluster.namespace));
    const ips = await servedPods(cluster, farm, PODS);
    await cluster.create(aPolicy("web", cluster.namespace, { periodSeconds: 1, failureThreshold: 1, maxUnhealthyPercent: 50 }));
    operator = await startTestOperator(cluster.server);
    await waitFor(async () => (await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status?.healthy === PODS.length, { what: "all pods Healthy" });

    // Fail them right after a second starts: each turns Unhealthy at its next probe, within that second
    // (on a loaded machine one may slip into the next; the test then checks a weaker case, still correctly).
    await waitFor(() => Date.now() % 1000 < 20, { intervalMs: 1, what: "the start of a second" });
    for (const n of FAILING) farm.failing(ips.get(n)!);
    await waitFor(async () => {
      const st = (await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
      const r = await endpointReadiness(cluster, "web");
      // At rest includes the shadow report: kubelet-Ready but Unhealthy is reported one period after the verdict.
      const reported = (st?.pods ?? []).filter((p: { disagreesWithKubelet?: unknown }) => p.disagreesWithKubelet).length;
      return st?.unhealthy === FAILING.length && st.drained === 4 && [...r.values()].filter((ready) => !ready).length === 4 && reported === FAILING.length;
    }, { what: "five Unhealthy, four drained, five reported as disagreeing with kubelet" });
    const before = await snapshot();
    const seconds = new Set(before.status.pods.filter((p: { state: string }) => p.state === "Unhealthy").map((p: { unhealthySince: string }) => p.unhealthySince));
    console.log(`five pods turned Unhealthy within ${seconds.size} distinct second(s)`);

    await operator.stop();
    const from = cluster.server.requestLog.length;
    operator = await startTestOperator(cluster.server, [], { user: "restarted" });
    await waitFor(() => {
      const t = operator!.health.debugTargets();
      return t.length === PODS.length && t.every((x) => x.consecutiveSuccesses + x.consecutiveFailures >= 3);
    }, { timeoutMs: 15_000, what: "the restarted operator to probe every pod three times" });

    expect(await snapshot()).toEqual(before);
    const writes = requestsBy(cluster.server.requestLog.slice(from), { user: "restarted", writes: true });
    expect(writes.map((e) => `${e.verb} ${e.resource}/${e.subresource}`)).toEqual([]);
  }, 60_000);
});
