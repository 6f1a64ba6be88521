#!/usr/bin/env bash
# Builds kubelet and kube-proxy for the real node mode from the Go module in node/ (the same
# k8s.io/kubernetes version as build.sh, but a go.mod/go.sum of its own, so the control plane's
# module and build cache key do not change), into a cache directory keyed by the hash of node/go.mod
# and node/go.sum. A run without a node never needs them. Prints the bin directory on stdout.
#
#   HEALTHPROBE_CONTROL_PLANE_CACHE  cache root (as in build.sh)
#
# Exit status 3 means Go is not installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# Keep in step with node/go.mod's k8s.io/kubernetes version (and build.sh).
version=v1.37.2
major=1
minor=37

if ! command -v go >/dev/null 2>&1; then
  echo "node: Go is not installed, so kubelet and kube-proxy cannot be built (install Go 1.26: https://go.dev/dl/)" >&2
  exit 3
fi

key="$(cat "$here/node/go.mod" "$here/node/go.sum" "$here/containerd/go.mod" "$here/containerd/go.sum" | sha256sum | cut -c1-16)"
cache="${HEALTHPROBE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/healthprobe-operator/control-plane}"
out="$cache/node-$key"
bins=(kubelet kube-proxy containerd containerd-shim-runc-v2)

built() {
  for b in "${bins[@]}"; do [ -x "$out/bin/$b" ] || return 1; done
}

if built; then
  echo "node: reusing $out/bin" >&2
  echo "$out/bin"
  exit 0
fi

mkdir -p "$cache"
# One build per key at a time: a second caller waits here, then finds the binaries.
exec 9>"$cache/node-$key.lock"
flock 9
if built; then
  echo "$out/bin"
  exit 0
fi

tmp="$(mktemp -d "$cache/node-$key.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "node: building kubelet, kube-proxy $version and containerd into $out (a cold build takes a long time)" >&2
start=$(date +%s)
ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"
(
  cd "$here/node"
  GOWORK=off CGO_ENABLED=0 nice -n 10 go build -ldflags "$ldflags" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-proxy
  cd "$here/containerd"
  # The tags leave out the snapshotters and features that need cgo; overlayfs stays.
  GOWORK=off CGO_ENABLED=0 nice -n 10 go build -tags "no_btrfs no_devmapper no_zfs no_aufs no_cri_dockershim" -o "$tmp/" \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
)
mkdir -p "$out"
rm -rf "$out/bin"
mv "$tmp" "$out/bin"
trap - EXIT
echo "node: built in $(( $(date +%s) - start )) s" >&2
echo "$out/bin"
