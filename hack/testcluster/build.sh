#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy into a cache outside the repository,
# keyed by version and by the hash of the modules that pin them, and prints the directory.
# A second run (or a fresh clone on the same machine) reuses the binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
k8s_version=v1.37.1
etcd_version=$(grep -o 'go.etcd.io/etcd/server/v3 v[0-9.]*' "$here/etcd/go.mod" | head -1 | cut -d' ' -f2)
sum=$(cat "$here"/kube-apiserver/go.{mod,sum} "$here"/kube-apiserver/main.go "$here"/etcd/go.{mod,sum} "$here"/etcd/main.go | sha256sum | cut -c1-12)
cache=${KUBECTL_INFORMER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-informer}
dir="$cache/testcluster/k8s-$k8s_version-etcd-$etcd_version-$sum"
mkdir -p "$dir"
export GOFLAGS=-mod=mod GOWORK=off
if [ ! -x "$dir/kube-apiserver" ]; then
  echo "building kube-apiserver $k8s_version (a few minutes on a cold cache)..." >&2
  major=${k8s_version#v}; major=${major%%.*}
  minor=${k8s_version#v*.}; minor=${minor%%.*}
  (cd "$here/kube-apiserver" && go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$k8s_version \
      -X k8s.io/component-base/version.gitMajor=$major \
      -X k8s.io/component-base/version.gitMinor=$minor" \
      -o "$dir/kube-apiserver.tmp" . && mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver")
fi
if [ ! -x "$dir/etcd" ]; then
  echo "building etcd $etcd_version..." >&2
  (cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$dir/etcd.tmp" . && mv "$dir/etcd.tmp" "$dir/etcd")
fi
# envtest looks for kubectl beside the servers; link the machine's one.
if [ ! -e "$dir/kubectl" ] && command -v kubectl >/dev/null; then ln -sf "$(command -v kubectl)" "$dir/kubectl"; fi
echo "$dir"
