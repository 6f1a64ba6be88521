// What integration tests read back from a test cluster: pods, policy status, the operator's
// calls as the server logged them, the policies' ledgers and the operator-wide ledger.
import type { z } from "zod";
import type { conditionSchema, podStatusEntrySchema } from "../../../operator/src/api/policy-status-schema.js";
import { policyLedgerName } from "../../../operator/src/domain/policy-ledger.js";
import { requestsBy } from "../../../hack/apiserver/index.js";
import { waitFor } from "../../support/wait-for.js";
import { aPod, podIP, type Obj, type TestCluster } from "./cluster.js";
import type { Farm } from "../../support/pod-farm.js";

const HPP = "healthprobe.io/v1alpha1";

/** A condition as the operator writes it in a policy's status: the CRD schema's own type. */
export type PolicyCondition = z.infer<typeof conditionSchema>;

/** One pod's entry in a policy's status.pods: the CRD schema's own type. */
export type StatusPod = z.infer<typeof podStatusEntrySchema>;

/** What the pod helpers need of a bed: its cluster and its pod farm. */
export interface Served {
  cluster: TestCluster;
  farm: Farm;
}

/** Creates bare pods with these names and labels, serves each at its IP once it has one, and returns the IPs by name. */
export async function servedPods(
  { cluster, farm }: Served,
  names: readonly string[],
  labels: Record<string, string> = { app: "web" },
): Promise<Map<string, string>> {
  const ips = new Map<string, string>();
  for (const name of names) await cluster.create(aPod(name, cluster.namespace, { labels }));
  for (const name of names) {
    ips.set(name, await podIP(cluster, name));
    await farm.serve(ips.get(name)!);
  }
  return ips;
}

/** Creates this pod object as given (custom spec, annotations), serves it at its IP once it has one, and returns the IP. */
export async function servedPod({ cluster, farm }: Served, pod: Obj): Promise<string> {
  await cluster.create(pod);
  const ip = await podIP(cluster, pod.metadata?.name as string);
  await farm.serve(ip);
  return ip;
}

/** The live (not terminating) pods of an app once there are `n` with IPs, each served by the farm, by name. */
export async function livePods(
  { cluster, farm }: Served,
  n: number,
  opts: { app?: string; namespace?: string; timeoutMs?: number } = {},
): Promise<Obj[]> {
  const { app = "web", namespace = cluster.namespace } = opts;
  const pods = await waitFor(
    async () => {
      const list = (await cluster.list("v1", "Pod", namespace, `app=${app}`)).filter(
        (p) => !p.metadata?.deletionTimestamp && p.status?.podIP,
      );
      return list.length === n ? list : undefined;
    },
    {
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      what: `${n} running ${app} pods${namespace === cluster.namespace ? "" : ` in ${namespace}`}`,
    },
  );
  for (const p of pods) await farm.serve(p.status.podIP);
  return pods.sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}

/** A pod's entry in a policy's status, by name. */
export function podEntry(status: Record<string, any> | undefined, name: string): StatusPod | undefined {
  return (status?.pods as StatusPod[] | undefined)?.find((p) => p.name === name);
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

/** A policy's replacement ledger: the entries of its ledger ConfigMap (none while it has none). */
export async function policyLedger(cluster: TestCluster, policy = "web"): Promise<Array<Record<string, string>>> {
  const cm = await cluster.get("v1", "ConfigMap", policyLedgerName(policy));
  return JSON.parse(cm?.data?.ledger ?? "[]");
}

export async function operatorLedger(cluster: TestCluster): Promise<Array<Record<string, string>>> {
  const cm = await cluster.get("v1", "ConfigMap", "healthprobe-operator-ledger", "healthprobe-system");
  return JSON.parse(cm?.data?.ledger ?? "[]");
}
