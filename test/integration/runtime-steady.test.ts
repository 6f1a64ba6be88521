// Steady state: once policies, pods and slices have settled, a minute of the operator's time
// passes with no API writes from it other than renewing its leader Lease. The operator runs on a
// scaled clock, so its minute (probe periods, Lease renewals, status spacing) is half a real one.
import { describe, expect, it } from "@jest/globals";
import { ScaledClock } from "../../operator/src/runtime/testing/scaled-clock.js";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { servedPods } from "./support/queries.js";

const QUIET_MS = 60_000;
const RETRY_MS = 2_000;
/** Operator time runs twice as fast as real time (a scaled clock): its minute passes in thirty seconds. */
const RATE = 2;
/** A renewal each retry period is 30 in the minute; the first and the last may fall outside it. */
const MIN_RENEWALS = 25;
/** Five pods probed each 1 s period is 300 in the minute; at least 50 periods of them, allowing for late timers. */
const MIN_PROBES = 5 * 50;

const bed = useBed({ per: "file" });

const POD_IPS: string[] = [];
/** Probes seen by every pod of both policies. */
async function probes(): Promise<number> {
  let n = 0;
  for (const ip of POD_IPS) n += await bed.farm.hitsOf(ip);
  return n;
}

async function statusOf(name: string): Promise<Record<string, any> | undefined> {
  return (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", name))?.status;
}

describe("steady state", () => {
  it("makes no writes but Lease renewals for a minute once everything has settled", async () => {
    // Two policies, one with a drained pod, so the settled state is not trivially "all ready".
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await bed.cluster.create(aService("api", bed.cluster.namespace));
    const web = await servedPods(bed, ["web-a", "web-b", "web-c"], { app: "web" });
    const api = await servedPods(bed, ["api-a", "api-b"], { app: "api" });
    POD_IPS.push(...web.values(), ...api.values());
    bed.farm.failing(web.get("web-c")!);
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, { serviceName: "web", selector: { app: "web" }, failureThreshold: 1 }),
    );
    await bed.cluster.create(
      aPolicy("api", bed.cluster.namespace, { serviceName: "api", selector: { app: "api" }, failureThreshold: 1 }),
    );
    const clock = new ScaledClock(RATE);
    await bed.startOperator(["--leader-elect"], {
      clock,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: RETRY_MS,
    });

    await waitFor(
      async () => {
        const [w, a] = [await statusOf("web"), await statusOf("api")];
        const rw = await endpointReadiness(bed.cluster, "web");
        const ra = await endpointReadiness(bed.cluster, "api");
        return (
          w?.healthy === 2 &&
          w.drained === 1 &&
          a?.healthy === 2 &&
          rw.get("web-c") === false &&
          rw.get("web-a") === true &&
          rw.get("web-b") === true &&
          ra.get("api-a") === true &&
          ra.get("api-b") === true
        );
      },
      { timeoutMs: 15_000, what: "both policies settled, web-c drained" },
    );

    // Read again each time: on the real control plane the log is the audit log as read then.
    const log = () => bed.cluster.server.requestLog;
    const from = log().length;
    const startedAt = clock.now();
    const probesBefore = await probes();
    const renewals = () =>
      requestsBy(log().slice(from), { user: "operator", writes: true }).filter((e) => e.resource === "leases");
    // The scenario is time passing: a minute of the operator's time, in which it really worked: it
    // renewed its Lease every retry period and probed five pods each period, and still leads.
    await waitFor(
      async () =>
        clock.now() - startedAt >= QUIET_MS &&
        renewals().length >= MIN_RENEWALS &&
        (await probes()) - probesBefore >= MIN_PROBES &&
        bed.operator.isLeader(),
      {
        timeoutMs: QUIET_MS / RATE + 30_000,
        what: `a minute of operator time with ${MIN_RENEWALS} Lease renewals and ${MIN_PROBES} probes, still leading`,
      },
    );

    const writes = requestsBy(log().slice(from), { user: "operator", writes: true });
    const others = writes.filter((e) => e.resource !== "leases");
    console.log(
      `steady state over ${clock.now() - startedAt} ms of operator time: ${others.length} writes besides ${renewals().length} Lease renewals; ${(await probes()) - probesBefore} probes`,
    );
    expect(others.map((e) => `${e.verb} ${e.resource}/${e.subresource} ${e.name}`)).toEqual([]);
    expect(renewals().every((e) => e.code === 200)).toBe(true);
    // And it is still right.
    expect((await endpointReadiness(bed.cluster, "web")).get("web-c")).toBe(false);
  }, 120_000);
});
