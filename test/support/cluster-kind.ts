// Which cluster the Kubernetes-facing suites run against: the project's API test server (default),
// or with HEALTHPROBE_TEST_CLUSTER=real the real control plane built from Go modules (hack/control-plane).
export type ClusterKind = "test-server" | "control-plane";

export const clusterKind: ClusterKind =
  process.env.HEALTHPROBE_TEST_CLUSTER === "real" ? "control-plane" : "test-server";
