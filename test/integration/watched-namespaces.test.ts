// --namespace with a list: the operator's caches are one informer per listed namespace, merged,
// so policies in every listed namespace are reconciled (those created before it started and after)
// and a policy in a namespace not listed is never seen: the operator makes no request there, and
// lists and watches no namespaced kind cluster-wide (only nodes, which are cluster-scoped).
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { requestsBy } from "../apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService, type TestCluster } from "./support/cluster.js";
import { PodFarm } from "../support/pod-farm.js";
import { closeBed, openBed } from "./support/test-bed.js";
import { startTestOperator, type TestOperator } from "./support/operator.js";

const HPP = "healthprobe.io/v1alpha1";
const WATCHED = ["shop", "payments"];
const UNWATCHED = "elsewhere";

let cluster: TestCluster;
let farm: PodFarm;
let operator: TestOperator | undefined;

beforeAll(async () => {
  ({ cluster, farm } = await openBed({ namespace: WATCHED[0] }));
});

afterAll(async () => {
  if (process.env.DUMP_LOGS) for (const ns of WATCHED) console.log(ns, JSON.stringify((await cluster.get(HPP, "HealthProbePolicy", "web", ns))?.status));
  await closeBed({ cluster, farm }, [operator]);
});

async function aServedPolicy(namespace: string, name: string): Promise<void> {
  await cluster.create(aService(name, namespace));
  await cluster.create(aPod(`${name}-a`, namespace, { labels: { app: name } }));
  const ip = await waitFor(async () => (await cluster.get("v1", "Pod", `${name}-a`, namespace))?.status?.podIP as string | undefined, { what: `pod ${namespace}/${name}-a to get an IP` });
  await farm.serve(ip);
  await cluster.create(aPolicy(name, namespace, { serviceName: name, selector: { app: name } }));
}

const healthy = async (namespace: string, name: string) => (await cluster.get(HPP, "HealthProbePolicy", name, namespace))?.status?.healthy === 1;

describe("an operator watching a list of namespaces", () => {
  it("reconciles the policies of every listed namespace and never looks at another", async () => {
    for (const ns of [WATCHED[1]!, UNWATCHED]) await cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    for (const ns of [...WATCHED, UNWATCHED]) await aServedPolicy(ns, "web");
    operator = await startTestOperator(cluster.server, [`--namespace=${WATCHED.join(",")}`]);
    for (const ns of WATCHED) await waitFor(() => healthy(ns, "web"), { what: `web in ${ns} reconciled` });

    // One created once the caches run comes through its namespace's watch.
    await aServedPolicy(WATCHED[1]!, "api");
    await waitFor(() => healthy(WATCHED[1]!, "api"), { what: "api in payments reconciled" });
    for (const ns of WATCHED) expect((await cluster.list("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=web")).length).toBeGreaterThan(0);

    const requests = requestsBy(cluster.server.requestLog, { user: "operator" }).filter((e) => e.resource);
    expect(requests.filter((e) => e.namespace === UNWATCHED)).toEqual([]);
    const clusterWide = new Set(requests.filter((e) => e.namespace === "").map((e) => `${e.verb} ${e.resource}`));
    expect([...clusterWide].sort()).toEqual(["list nodes", "watch nodes"]);
    const listed = new Set(requests.filter((e) => e.verb === "list" && e.resource === "pods").map((e) => e.namespace));
    expect([...listed].sort()).toEqual([...WATCHED].sort());

    const other = await cluster.get(HPP, "HealthProbePolicy", "web", UNWATCHED);
    expect(other?.status).toBeUndefined();
    expect(await cluster.list("discovery.k8s.io/v1", "EndpointSlice", UNWATCHED, "kubernetes.io/service-name=web")).toEqual([]);
  }, 60_000);
});
