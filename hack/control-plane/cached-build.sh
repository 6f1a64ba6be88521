# Sourced by build.sh and build-node.sh: builds a set of binaries once per cache key into
# $cache/<key>/bin and prints that directory on stdout.
#
#   HEALTHPROBE_CONTROL_PLANE_CACHE  cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/healthprobe-operator/control-plane)

cache="${HEALTHPROBE_CONTROL_PLANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/healthprobe-operator/control-plane}"

# require_go WHO WHAT: exit status 3 when Go is missing, so callers can say what did not run.
require_go() {
  if ! command -v go >/dev/null 2>&1; then
    echo "$1: Go is not installed, so $2 cannot be built (install Go 1.26: https://go.dev/dl/)" >&2
    exit 3
  fi
}

# k8s_ldflags VERSION MAJOR MINOR: what `kubectl version` and the components report.
k8s_ldflags() {
  echo "-X k8s.io/component-base/version.gitVersion=$1 -X k8s.io/component-base/version.gitMajor=$2 -X k8s.io/component-base/version.gitMinor=$3"
}

# cached_build WHO KEY BUILD_FN BIN...: BUILD_FN fills the directory it is given; the binaries
# appear under $cache/KEY/bin only once all of them are built.
cached_build() {
  local who=$1 key=$2 build_fn=$3
  shift 3
  local out="$cache/$key" b
  cached_build_done() {
    for b in "$@"; do [ -x "$out/bin/$b" ] || return 1; done
  }
  if cached_build_done "$@"; then
    echo "$who: reusing $out/bin" >&2
    echo "$out/bin"
    return 0
  fi
  mkdir -p "$cache"
  # One build per key at a time: a second caller waits here, then finds the binaries.
  exec 9>"$cache/$key.lock"
  flock 9
  if cached_build_done "$@"; then
    echo "$out/bin"
    return 0
  fi
  # Global, so the EXIT trap still sees it after this function returns.
  cached_build_tmp="$(mktemp -d "$cache/$key.tmp.XXXXXX")"
  trap 'rm -rf "$cached_build_tmp"' EXIT
  echo "$who: building into $out (a cold build takes a long time)" >&2
  local start
  start=$(date +%s)
  "$build_fn" "$cached_build_tmp"
  mkdir -p "$out"
  rm -rf "$out/bin"
  mv "$cached_build_tmp" "$out/bin"
  trap - EXIT
  echo "$who: built in $(( $(date +%s) - start )) s" >&2
  echo "$out/bin"
}
