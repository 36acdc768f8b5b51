#!/usr/bin/env bash
# Builds the test control plane from the Go module proxy into a cache outside the repository,
# keyed by version and by the hash of the modules that pin them, and prints the directory:
#   kube-apiserver, kube-controller-manager, kube-scheduler  (k8s.io/kubernetes, one module)
#   etcd                                                     (go.etcd.io/etcd/server/v3)
#   kwok, kwok-stages.yaml                                   (sigs.k8s.io/kwok: nodes and pods
#                                                             without a container runtime)
# A second run (or a fresh clone on the same machine) reuses the binaries. The three builds run
# in parallel; the Kubernetes one dominates (see docs/testcluster.md for the times measured).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
k8s_version=v1.37.1
etcd_version=$(grep -o 'go.etcd.io/etcd/server/v3 v[0-9.]*' "$here/etcd/go.mod" | head -1 | cut -d' ' -f2)
kwok_version=$(grep -o 'sigs.k8s.io/kwok v[0-9.]*' "$here/kwok/go.mod" | head -1 | cut -d' ' -f2)
sum=$(cat "$here"/kubernetes/go.{mod,sum} "$here"/kubernetes/*/main.go "$here"/etcd/go.{mod,sum} "$here"/etcd/main.go \
  "$here"/kwok/go.{mod,sum} "$here/build.sh" | sha256sum | cut -c1-12)
cache=${KUBECTL_INFORMER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-informer}
dir="$cache/testcluster/k8s-$k8s_version-etcd-$etcd_version-kwok-$kwok_version-$sum"
mkdir -p "$dir"
export GOFLAGS=-mod=mod GOWORK=off
# One build at a time per cache: .ci/run starts one in the background, and make e2e's later call
# waits here for it instead of building the same binaries a second time.
if command -v flock >/dev/null; then
  exec 9>"$dir/.lock"
  flock 9
fi

k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler)
build_kubernetes() {
  local missing=()
  for b in "${k8s_bins[@]}"; do [ -x "$dir/$b" ] || missing+=("./$b"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "building ${missing[*]#./} $k8s_version (about 10 minutes on a cold cache)..." >&2
  local major=${k8s_version#v}; major=${major%%.*}
  local minor=${k8s_version#v*.}; minor=${minor%%.*}
  local tmp="$dir/.k8s.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  # One go build for the three mains: the packages they share are compiled once.
  (cd "$here/kubernetes" && go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$k8s_version \
      -X k8s.io/component-base/version.gitMajor=$major \
      -X k8s.io/component-base/version.gitMinor=$minor" \
      -o "$tmp/" "${missing[@]}")
  for b in "${missing[@]}"; do mv "$tmp/${b#./}" "$dir/${b#./}"; done
  rm -rf "$tmp"
}
build_etcd() {
  [ -x "$dir/etcd" ] && return 0
  echo "building etcd $etcd_version..." >&2
  (cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$dir/etcd.tmp" . && mv "$dir/etcd.tmp" "$dir/etcd")
}
build_kwok() {
  if [ ! -x "$dir/kwok" ]; then
    echo "building kwok $kwok_version..." >&2
    (cd "$here/kwok" && go build -trimpath -ldflags "-s -w" -o "$dir/kwok.tmp" sigs.k8s.io/kwok/cmd/kwok && mv "$dir/kwok.tmp" "$dir/kwok")
  fi
  # kwok starts only with Stage configs. Its module ships the standard ones (a node becomes
  # Ready and keeps a heartbeat; a pod on a kwok node becomes Ready, completes or is deleted);
  # they are read from the module cache, never copied into this repository.
  if [ ! -s "$dir/kwok-stages.yaml" ]; then
    local mod
    mod=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
    local s="$mod/kustomize/stage" first=1
    : >"$dir/kwok-stages.yaml.tmp"
    for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
        pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      [ $first = 1 ] || echo '---' >>"$dir/kwok-stages.yaml.tmp"
      first=0
      cat "$s/$f" >>"$dir/kwok-stages.yaml.tmp"
    done
    mv "$dir/kwok-stages.yaml.tmp" "$dir/kwok-stages.yaml"
  fi
}

pids=()
build_etcd & pids+=($!)
build_kwok & pids+=($!)
build_kubernetes & pids+=($!)
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ $failed = 0 ] || { echo "hack/testcluster/build.sh: a build failed (see above)" >&2; exit 1; }
# envtest looks for kubectl beside the servers; link the machine's one.
if [ ! -e "$dir/kubectl" ] && command -v kubectl >/dev/null; then ln -sf "$(command -v kubectl)" "$dir/kubectl"; fi
echo "$dir"
