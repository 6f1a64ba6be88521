#!/usr/bin/env bash
# Builds the operator image from the repository's Dockerfile without a Docker engine or a registry:
# the two base images are made from the local Node runtime (hack/images: node-build, node-runtime)
# and handed to buildah as oci-archive: images; the result is written as an OCI archive that
# `kind load image-archive`, `ctr images import` or `skopeo copy` take.
#   bash hack/images/build-operator.sh [image]     (default: the Makefile's IMAGE)
# Prints the archive's path. Storage stays under .scratch/images (make clean removes it).
set -euo pipefail
cd "$(dirname "$0")/../.."
image=${1:?usage: build-operator.sh <image>, e.g. ghcr.io/example/healthprobe-operator:0.1.0}
command -v buildah >/dev/null || { echo "build-operator.sh: buildah is not on PATH (Debian: apt-get install buildah)" >&2; exit 1; }
scratch=$PWD/.scratch/images
npx tsx hack/images/main.ts build node-build node-runtime >&2
storage=(--root "$scratch/buildah/root" --runroot "$scratch/buildah/runroot" --storage-driver vfs)
# The archive is the product: the storage keeps nothing between builds (vfs copies every layer whole),
# not even a failed build's working containers.
trap 'buildah "${storage[@]}" rm --all >/dev/null 2>&1; buildah "${storage[@]}" rmi --all --force >/dev/null 2>&1 || true' EXIT
buildah "${storage[@]}" bud --isolation chroot --layers=false \
  --build-arg "NODE_IMAGE=oci-archive:$scratch/node-build.tar" \
  --build-arg "RUNTIME_IMAGE=oci-archive:$scratch/node-runtime.tar" \
  -t "$image" . >&2
rm -f "$scratch/operator.tar"
buildah "${storage[@]}" push "$image" "oci-archive:$scratch/operator.tar:$image" >&2
echo "$scratch/operator.tar"
