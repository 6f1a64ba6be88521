#!/usr/bin/env bash
# Compiles the Kubernetes core/v1 and apps/v1 .proto definitions (from the Go module cache, at the
# versions hack/control-plane/go.mod pins) into test/apiserver/kubernetes.binpb, the descriptor set
# the API test server decodes protobuf request bodies with. Needs Go and protoc (Debian: protobuf-compiler).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/hack/control-plane"
api="$(GOWORK=off go list -m -f '{{.Dir}}' k8s.io/api)"
machinery="$(GOWORK=off go list -m -f '{{.Dir}}' k8s.io/apimachinery)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/k8s.io"
ln -s "$api" "$tree/k8s.io/api"
ln -s "$machinery" "$tree/k8s.io/apimachinery"
cd "$tree"
protoc -I . --include_imports --descriptor_set_out="$root/test/apiserver/kubernetes.binpb" \
  k8s.io/api/core/v1/generated.proto k8s.io/api/apps/v1/generated.proto 2> >(grep -v "is unused" >&2)
echo "wrote test/apiserver/kubernetes.binpb"
