// Which cluster the conformance scenarios run against: the project's API test server (default), or
// with HEALTHPROBE_TEST_CLUSTER=real the real control plane built from Go modules (hack/control-plane).
// The scenarios only ever see a kubeconfig per user.
import { startControlPlane } from "../../hack/control-plane/control-plane.js";
import { startApiServer, type ApiServerOptions } from "../../hack/apiserver/index.js";
import type { KubeconfigSource } from "../../hack/apiserver/test-kit.js";
import { clusterKind, type ClusterKind } from "../support/cluster-kind.js";

export { clusterKind, type ClusterKind } from "../support/cluster-kind.js";

export interface ConformanceCluster extends KubeconfigSource {
  kind: ClusterKind;
  stop(): Promise<void>;
}

/** A fresh cluster of the selected kind; the options apply to the API test server only. */
export async function startConformanceCluster(testServerOptions: ApiServerOptions = {}): Promise<ConformanceCluster> {
  if (clusterKind === "control-plane") {
    const cp = await startControlPlane();
    return { kind: clusterKind, kubeconfig: (user) => cp.kubeconfig(user), stop: () => cp.stop() };
  }
  const server = await startApiServer(testServerOptions);
  return { kind: clusterKind, kubeconfig: (user) => server.kubeconfig(user), stop: () => server.stop() };
}
