// What integration tests read back from a test cluster: pods, policy status, the operator's
// calls as the server logged them, and the operator-wide ledger.
import { requestsBy } from "../../apiserver/index.js";
import { waitFor } from "../../support/wait-for.js";
import { aPod, podIP, type Obj, type TestCluster } from "./cluster.js";
import type { PodFarm } from "../../support/pod-farm.js";

const HPP = "healthprobe.io/v1alpha1";

/** Creates bare pods with these names and labels, serves each at its IP once it has one, and returns the IPs by name. */
export async function servedPods(cluster: TestCluster, farm: PodFarm, names: readonly string[], labels: Record<string, string> = { app: "web" }): Promise<Map<string, string>> {
  const ips = new Map<string, string>();
  for (const name of names) await cluster.create(aPod(name, cluster.namespace, { labels }));
  for (const name of names) {
    ips.set(name, await podIP(cluster, name));
    await farm.serve(ips.get(name)!);
  }
  return ips;
}

/** The live (not terminating) pods of an app once there are `n` with IPs, each served by the farm, by name. */
export async function livePods(cluster: TestCluster, farm: PodFarm, n: number, app = "web", timeoutMs?: number): Promise<Obj[]> {
  const pods = await waitFor(async () => {
    const list = (await cluster.list("v1", "Pod", cluster.namespace, `app=${app}`)).filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP);
    return list.length === n ? list : undefined;
  }, { ...(timeoutMs !== undefined ? { timeoutMs } : {}), what: `${n} running ${app} pods` });
  for (const p of pods) await farm.serve(p.status.podIP);
  return pods.sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}

export async function policyStatus(cluster: TestCluster, policy = "web"): Promise<Record<string, any> | undefined> {
  return (await cluster.get(HPP, "HealthProbePolicy", policy))?.status;
}

export function conditionOf(status: Record<string, any> | undefined, type: string): Record<string, any> | undefined {
  return status?.conditions?.find((c: { type: string }) => c.type === type);
}

/** Eviction POSTs by the operator's user, optionally for one pod or with one response code. */
export function evictionsOf(cluster: TestCluster, opts: { pod?: string; code?: number } = {}) {
  return requestsBy(cluster.server.requestLog, { user: "operator", resource: "pods", subresource: "eviction" }).filter(
    (e) => (opts.pod === undefined || e.name === opts.pod) && (opts.code === undefined || e.code === opts.code),
  );
}

export async function operatorLedger(cluster: TestCluster): Promise<Array<Record<string, string>>> {
  const cm = await cluster.get("v1", "ConfigMap", "healthprobe-operator-ledger", "healthprobe-system");
  return JSON.parse(cm?.data?.ledger ?? "[]");
}
