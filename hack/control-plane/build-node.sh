#!/usr/bin/env bash
# Builds kubelet, kube-proxy and kube-scheduler (the node's Deployments need it) for the real node
# mode from the Go module in node/ (the same k8s.io/kubernetes version as build.sh, but a
# go.mod/go.sum of its own, so the control plane's module and build cache key do not change), and
# containerd 2.x from the module in containerd/, into a cache directory keyed by the hash of those
# modules. A run without a node never needs them. Prints the bin directory on stdout.
#
#   HEALTHPROBE_CONTROL_PLANE_CACHE  cache root (as in build.sh)
#
# Exit status 3 means Go is not installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/cached-build.sh"

# Keep in step with node/go.mod's k8s.io/kubernetes version (and build.sh).
version=v1.37.2
major=1
minor=37

require_go "node" "kubelet, kube-proxy and containerd"

build_node() {
  (
    cd "$here/node"
    GOWORK=off CGO_ENABLED=0 nice -n 10 go build -ldflags "$(k8s_ldflags "$version" "$major" "$minor")" -o "$1/" \
      k8s.io/kubernetes/cmd/kubelet \
      k8s.io/kubernetes/cmd/kube-proxy \
      k8s.io/kubernetes/cmd/kube-scheduler
    cd "$here/containerd"
    # The tags leave out the snapshotters and features that need cgo; overlayfs stays.
    GOWORK=off CGO_ENABLED=0 nice -n 10 go build -tags "no_btrfs no_devmapper no_zfs no_aufs no_cri_dockershim" -o "$1/" \
      github.com/containerd/containerd/v2/cmd/containerd \
      github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
  )
}

key="node-$(cat "$here/node/go.mod" "$here/node/go.sum" "$here/containerd/go.mod" "$here/containerd/go.sum" | sha256sum | cut -c1-16)"
cached_build "node" "$key" build_node kubelet kube-proxy kube-scheduler containerd containerd-shim-runc-v2
