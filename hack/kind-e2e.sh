#!/usr/bin/env bash
# End-to-end run on a real cluster: a kind cluster, the operator image built from this checkout,
# the Helm chart installed with that image, then the e2e suite (make e2e) against the cluster.
#
#   hack/kind-e2e.sh                    # everything, cluster deleted at the end
#   KEEP_CLUSTER=1 hack/kind-e2e.sh     # keep the cluster for a look afterwards
#
# Environment: KIND_CLUSTER_NAME (default healthprobe-e2e), IMAGE (default
# healthprobe-operator:e2e), RELEASE_NAMESPACE (default healthprobe-system), KIND_NODE_IMAGE.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$(pwd)"

CLUSTER_NAME="${KIND_CLUSTER_NAME:-healthprobe-e2e}"
IMAGE="${IMAGE:-healthprobe-operator:e2e}"
RELEASE="healthprobe"
RELEASE_NAMESPACE="${RELEASE_NAMESPACE:-healthprobe-system}"
KEEP_CLUSTER="${KEEP_CLUSTER:-0}"

# The project's own kubectl and helm (unpacked by npm install) when they are not on PATH.
export PATH="${PATH}:${ROOT}/.tools/bin"

missing=()
for tool in docker kind kubectl helm make node; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]} > 0)); then
  echo "kind-e2e: missing required tools: ${missing[*]}" >&2
  echo "kind-e2e: install them (docker with a running engine, kind >= 0.20, kubectl, helm >= 3.8) and retry." >&2
  exit 1
fi
if ! docker info >/dev/null 2>&1; then
  echo "kind-e2e: docker is installed but no engine answers (is the daemon running, may this user use it?)" >&2
  exit 1
fi

WORKDIR="$(mktemp -d)"
KUBECONFIG_FILE="${WORKDIR}/kubeconfig"
created_cluster=0

cleanup() {
  local status=$?
  if [[ "$created_cluster" == 1 && "$KEEP_CLUSTER" != 1 ]]; then
    echo "kind-e2e: deleting cluster ${CLUSTER_NAME}"
    kind delete cluster --name "$CLUSTER_NAME" || true
  elif [[ "$created_cluster" == 1 ]]; then
    echo "kind-e2e: keeping cluster ${CLUSTER_NAME}; kubeconfig: kind get kubeconfig --name ${CLUSTER_NAME}"
  fi
  rm -rf "$WORKDIR"
  exit "$status"
}
trap cleanup EXIT

if kind get clusters 2>/dev/null | grep -qx "$CLUSTER_NAME"; then
  echo "kind-e2e: reusing existing cluster ${CLUSTER_NAME} (it is left in place)"
else
  echo "kind-e2e: creating cluster ${CLUSTER_NAME}"
  created_cluster=1
  kind create cluster --name "$CLUSTER_NAME" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --wait 120s
fi
kind get kubeconfig --name "$CLUSTER_NAME" >"$KUBECONFIG_FILE"
export KUBECONFIG="$KUBECONFIG_FILE"

echo "kind-e2e: building ${IMAGE}"
docker build -t "$IMAGE" .
kind load docker-image "$IMAGE" --name "$CLUSTER_NAME"

echo "kind-e2e: installing the chart"
helm upgrade --install "$RELEASE" charts/healthprobe-operator \
  --namespace "$RELEASE_NAMESPACE" --create-namespace \
  --set image.repository="${IMAGE%:*}" \
  --set image.tag="${IMAGE##*:}" \
  --set image.pullPolicy=Never \
  --set logLevel=debug
kubectl -n "$RELEASE_NAMESPACE" rollout status "deployment/${RELEASE}-healthprobe-operator" --timeout=180s
helm test "$RELEASE" --namespace "$RELEASE_NAMESPACE" --timeout 120s

echo "kind-e2e: running the e2e suite"
if ! make e2e; then
  echo "kind-e2e: e2e failed; operator logs follow" >&2
  kubectl -n "$RELEASE_NAMESPACE" logs "deployment/${RELEASE}-healthprobe-operator" --all-containers --tail=200 >&2 || true
  exit 1
fi
echo "kind-e2e: passed"
