import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, endpointReadiness, podIP, startCluster, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "./support/pod-farm.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeEach(async () => {
  cluster = await startCluster();
  farm = new PodFarm();
});

afterEach(async () => {
  if (process.env.DUMP_LOGS) console.log(JSON.stringify(operator?.logs.slice(-40), null, 1));
  await operator?.stop();
  operator = undefined;
  await farm.close();
  await cluster.stop();
});

async function givenPods(names: string[]): Promise<Map<string, string>> {
  const ips = new Map<string, string>();
  for (const name of names) await cluster.create(aPod(name, cluster.namespace));
  for (const name of names) {
    const ip = await podIP(cluster, name);
    await farm.serve(ip);
    ips.set(name, ip);
  }
  return ips;
}

function readiness(cluster: TestCluster) {
  return endpointReadiness(cluster, "web");
}

async function policyStatus(): Promise<Record<string, any> | undefined> {
  return (await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web"))?.status;
}

/** Every pod probed Healthy and every endpoint ready: the settled start of each scenario. */
async function allHealthyAndReady(n: number): Promise<void> {
  await waitFor(async () => {
    const r = await readiness(cluster);
    const st = await policyStatus();
    return st?.healthy === n && r.size === n && [...r.values()].every(Boolean);
  }, { what: `all ${n} pods Healthy and ready` });
}

describe("draining", () => {
  it("drains a pod after failureThreshold failures and restores it after successThreshold successes", async () => {
    await cluster.create(aService("web", cluster.namespace));
    const ips = await givenPods(["web-a", "web-b", "web-c", "web-d"]);
    await cluster.create(aPolicy("web", cluster.namespace, { failureThreshold: 2, successThreshold: 1 }));
    operator = await startTestOperator(cluster.server);

    await allHealthyAndReady(4);

    farm.failing(ips.get("web-a")!);
    const drained = await waitFor(async () => {
      const r = await readiness(cluster);
      return r.get("web-a") === false ? r : undefined;
    }, { what: "web-a drained" });
    expect([...drained.entries()].filter(([, ready]) => ready).map(([n]) => n).sort()).toEqual(["web-b", "web-c", "web-d"]);

    const status = await waitFor(async () => {
      const p = await cluster.get("healthprobe.io/v1alpha1", "HealthProbePolicy", "web");
      return p?.status?.drained === 1 ? p.status : undefined;
    }, { what: "status to count one drained" });
    const entry = status.pods.find((p: { name: string }) => p.name === "web-a");
    expect(entry).toMatchObject({ state: "Unhealthy", drained: true, lastResult: "HTTP 503" });
    expect(entry.reason).toMatch(/drained/);

    farm.healthy(ips.get("web-a")!);
    await waitFor(async () => (await readiness(cluster)).get("web-a") === true, { what: "web-a restored" });
  });
});
