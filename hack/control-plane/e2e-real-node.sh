#!/usr/bin/env bash
# The e2e suite (test/e2e) on the real node: kube-apiserver, etcd, kube-controller-manager,
# kube-scheduler, containerd, a real kubelet and kube-proxy, with the operator's image built once
# from the Dockerfile and installed by helm in each suite file's own node. Needs Go, root, iproute2,
# runc, ctr, iptables, buildah, nsenter and the CNI plugins; says what is missing and exits 1 without them.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=""
command -v go >/dev/null 2>&1 || missing="Go"
[ "$(id -u)" = 0 ] || missing="${missing:+$missing, }root"
for cmd in ip runc ctr iptables buildah nsenter; do
  command -v "$cmd" >/dev/null 2>&1 || missing="${missing:+$missing, }$cmd"
done
[ -x /usr/lib/cni/bridge ] || missing="${missing:+$missing, }the CNI bridge plugin"
if [ -n "$missing" ]; then
  echo "## NOT RUN: test/e2e on the real node, because missing: $missing" >&2
  exit 1
fi

start=$(date +%s)
export HEALTHPROBE_CONTROL_PLANE_BIN="$(bash hack/control-plane/build.sh)"
export HEALTHPROBE_NODE_BIN="$(bash hack/control-plane/build-node.sh)"
image="$(node -e 'const y=require("yaml"),f=require("fs");const v=y.parse(f.readFileSync("charts/healthprobe-operator/values.yaml","utf8")),c=y.parse(f.readFileSync("charts/healthprobe-operator/Chart.yaml","utf8"));console.log(v.image.repository+":"+c.appVersion)')"
export HEALTHPROBE_OPERATOR_ARCHIVE="$(bash hack/images/build-operator.sh "$image")"
echo "binaries and the operator's image: $(( $(date +%s) - start )) s" >&2
# One file at a time: each starts its own node, and two cores are shared.
exec env -u KUBECONFIG HEALTHPROBE_TEST_CLUSTER=real-node \
  node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand \
  --testPathIgnorePatterns '/node_modules/' --roots test/e2e
