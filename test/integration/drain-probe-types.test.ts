import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPolicy, aService, endpointReadiness, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { policyStatus, servedPods } from "./support/queries.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

// The latency threshold and the TCP probe type, end to end: the operator on the API test server
// with real pod servers.
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

type StatusPod = { name: string; state: string; drained: boolean; lastResult?: string; reason: string };
const entryOf = (st: Record<string, any> | undefined, name: string) => (st?.pods as StatusPod[] | undefined)?.find((p) => p.name === name);

async function drainedOnly(name: string): Promise<Map<string, boolean>> {
  return waitFor(async () => {
    const r = await endpointReadiness(cluster, "web");
    return r.get(name) === false && [...r.entries()].every(([n, ready]) => n === name || ready) ? r : undefined;
  }, { what: `${name} drained, the others ready` });
}

describe("probe types and the latency threshold", () => {
  it("drains a pod answering 200 in 800 ms when maxLatencyMilliseconds is 500", async () => {
    await cluster.create(aService("web", cluster.namespace));
    const ips = await servedPods(cluster, farm, ["web-a", "web-b", "web-c", "web-d"]);
    // A real delay in the pod's server: the pod is slow, the test waits on state.
    farm.set(ips.get("web-a")!, { status: 200, body: "ok", delayMs: 800 });
    await cluster.create(aPolicy("web", cluster.namespace, { periodSeconds: 2, timeoutSeconds: 2, probe: { match: { maxLatencyMilliseconds: 500 } } }));
    operator = await startTestOperator(cluster.server);

    const readiness = await drainedOnly("web-a");
    expect(readiness.size).toBe(4);
    const st = await waitFor(async () => {
      const s = await policyStatus(cluster);
      return entryOf(s, "web-a")?.drained ? s : undefined;
    }, { what: "web-a drained in status" });
    expect(entryOf(st, "web-a")).toMatchObject({ state: "Unhealthy", drained: true, lastResult: "slow: over 500 ms" });
    expect(st?.healthy).toBe(3);
  });

  it("drains a pod whose port refuses connections under a TCP policy, and keeps those that accept", async () => {
    await cluster.create(aService("web", cluster.namespace));
    const ips = await servedPods(cluster, farm, ["web-a", "web-b", "web-c"]);
    await farm.stop(ips.get("web-a")!);
    await cluster.create(aPolicy("web", cluster.namespace, { probe: { type: "TCP", path: undefined } }));
    operator = await startTestOperator(cluster.server);

    await drainedOnly("web-a");
    const st = await waitFor(async () => {
      const s = await policyStatus(cluster);
      return entryOf(s, "web-a")?.drained && s?.healthy === 2 ? s : undefined;
    }, { what: "web-a drained and two Healthy in status" });
    expect(entryOf(st, "web-a")).toMatchObject({ state: "Unhealthy", lastResult: "connect ECONNREFUSED" });
    // A TCP probe sends no request: the pod servers saw none.
    expect(farm.hits.get(ips.get("web-b")!) ?? 0).toBe(0);
  });
});
