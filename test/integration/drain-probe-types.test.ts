import { describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness } from "./support/cluster.js";
import { podEntry, policyStatus, servedPods } from "./support/queries.js";
import { useBed } from "./support/test-bed.js";

// The latency threshold and the TCP probe type, end to end: the operator on the API test server
// with real pod servers.
const bed = useBed();

async function drainedOnly(name: string): Promise<Map<string, boolean>> {
  return waitFor(
    async () => {
      const r = await endpointReadiness(bed.cluster, "web");
      return r.get(name) === false && [...r.entries()].every(([n, ready]) => n === name || ready) ? r : undefined;
    },
    { what: `${name} drained, the others ready` },
  );
}

describe("probe types and the latency threshold", () => {
  it("drains a pod answering 200 in 800 ms when maxLatencyMilliseconds is 500", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, ["web-a", "web-b", "web-c", "web-d"]);
    // A real delay in the pod's server: the pod is slow, the test waits on state.
    bed.farm.set(ips.get("web-a")!, { status: 200, body: "ok", delayMs: 800 });
    await bed.cluster.create(
      aPolicy("web", bed.cluster.namespace, {
        periodSeconds: 2,
        timeoutSeconds: 2,
        probe: { match: { maxLatencyMilliseconds: 500 } },
      }),
    );
    await bed.startOperator();

    const readiness = await drainedOnly("web-a");
    expect(readiness.size).toBe(4);
    const st = await waitFor(
      async () => {
        const s = await policyStatus(bed.cluster);
        return podEntry(s, "web-a")?.drained ? s : undefined;
      },
      { what: "web-a drained in status" },
    );
    expect(podEntry(st, "web-a")).toMatchObject({ state: "Unhealthy", drained: true, lastResult: "slow: over 500 ms" });
    expect(st?.healthy).toBe(3);
  });

  it("drains a pod whose port refuses connections under a TCP policy, and keeps those that accept", async () => {
    await bed.cluster.create(aService("web", bed.cluster.namespace));
    const ips = await servedPods(bed, ["web-a", "web-b", "web-c"]);
    await bed.farm.stop(ips.get("web-a")!);
    await bed.cluster.create(aPolicy("web", bed.cluster.namespace, { probe: { type: "TCP", path: undefined } }));
    await bed.startOperator();

    await drainedOnly("web-a");
    const st = await waitFor(
      async () => {
        const s = await policyStatus(bed.cluster);
        return podEntry(s, "web-a")?.drained && s?.healthy === 2 ? s : undefined;
      },
      { what: "web-a drained and two Healthy in status" },
    );
    expect(podEntry(st, "web-a")).toMatchObject({ state: "Unhealthy", lastResult: "connect ECONNREFUSED" });
    // A TCP probe sends no request: the pod servers saw none.
    expect(await bed.farm.hitsOf(ips.get("web-b")!)).toBe(0);
  });
});
