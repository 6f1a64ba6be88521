// The scale benchmark on the API test server in this process: pods on a loopback /16 of the
// run's own, answered by one pod server on this host; the operator's writes from the server's
// request log.
import { isWrite } from "../../../hack/apiserver/index.js";
import { kubeConfigFor, startTestServerCluster as startCluster } from "../../integration/support/cluster.js";
import { runningPods, waitForRunningPods, type PodView } from "../pods-running.js";
import { startPodServerProcess } from "./pod-server-process.js";
import {
  createScaleObjects,
  type OperatorWrite,
  type PolicyStatus,
  type ScaleCluster,
  type ScaleClusterOptions,
} from "./scale-cluster.js";
import { createAll, type ScaleShape } from "./scale-objects.js";

const POLICIES = { group: "healthprobe.io", version: "v1alpha1", resource: "healthprobepolicies" };
const LEASES = { group: "coordination.k8s.io", version: "v1", resource: "leases" };
/** operator, or operator-<k> for one of several replicas. */
const isOperator = (user: string) => user === "operator" || user.startsWith("operator-");

export async function startTestServerCluster(opts: ScaleClusterOptions): Promise<ScaleCluster> {
  // A /16 of its own (second octet from the process) beside the /24s the test suites use.
  const podCidr = `127.${50 + (process.pid % 50)}.0.0/16`;
  if (opts.pods > 65_000) throw new Error(`--pods: ${opts.pods}: at most 65000 fit the benchmark's pod range`);
  const podServer = await startPodServerProcess(podCidr);
  const cluster = await startCluster({
    podCidr,
    namespace: opts.namespace,
    controllers: false,
    watchHistory: 5000,
  }).catch(async (err: Error) => {
    await podServer.close();
    throw err;
  });
  const server = cluster.server;
  for (const name of opts.namespaces ?? [])
    if (name !== opts.namespace) await cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  // More than one namespace: pods are waited for and listed across all of them.
  const podNamespace = (opts.namespaces?.length ?? 0) > 1 ? undefined : opts.namespace;
  return {
    kind: "testserver",
    writesFrom: "request log",
    podServer,
    createObjects: (shape: ScaleShape, progress: (line: string) => void): Promise<number> =>
      createScaleObjects(
        shape,
        (path, bodies) =>
          createAll(
            server.url,
            "admin",
            bodies.map((body) => ({ path, body })),
          ),
        async () => void (await waitForRunningPods(server, podNamespace, shape.pods, 60_000 + shape.pods * 20)),
        progress,
      ),
    runningPods: (): PodView[] => runningPods(server, podNamespace),
    writeOperatorKubeconfig: (path, user = "operator") => server.writeKubeconfig(path, user),
    watchKubeConfig: () => kubeConfigFor(server, "bench-watch"),
    operatorWrites: async (): Promise<OperatorWrite[]> =>
      server.requestLog
        .filter((e) => isOperator(e.user) && isWrite(e))
        .map((e) => ({
          time: e.time,
          verb: e.verb,
          resource: e.subresource ? `${e.resource}/${e.subresource}` : e.resource,
          name: e.name,
          code: e.code,
          user: e.user,
        })),
    // Read in place: copying every policy with its status once a second took a fifth of the server's CPU while statuses settled.
    policyStatuses: async (): Promise<PolicyStatus[]> =>
      server.store.map(POLICIES, undefined, (p) => ({
        name: p.metadata.name,
        namespace: p.metadata.namespace,
        resourceVersion: p.metadata.resourceVersion,
        status: p.status,
      })),
    shardMarkers: () =>
      new Map(
        server.store
          .map(LEASES, "healthprobe-system", (l) =>
            l.metadata.labels?.["healthprobe.io/shard-kind"] === "marker"
              ? [
                  l.metadata.annotations?.["healthprobe.io/shard-namespace"] ?? "",
                  (l.spec?.holderIdentity as string) ?? "",
                ]
              : undefined,
          )
          .filter((x): x is [string, string] => x !== undefined),
      ),
    async stop() {
      await podServer.close();
      await cluster.stop();
    },
  };
}
