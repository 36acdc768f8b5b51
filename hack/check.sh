#!/usr/bin/env bash
# make check: the edit-test loop, in minutes on a warm machine. gofmt, go vet and the unit tests
# (race detector) of the Go packages changed since BASE (default: where this branch left main,
# else HEAD), committed or not; every package when go.mod changed. The tests that need a control
# plane (test/e2e, test/testenv, test/dist) are named, not run: make e2e runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
base=${BASE:-$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD)}
changed=$( { git diff --name-only "$base"; git ls-files --others --exclude-standard; } | sort -u)
if grep -qx 'go\.mod\|go\.sum' <<<"$changed"; then
  pkgs=$($GO list ./...)
else
  dirs=$(grep '\.go$' <<<"$changed" | xargs -r -n1 dirname | sort -u)
  pkgs=""
  for d in $dirs; do
    [ -d "$d" ] || continue # removed
    # Only this module's packages (hack/testcluster and hack/krew are modules of their own).
    p=$($GO list "./$d" 2>/dev/null) || continue
    [[ $p == github.com/kubectl-informer/kubectl-informer* ]] && pkgs+="$p"$'\n'
  done
fi
cluster=$(grep -E '/test/(e2e|testenv|dist)$' <<<"$pkgs" || true)
unit=$(grep -vE '/test/(e2e|testenv|dist)$' <<<"$pkgs" | grep . || true)
if [ -z "$pkgs" ]; then
  echo "check: no Go package changed since $(git rev-parse --short "$base")"
  exit 0
fi
dirs=$(sed 's|^github.com/kubectl-informer/kubectl-informer|.|' <<<"$pkgs")
unformatted=$(gofmt -l $dirs)
[ -z "$unformatted" ] || { echo "gofmt needed:"; echo "$unformatted"; exit 1; }
echo "check: vet and unit tests of $(wc -l <<<"$pkgs" | tr -d ' ') packages changed since $(git rev-parse --short "$base")"
$GO vet $pkgs
[ -z "$unit" ] || CGO_ENABLED=1 $GO test -race -vet=off -count=1 -ldflags=-linkmode=internal $unit
if [ -n "$cluster" ]; then
  echo "check: these need a control plane; run the tests you touched with"
  echo "  KUBEBUILDER_ASSETS=\$(hack/testcluster/build.sh) go test -p 1 -count=1 -run '^TestYours\$' PACKAGE"
  echo "$cluster" | sed 's/^/  /'
fi
