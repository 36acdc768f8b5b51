#!/usr/bin/env bash
# Builds Karpenter's kwok provider (sigs.k8s.io/karpenter/kwok: Karpenter's core controllers with
# a cloud provider that makes kwok Nodes instead of instances) from the Go module proxy into a
# cache outside the repository, keyed by version and by the hash of the module that pins it, and
# prints the directory:
#   karpenter-kwok   the controller (controller-runtime, zap JSON logs as Karpenter ships them)
#   crds/*.yaml      its CRDs as its module ships them for the kwok provider (NodePool,
#                    NodeClaim, NodeOverlay, CapacityBuffer, KWOKNodeClass), read from the module
#                    cache, never copied into this repository
# test/e2e's Karpenter test (karpenter_test.go) runs it against the test control plane. A second
# run reuses the build; one build at a time per cache (flock), as build.sh does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(grep -o 'sigs.k8s.io/karpenter v[0-9.]*' "$here/karpenter/go.mod" | head -1 | cut -d' ' -f2)
sum=$(cat "$here"/karpenter/go.{mod,sum} "$here/build-karpenter.sh" | sha256sum | cut -c1-12)
cache=${KUBECTL_INFORMER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-informer}
dir="$cache/karpenter/karpenter-$version-$sum"
mkdir -p "$dir"
export GOFLAGS=-mod=mod GOWORK=off
if command -v flock >/dev/null; then
  exec 9>"$dir/.lock"
  flock 9
fi
if [ ! -x "$dir/karpenter-kwok" ]; then
  echo "building karpenter (kwok provider) $version (several minutes on a cold cache)..." >&2
  (cd "$here/karpenter" && go build -trimpath -ldflags "-s -w" -o "$dir/karpenter-kwok.tmp" sigs.k8s.io/karpenter/kwok)
  mv "$dir/karpenter-kwok.tmp" "$dir/karpenter-kwok"
fi
if [ ! -s "$dir/crds/karpenter.kwok.sh_kwoknodeclasses.yaml" ]; then
  mod=$(cd "$here/karpenter" && go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
  rm -rf "$dir/crds.tmp" && mkdir -p "$dir/crds.tmp"
  # The kwok chart's CRDs (its NodePool also allows the karpenter.kwok.sh labels) and the
  # provider's own KWOKNodeClass.
  cp "$mod"/kwok/charts/crds/*.yaml "$mod"/kwok/apis/crds/*.yaml "$dir/crds.tmp/"
  chmod u+w "$dir"/crds.tmp/*.yaml
  rm -rf "$dir/crds" && mv "$dir/crds.tmp" "$dir/crds"
fi
echo "$dir"
