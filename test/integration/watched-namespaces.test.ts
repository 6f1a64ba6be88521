// --namespace with a list: the operator's caches are one informer per listed namespace, merged,
// so policies in every listed namespace are reconciled (those created before it started and after)
// and a policy in a namespace not listed is never seen: the operator makes no request there, and
// lists and watches no namespaced kind cluster-wide (only nodes, which are cluster-scoped).
import { describe, expect, it } from "@jest/globals";
import { requestsBy } from "../../hack/apiserver/index.js";
import { waitFor } from "../support/wait-for.js";
import { aPod, aPolicy, aService } from "./support/cluster.js";
import { useBed } from "./support/test-bed.js";
import { livePods } from "./support/queries.js";

const HPP = "healthprobe.io/v1alpha1";
const WATCHED = ["shop", "payments"];
const UNWATCHED = "elsewhere";

const bed = useBed({
  per: "file",
  namespace: WATCHED[0],
  dump: ({ cluster }) =>
    Promise.all(
      WATCHED.map(async (ns) => ({ [ns]: (await cluster.get(HPP, "HealthProbePolicy", "web", ns))?.status })),
    ),
});

async function aServedPolicy(namespace: string, name: string): Promise<void> {
  await bed.cluster.create(aService(name, namespace));
  await bed.cluster.create(aPod(`${name}-a`, namespace, { labels: { app: name } }));
  await livePods(bed, 1, { app: name, namespace });
  await bed.cluster.create(aPolicy(name, namespace, { serviceName: name, selector: { app: name } }));
}

const healthy = async (namespace: string, name: string) =>
  (await bed.cluster.get(HPP, "HealthProbePolicy", name, namespace))?.status?.healthy === 1;

describe("an operator watching a list of namespaces", () => {
  it("reconciles the policies of every listed namespace and never looks at another", async () => {
    for (const ns of [WATCHED[1]!, UNWATCHED])
      await bed.cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    for (const ns of [...WATCHED, UNWATCHED]) await aServedPolicy(ns, "web");
    await bed.startOperator([`--namespace=${WATCHED.join(",")}`]);
    for (const ns of WATCHED) await waitFor(() => healthy(ns, "web"), { what: `web in ${ns} reconciled` });

    // One created once the caches run comes through its namespace's watch.
    await aServedPolicy(WATCHED[1]!, "api");
    await waitFor(() => healthy(WATCHED[1]!, "api"), { what: "api in payments reconciled" });
    for (const ns of WATCHED)
      expect(
        (await bed.cluster.list("discovery.k8s.io/v1", "EndpointSlice", ns, "kubernetes.io/service-name=web")).length,
      ).toBeGreaterThan(0);

    const requests = requestsBy(bed.cluster.server.requestLog, { user: "operator" }).filter((e) => e.resource);
    expect(requests.filter((e) => e.namespace === UNWATCHED)).toEqual([]);
    const clusterWide = new Set(requests.filter((e) => e.namespace === "").map((e) => `${e.verb} ${e.resource}`));
    expect([...clusterWide].sort()).toEqual(["list nodes", "watch nodes"]);
    const listed = new Set(requests.filter((e) => e.verb === "list" && e.resource === "pods").map((e) => e.namespace));
    expect([...listed].sort()).toEqual([...WATCHED].sort());

    const other = await bed.cluster.get(HPP, "HealthProbePolicy", "web", UNWATCHED);
    expect(other?.status).toBeUndefined();
    expect(
      await bed.cluster.list("discovery.k8s.io/v1", "EndpointSlice", UNWATCHED, "kubernetes.io/service-name=web"),
    ).toEqual([]);
  }, 60_000);
});
