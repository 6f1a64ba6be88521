#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from the Go module beside this script
# into a cache directory outside the repository, keyed by the hash of go.mod and go.sum, and
# prints that bin directory on stdout. A second run with the same module reuses the binaries.
#
#   HEALTHPROBE_CONTROL_PLANE_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/healthprobe-operator/control-plane)
#
# Exit status 3 means Go is not installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/cached-build.sh"

# Keep in step with go.mod's k8s.io/kubernetes version.
version=v1.37.2
major=1
minor=37

require_go "control plane" "kube-apiserver, kube-controller-manager and etcd"

build_control_plane() {
  (
    cd "$here"
    GOWORK=off CGO_ENABLED=0 nice -n 10 go build -ldflags "$(k8s_ldflags "$version" "$major" "$minor")" -o "$1/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      go.etcd.io/etcd/server/v3
  )
  # go names the binary of a module root ending in /v3 after the element before it.
  if [ -x "$1/server" ]; then mv "$1/server" "$1/etcd"; fi
  if [ -x "$1/v3" ]; then mv "$1/v3" "$1/etcd"; fi
}

key="$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-16)"
cached_build "control plane" "$key" build_control_plane kube-apiserver kube-controller-manager etcd
