#!/usr/bin/env bash
# The conformance and e2e suites on the real control plane (kube-apiserver, etcd and
# kube-controller-manager from Go modules), then the real-node suites (a real kubelet, kube-proxy and
# containerd, and the operator's image installed by helm). It needs Go (to build the binaries once),
# root and iproute2 (for the pods' network namespace), and for the node runc, ctr, iptables, buildah
# and the CNI plugins (.ci/run installs them). Without them it says loudly which suites did not
# run, and fails only when HEALTHPROBE_REQUIRE_REAL_CLUSTER=1 (as CI sets it).
set -euo pipefail
cd "$(dirname "$0")/../.."

suites="test/conformance, test/e2e, test/fault-proxy and test/chaos on the real control plane, and test/real-node"
missing=""
command -v go >/dev/null 2>&1 || missing="Go is not installed"
command -v ip >/dev/null 2>&1 || missing="${missing:+$missing; }iproute2 (ip) is not installed"
[ "$(id -u)" = 0 ] || missing="${missing:+$missing; }not root (the pods' network namespace needs ip netns)"

if [ -n "$missing" ]; then
  {
    echo "################################################################################"
    echo "## NOT RUN: $suites"
    echo "## because: $missing"
    echo "## Only the API test server was tested."
    echo "################################################################################"
  } >&2
  [ "${HEALTHPROBE_REQUIRE_REAL_CLUSTER:-0}" = 1 ] && exit 1
  exit 0
fi

start=$(date +%s)
bin="$(bash hack/control-plane/build.sh)"
echo "control plane binaries: $bin ($(( $(date +%s) - start )) s)" >&2

export HEALTHPROBE_TEST_CLUSTER=real
export HEALTHPROBE_CONTROL_PLANE_BIN="$bin"
# One file at a time: each starts its own control plane, and two cores are shared.
env -u KUBECONFIG node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand \
  --testPathIgnorePatterns '/node_modules/' --roots test/conformance test/e2e test/fault-proxy test/chaos

# The real node: kubelet, kube-proxy, kube-scheduler and containerd 2.x (built once, like the control
# plane), the machine's runc and CNI plugins, and buildah for the operator's image (test/real-node).
node_missing=""
for cmd in runc ctr iptables buildah nsenter; do
  command -v "$cmd" >/dev/null 2>&1 || node_missing="${node_missing:+$node_missing, }$cmd"
done
[ -x /usr/lib/cni/bridge ] || node_missing="${node_missing:+$node_missing, }the CNI bridge plugin"
if [ -n "$node_missing" ]; then
  {
    echo "################################################################################"
    echo "## NOT RUN: test/real-node (the real node and the operator installed by helm on it)"
    echo "## because: not installed: $node_missing"
    echo "################################################################################"
  } >&2
  [ "${HEALTHPROBE_REQUIRE_REAL_CLUSTER:-0}" = 1 ] && exit 1
  exit 0
fi
start=$(date +%s)
node_bin="$(bash hack/control-plane/build-node.sh)"
echo "node binaries: $node_bin ($(( $(date +%s) - start )) s)" >&2
exec env -u KUBECONFIG HEALTHPROBE_TEST_NODE=1 HEALTHPROBE_NODE_BIN="$node_bin" \
  node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand \
  --testPathIgnorePatterns '/node_modules/' --roots test/real-node
