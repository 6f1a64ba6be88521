// Steady state: once policies, pods and slices have settled, a minute passes with no API
// writes from the operator other than renewing its leader Lease.
import { describe, expect, it } from "@jest/globals";
import { requestsBy } from "../apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { servedPods } from "./support/queries.js";

const QUIET_MS = 60_000;

const bed = useBed({ per: "file" });

async function statusOf(name: string): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", name))?.status;
}

describe("steady state", () => {
  it("makes no writes but Lease renewals for a minute once everything has settled", async () => {
    // Two policies, one with a drained pod, so the settled state is not trivially "all ready".
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aService("api", bed.cluster.namespace));
    const web = await servedPods(bed, ["web-a", "web-b", "web-c"], { app: "web" });
    await servedPods(bed, ["api-a", "api-b"], { app: "api" });
    bed.farm.failing(web.get("web-c")!);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { serviceName: "web", selector: { app: "web" }, failureThreshold: 1 }));
    await bed.cluster.create(aPolicy("api", bed.cluster.namespace, { serviceName: "api", selector: { app: "api" }, failureThreshold: 1 }));
    await bed.startOperator(["--leader-elect"], { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });

    await waitFor(async () => {
      const [w, a] = [await statusOf("web"), await statusOf("api")];
      const rw = await endpointReadiness(bed.cluster, "web");
      const ra = await endpointReadiness(bed.cluster, "api");
      return (
        w?.healthy === 2 && w.drained === 1 && a?.healthy === 2 &&
        rw.get("web-c") === false && rw.get("web-a") === true && rw.get("web-b") === true &&
        ra.get("api-a") === true && ra.get("api-b") === true
      );
    }, { timeoutMs: 15_000, what: "both policies settled, web-c drained" });

    const log = bed.cluster.server.requestLog;
    const from = log.length;
    const startedAt = Date.now();
    const probesBefore = [...bed.farm.hits.values()].reduce((a, b) => a + b, 0);
    // The scenario is time passing: wait for a minute of it, checking that the operator keeps leading.
    await waitFor(() => Date.now() - startedAt >= QUIET_MS && bed.operator.isLeader(), { timeoutMs: QUIET_MS + 10_000, intervalMs: 500, what: "a quiet minute" });

    const window = log.slice(from);
    const writes = requestsBy(window, { user: "operator", writes: true });
    const renewals = writes.filter((e) => e.resource === "leases");
    const others = writes.filter((e) => e.resource !== "leases");
    const probes = [...bed.farm.hits.values()].reduce((a, b) => a + b, 0) - probesBefore;
    console.log(`steady state over ${Date.now() - startedAt} ms: ${others.length} writes besides ${renewals.length} Lease renewals; ${probes} probes`);
    expect(others.map((e) => `${e.verb} ${e.resource}/${e.subresource} ${e.name}`)).toEqual([]);
    // The minute was real: the operator renewed its Lease every retry period and kept probing five pods each second.
    expect(renewals.length).toBeGreaterThanOrEqual(25);
    expect(renewals.every((e) => e.code === 200)).toBe(true);
    expect(probes).toBeGreaterThanOrEqual(5 * 50);
    // And it is still right.
    expect((await endpointReadiness(bed.cluster, "web")).get("web-c")).toBe(false);
  }, 90_000);
});
