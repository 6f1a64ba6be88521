#!/usr/bin/env bash
# The integration suites (test/integration) on the real control plane: kube-apiserver, etcd and
# kube-controller-manager from Go modules, pods in a network namespace of the run's own, and
# kube-apiserver's audit log read as the request log. Tests of what only the API test server can do
# (its injected faults, pod logs, resourceVersions, its kubelet stand-in's ways) are skipped, each
# with its reason. Needs what test-real.sh needs for the control plane: Go, root and iproute2.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=""
command -v go >/dev/null 2>&1 || missing="Go is not installed"
command -v ip >/dev/null 2>&1 || missing="${missing:+$missing; }iproute2 (ip) is not installed"
[ "$(id -u)" = 0 ] || missing="${missing:+$missing; }not root (the pods' network namespace needs ip netns)"
if [ -n "$missing" ]; then
  echo "make integration-real: not run: $missing" >&2
  exit 1
fi

bin="$(bash hack/control-plane/build.sh)"
# One file at a time: each test starts its own control plane, and two cores are shared.
exec env -u KUBECONFIG HEALTHPROBE_TEST_CLUSTER=real HEALTHPROBE_CONTROL_PLANE_BIN="$bin" \
  node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand \
  --roots test/integration --testPathIgnorePatterns /node_modules/ "$@"
