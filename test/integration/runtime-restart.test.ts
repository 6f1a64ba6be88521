// A restart (or a new leader) seeded from status drains exactly the pods the replica before it
// drained, with the same reasons, even when several pods turned Unhealthy within one second —
// status keeps unhealthySince in whole seconds, so the order of drains must not depend on more.
import { describe, expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { servedPods } from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

const PODS = ["web-a", "web-b", "web-c", "web-d", "web-e", "web-f", "web-g", "web-h"];
/** Five fail at once; maxUnhealthyPercent 50 of 8 drains four, so one is kept in rotation by the cap. */
const FAILING = ["web-b", "web-c", "web-e", "web-f", "web-h"];

const bed = useBed({ per: "file" });

async function snapshot(): Promise<{
  status: Record<string, any>;
  readiness: Array<[string, boolean]>;
  slices: unknown[];
}> {
  const status = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status ?? {};
  const slices = (
    await bed.cluster.list(
      "discovery.k8s.io/v1",
      "EndpointSlice",
      bed.cluster.namespace,
      "kubernetes.io/service-name=web",
    )
  ).map((s) => ({ name: s.metadata?.name, resourceVersion: s.metadata?.resourceVersion }));
  return { status, readiness: [...(await endpointReadiness(bed.cluster, "web"))].sort(), slices };
}

describe("restart consistency", () => {
  it("drains the same pods with the same status after a restart when several turned Unhealthy in one second", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, PODS);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, { periodSeconds: 1, failureThreshold: 1, maxUnhealthyPercent: 50 }),
    );
    await bed.startOperator();
    await waitFor(
      async () =>
        (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status?.healthy === PODS.length,
      { what: "all pods Healthy" },
    );

    // Fail them right after a second starts: each turns Unhealthy at its next probe, within that second
    // (on a loaded machine one may slip into the next; the test then checks a weaker case, still correctly).
    await waitFor(() => Date.now() % 1000 < 20, { intervalMs: 1, what: "the start of a second" });
    for (const n of FAILING) bed.farm.failing(ips.get(n)!);
    await waitFor(
      async () => {
        const st = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
        const r = await endpointReadiness(bed.cluster, "web");
        // At rest includes the shadow report: kubelet-Ready but Unhealthy is reported one period after the verdict.
        const reported = (st?.pods ?? []).filter(
          (p: { disagreesWithKubelet?: unknown }) => p.disagreesWithKubelet,
        ).length;
        return (
          st?.unhealthy === FAILING.length &&
          st.drained === 4 &&
          [...r.values()].filter((ready) => !ready).length === 4 &&
          reported === FAILING.length
        );
      },
      { what: "five Unhealthy, four drained, five reported as disagreeing with kubelet" },
    );
    const before = await snapshot();
    const seconds = new Set(
      before.status.pods
        .filter((p: { state: string }) => p.state === "Unhealthy")
        .map((p: { unhealthySince: string }) => p.unhealthySince),
    );
    console.log(`five pods turned Unhealthy within ${seconds.size} distinct second(s)`);

    await bed.stopOperator();
    const from = bed.cluster.server.requestLog.length;
    await bed.startOperator([], { user: "restarted" });
    await waitFor(
      () => {
        const t = bed.operator.health.debugTargets();
        return t.length === PODS.length && t.every((x) => x.consecutiveSuccesses + x.consecutiveFailures >= 3);
      },
      { timeoutMs: 15_000, what: "the restarted operator to probe every pod three times" },
    );

    expect(await snapshot()).toEqual(before);
    const writes = requestsBy(bed.cluster.server.requestLog.slice(from), { user: "restarted", writes: true });
    expect(writes.map((e) => `${e.verb} ${e.resource}/${e.subresource}`)).toEqual([]);
  }, 60_000);
});
