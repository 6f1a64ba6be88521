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

# Keep in step with go.mod's k8s.io/kubernetes version.
version=v1.37.2
major=1
minor=37

if ! command -v go >/dev/null 2>&1; then
  echo "control plane: Go is not installed, so kube-apiserver, kube-controller-manager and etcd cannot be built (install Go 1.26: https://go.dev/dl/)" >&2
  exit 3
fi

key="$(cat "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-16)"
cache="${HEALTHPROBE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/healthprobe-operator/control-plane}"
out="$cache/$key"
bins=(kube-apiserver kube-controller-manager etcd)

built() {
  for b in "${bins[@]}"; do [ -x "$out/bin/$b" ] || return 1; done
}

if built; then
  echo "control plane: reusing $out/bin" >&2
  echo "$out/bin"
  exit 0
fi

mkdir -p "$cache"
# One build per key at a time: a second caller waits here, then finds the binaries.
exec 9>"$cache/$key.lock"
flock 9
if built; then
  echo "$out/bin"
  exit 0
fi

tmp="$(mktemp -d "$cache/$key.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "control plane: building k8s.io/kubernetes $version and etcd into $out (a cold build takes a long time)" >&2
start=$(date +%s)
ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"
(
  cd "$here"
  GOWORK=off CGO_ENABLED=0 nice -n 10 go build -ldflags "$ldflags" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    go.etcd.io/etcd/server/v3
)
# go names the binary of a module root ending in /v3 after the element before it.
if [ -x "$tmp/server" ]; then mv "$tmp/server" "$tmp/etcd"; fi
if [ -x "$tmp/v3" ]; then mv "$tmp/v3" "$tmp/etcd"; fi
mkdir -p "$out"
rm -rf "$out/bin"
mv "$tmp" "$out/bin"
trap - EXIT
echo "control plane: built in $(( $(date +%s) - start )) s" >&2
echo "$out/bin"
