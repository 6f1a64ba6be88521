#!/usr/bin/env bash
# The conformance and e2e suites on the real control plane (kube-apiserver, etcd and
# kube-controller-manager from Go modules). It needs Go (to build the binaries once), root and
# iproute2 (for the pods' network namespace). Without them it says loudly which suites did not
# run, and fails only when HEALTHPROBE_REQUIRE_REAL_CLUSTER=1 (as CI sets it).
set -euo pipefail
cd "$(dirname "$0")/../.."

suites="test/conformance, test/e2e, test/fault-proxy and test/chaos on the real control plane"
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
exec env -u KUBECONFIG node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand \
  --testPathIgnorePatterns '/node_modules/' --roots test/conformance test/e2e test/fault-proxy test/chaos
