// API faults while pods change health: a forced 410 on re-watch, dropped watches, and 30 s
// in which every request fails with 500. Afterwards the operator's slices and status are what
// a fresh operator computes from scratch.
import { expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { describeOnTestServer, useBed } from "./support/test-bed.js";
import { servedPods } from "./support/queries.js";

const OUTAGE_MS = 30_000;

const bed = useBed({ per: "file" });
const ips = new Map<string, string>();

async function givenPods(...names: string[]): Promise<void> {
  for (const [name, ip] of await servedPods(bed, names)) ips.set(name, ip);
}

interface Observed {
  readiness: Record<string, boolean>;
  counts: { targets: number; healthy: number; unhealthy: number; unknown: number; drained: number };
  pods: Record<string, { state: string; drained: boolean }>;
}

async function observe(): Promise<Observed> {
  const st = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status ?? {};
  const pods: Observed["pods"] = {};
  for (const p of [...(st.pods ?? [])].sort((a, b) => a.name.localeCompare(b.name)))
    pods[p.name] = { state: p.state, drained: p.drained === true };
  return {
    readiness: Object.fromEntries([...(await endpointReadiness(bed.cluster, "web"))].sort()),
    counts: {
      targets: st.targets,
      healthy: st.healthy,
      unhealthy: st.unhealthy,
      unknown: st.unknown,
      drained: st.drained,
    },
    pods,
  };
}

/** What the contract says for these pods and probe answers (cap: floor(targets × 50%) drained). */
function expected(healthy: string[], unhealthy: string[]): Observed {
  const all = [...healthy, ...unhealthy].sort();
  const pods: Observed["pods"] = {};
  for (const n of all)
    pods[n] = healthy.includes(n) ? { state: "Healthy", drained: false } : { state: "Unhealthy", drained: true };
  return {
    readiness: Object.fromEntries(all.map((n) => [n, healthy.includes(n)])),
    counts: {
      targets: all.length,
      healthy: healthy.length,
      unhealthy: unhealthy.length,
      unknown: 0,
      drained: unhealthy.length,
    },
    pods,
  };
}

async function converged(want: Observed, what: string, timeoutMs: number): Promise<Observed> {
  const wanted = JSON.stringify(want);
  return waitFor(
    async () => {
      const got = await observe();
      return JSON.stringify(got) === wanted ? got : undefined;
    },
    { timeoutMs, intervalMs: 200, what },
  ).catch(async (err) => {
    console.log(what, JSON.stringify(await observe()));
    throw err;
  });
}

// Test server only: 410s, dropped watches and 500s are injected faults (test/chaos runs faults on the real parts).
describeOnTestServer("API faults", () => {
  it("converges through a 410, dropped watches and 30 s of 500s to what a fresh operator computes", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    await givenPods("web-a", "web-b", "web-c", "web-d");
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, { failureThreshold: 1, successThreshold: 1, maxUnhealthyPercent: 50 }),
    );
    const first = await bed.startOperator(["--leader-elect"]);
    await converged(expected(["web-a", "web-b", "web-c", "web-d"], []), "all four Healthy and ready", 15_000);

    // 1. Every watch ends; each re-watch from its resourceVersion gets 410 Expired, so the caches relist.
    //    Meanwhile a pod fails and a new pod appears.
    const log = () => bed.cluster.server.requestLog;
    const listsBefore = requestsBy(log(), { user: "operator", verb: "list" }).length;
    bed.cluster.testServer().faults.expireNextWatch();
    bed.cluster.testServer().faults.expireWatchesBefore(bed.cluster.testServer().store.resourceVersion());
    bed.cluster.testServer().faults.dropWatches();
    bed.farm.failing(ips.get("web-a")!);
    await givenPods("web-e");
    await converged(
      expected(["web-b", "web-c", "web-d", "web-e"], ["web-a"]),
      "web-a drained and web-e admitted after the relist",
      20_000,
    );
    expect(requestsBy(log(), { user: "operator", verb: "list" }).length).toBeGreaterThan(listsBefore);
    bed.cluster.testServer().faults.clear();

    // 2. Thirty seconds in which every request fails with 500 (reads, watches, writes, Lease renewals),
    //    with the watches dropped at its start, while three pods change health.
    const outageStart = Date.now();
    bed.cluster.testServer().faults.failRate({ rate: 1, durationMs: OUTAGE_MS, code: 500 });
    bed.cluster.testServer().faults.dropWatches();
    bed.farm.healthy(ips.get("web-a")!);
    bed.farm.failing(ips.get("web-b")!);
    bed.farm.failing(ips.get("web-c")!);
    await waitFor(() => Date.now() - outageStart >= OUTAGE_MS, {
      timeoutMs: OUTAGE_MS + 5_000,
      intervalMs: 250,
      what: "the outage to end",
    });
    const failedDuring = requestsBy(log(), { user: "operator", succeeded: false }).filter(
      (e) => Date.parse(e.time) >= outageStart,
    );
    expect(failedDuring.filter((e) => e.resource === "leases").length).toBeGreaterThan(0);
    const tally = new Map<string, number>();
    for (const e of failedDuring)
      tally.set(
        `${e.verb} ${e.resource}${e.subresource ? "/" + e.subresource : ""}`,
        (tally.get(`${e.verb} ${e.resource}${e.subresource ? "/" + e.subresource : ""}`) ?? 0) + 1,
      );
    console.log(`failed during the outage: ${JSON.stringify(Object.fromEntries(tally))}`);
    // The caches tried to resume (re-watch or relist) and could not.
    expect(failedDuring.filter((e) => e.verb === "list" || e.verb === "watch").length).toBeGreaterThan(0);
    expect(
      failedDuring.filter((e) => e.resource === "endpointslices" || e.subresource === "status").length,
    ).toBeGreaterThan(0);

    const want = expected(["web-a", "web-d", "web-e"], ["web-b", "web-c"]);
    const t0 = Date.now();
    await converged(want, "the state after the outage", 45_000);
    console.log(
      `converged ${Date.now() - t0} ms after the outage ended; ${failedDuring.length} requests failed during it`,
    );
    await waitFor(() => first.isLeader(), { what: "the operator to lead again" });

    // 3. A fresh operator, started from scratch, computes the same: it finds nothing to change.
    await bed.stopOperator(first);
    const statusBefore = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
    const fresh = await bed.startOperator(["--leader-elect"], { user: "fresh" });
    const freshFrom = log().length;
    await waitFor(
      () => {
        if (!fresh.isLeader()) return false;
        const t = fresh.health.debugTargets();
        return (
          t.length === 5 &&
          t.every((x) => x.consecutiveSuccesses + x.consecutiveFailures >= 3) &&
          t.every((x) => want.pods[x.pod]?.state === x.state)
        );
      },
      { timeoutMs: 20_000, what: "the fresh operator leading, with its own probes of every pod" },
    );
    expect(await observe()).toEqual(want);
    // Down to each pod's reason and timestamps: the fresh operator's status is the one already there.
    const statusAfter = (await bed.cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
    expect(statusAfter).toEqual(statusBefore);
    const freshWrites = requestsBy(log().slice(freshFrom), { user: "fresh", writes: true }).filter(
      (e) => e.resource !== "leases",
    );
    expect(freshWrites.map((e) => `${e.verb} ${e.resource}/${e.subresource}`)).toEqual([]);
  }, 120_000);
});
