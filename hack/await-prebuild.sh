#!/usr/bin/env bash
# Wait for .ci/run's background builds (hack/ci-prebuild.sh) before `make dist-test` builds anything:
# a no-op unless KUBECTL_INFORMER_PREBUILD_LOCK names their lock file.
set -euo pipefail
lock="${KUBECTL_INFORMER_PREBUILD_LOCK:-}"
[[ -n "$lock" && -e "$lock" ]] || exit 0
start=$(date +%s)
exec 8>>"$lock"
flock 8
echo "dist-test: waited $(($(date +%s) - start)) s for the background builds (hack/ci-prebuild.sh)"
