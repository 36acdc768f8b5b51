#!/usr/bin/env bash
# Builds krew (sigs.k8s.io/krew, pinned with its dependencies in ./go.mod and ./go.sum) from the Go
# module proxy into a cache outside the repository, keyed by version and by the hash of the files
# that pin it, and prints the path of the binary, named kubectl-krew as kubectl's plugin lookup
# wants it. test/dist installs the release with it (`kubectl krew install --manifest --archive`,
# offline). A second run (or a fresh clone on the same machine) reuses the binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(grep -o 'sigs.k8s.io/krew v[0-9.]*' "$here/go.mod" | head -1 | cut -d' ' -f2)
sum=$(cat "$here"/go.{mod,sum} "$here/build.sh" | sha256sum | cut -c1-12)
cache=${KUBECTL_INFORMER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-informer}
dir="$cache/krew/krew-$version-$sum"
mkdir -p "$dir"
export GOFLAGS=-mod=mod GOWORK=off
# One build at a time per cache: .ci/run's background build and make dist-test's own call.
if command -v flock >/dev/null; then
  exec 9>"$dir/.lock"
  flock 9
fi
if [ ! -x "$dir/kubectl-krew" ]; then
  echo "building krew $version..." >&2
  (cd "$here" && go build -trimpath -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$version" \
    -o "$dir/kubectl-krew.tmp" sigs.k8s.io/krew/cmd/krew)
  mv "$dir/kubectl-krew.tmp" "$dir/kubectl-krew"
fi
echo "$dir/kubectl-krew"
