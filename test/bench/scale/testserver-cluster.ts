// The scale benchmark on the API test server in this process: pods on a loopback /16 of the
// run's own, answered by one pod server on this host; the operator's writes from the server's
// request log.
import { isWrite } from "../../apiserver/index.js";
import { kubeConfigFor, startCluster } from "../../integration/support/cluster.js";
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
        async () => void (await waitForRunningPods(server, shape.namespace, shape.pods, 60_000 + shape.pods * 20)),
        progress,
      ),
    runningPods: (): PodView[] => runningPods(server, opts.namespace),
    writeOperatorKubeconfig: (path) => server.writeKubeconfig(path, "operator"),
    watchKubeConfig: () => kubeConfigFor(server, "bench-watch"),
    operatorWrites: async (): Promise<OperatorWrite[]> =>
      server.requestLog
        .filter((e) => e.user === "operator" && isWrite(e))
        .map((e) => ({
          time: e.time,
          verb: e.verb,
          resource: e.subresource ? `${e.resource}/${e.subresource}` : e.resource,
          name: e.name,
          code: e.code,
        })),
    // Read in place: copying every policy with its status once a second took a fifth of the server's CPU while statuses settled.
    policyStatuses: async (): Promise<PolicyStatus[]> =>
      server.store.map(POLICIES, undefined, (p) => ({
        name: p.metadata.name,
        resourceVersion: p.metadata.resourceVersion,
        status: p.status,
      })),
    async stop() {
      await podServer.close();
      await cluster.stop();
    },
  };
}
