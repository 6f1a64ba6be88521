#!/usr/bin/env bash
# Builds the operator image from the repository's Dockerfile without a Docker engine or a registry:
# the two base images are made from the local Node runtime (hack/images: node-build, node-runtime)
# and handed to buildah as oci-archive: images; the result is written as an OCI archive that
# `kind load image-archive`, `ctr images import` or `skopeo copy` take.
#   bash hack/images/build-operator.sh [image]     (default: the Makefile's IMAGE)
# Prints the archive's path. Storage stays under .scratch/images (make clean removes it).
# A built archive is kept in ${HEALTHPROBE_IMAGE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/healthprobe-operator/images}
# under a hash of everything the build reads, so an unchanged tree is not built again (the last 3
# are kept); HEALTHPROBE_IMAGE_CACHE=off builds every time.
set -euo pipefail
cd "$(dirname "$0")/../.."
image=${1:?usage: build-operator.sh <image>, e.g. ghcr.io/example/healthprobe-operator:0.1.0}
command -v buildah >/dev/null || { echo "build-operator.sh: buildah is not on PATH (Debian: apt-get install buildah)" >&2; exit 1; }
scratch=$PWD/.scratch/images
mkdir -p "$scratch"

# The key: the tag, the Node runtime the base images are made of, their recipe, the Dockerfile and
# every file of its context (the .dockerignore's list), by content, so uncommitted changes count.
image_key() {
  {
    printf '%s\n' "$image" "$(node --version)" "$(uname -m)"
    sha256sum "$(command -v node)"
    find Dockerfile .dockerignore package.json package-lock.json .npmrc tsconfig.json tsconfig.build.json \
      hack/install-tools.mjs hack/images -maxdepth 1 -type f -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 sha256sum
    find operator/src -type f ! -name '*.test.ts' ! -path '*/testdata/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-16
}
cache_dir=${HEALTHPROBE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/healthprobe-operator/images}
cached=""
if [ "$cache_dir" != off ]; then
  cached="$cache_dir/operator-$(image_key).tar"
  if [ -f "$cached" ]; then
    echo "build-operator.sh: unchanged since the archive $cached was built; using it" >&2
    cp "$cached" "$scratch/operator.tar.tmp" && mv "$scratch/operator.tar.tmp" "$scratch/operator.tar"
    echo "$scratch/operator.tar"
    exit 0
  fi
fi
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
if [ -n "$cached" ]; then
  mkdir -p "$cache_dir"
  # Written beside and renamed, so a reader never sees half an archive; only the newest 3 stay.
  cp "$scratch/operator.tar" "$cached.tmp" && mv "$cached.tmp" "$cached"
  ls -1t "$cache_dir"/operator-*.tar 2>/dev/null | tail -n +4 | xargs -r rm -f
fi
echo "$scratch/operator.tar"
