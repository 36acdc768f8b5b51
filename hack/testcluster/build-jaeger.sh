#!/usr/bin/env bash
# Builds Jaeger (github.com/jaegertracing/jaeger's cmd/jaeger, the v2 all-in-one on the
# OpenTelemetry collector) from the Go module proxy into a cache outside the repository, keyed
# by version and by the hash of the module that pins it, and prints the binary's path. The
# tracing e2e tests (test/e2e/tracing_test.go) start it on loopback ports with in-memory storage.
# A second run reuses the binary; one build at a time per cache (flock), as build.sh does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(grep -o 'github.com/jaegertracing/jaeger v[0-9.]*' "$here/jaeger/go.mod" | head -1 | cut -d' ' -f2)
sum=$(cat "$here"/jaeger/go.{mod,sum} "$here/build-jaeger.sh" | sha256sum | cut -c1-12)
cache=${KUBECTL_INFORMER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-informer}
dir="$cache/jaeger/jaeger-$version-$sum"
mkdir -p "$dir"
export GOFLAGS=-mod=mod GOWORK=off
if command -v flock >/dev/null; then
  exec 9>"$dir/.lock"
  flock 9
fi
if [ ! -x "$dir/jaeger" ]; then
  echo "building jaeger $version (several minutes on a cold cache)..." >&2
  (cd "$here/jaeger" && go build -trimpath -ldflags "-s -w" -o "$dir/jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger)
  mv "$dir/jaeger.tmp" "$dir/jaeger"
fi
echo "$dir/jaeger"
