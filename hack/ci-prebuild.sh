#!/usr/bin/env bash
# The slow builds of `make e2e`, run by .ci/run in the background while vet, lint and the tests
# run: the control plane (hack/testcluster/build.sh), Jaeger (build-jaeger.sh) and Karpenter's
# kwok provider (build-karpenter.sh), the pinned krew
# (hack/krew/build.sh, for test/dist's install), the pinned goreleaser,
# and the release's compile of this machine's platform (the flags .goreleaser.yaml builds with) into
# the Go build cache. test/dist then builds its release from that cache (links and archives
# only) instead of compiling it from nothing (docs/testcluster.md).
#
#   hack/ci-prebuild.sh LOCKFILE
#
# It holds an exclusive flock on LOCKFILE from start to end, and runs at a lower priority, so
# that the foreground phases keep their cores and this work takes what they leave idle.
# `make dist-test` (test/dist, the last step of make e2e) waits for the lock first
# (hack/await-prebuild.sh, when KUBECTL_INFORMER_PREBUILD_LOCK names it), and make e2e for the
# control plane's own lock, so nothing is compiled twice at once. A failure here is not fatal: make
# runs the same steps again and shows their output.
set -uo pipefail
lock="${1:?usage: hack/ci-prebuild.sh LOCKFILE}"
cd "$(dirname "$0")/.."
exec 8>"$lock"
flock 8
renice -n 10 -p $$ >/dev/null 2>&1 || true
# The Makefile's build configuration (cgo off: Go's own linker, and the release's), so that what is
# built here is what make would build.
export CGO_ENABLED="${CGO_ENABLED:-0}"
started=$(date +%s)
say() { echo "prebuild: $* ($(($(date +%s) - started)) s)"; }

# Jaeger (the tracing e2e tests' backend) builds beside the control plane, in the background.
(if hack/testcluster/build-jaeger.sh >/dev/null; then say "jaeger built"; else say "jaeger build failed"; fi) &
jaeger=$!
if hack/testcluster/build.sh >/dev/null; then say "control plane built"; else say "control plane build failed"; fi
wait "$jaeger"
# Karpenter (the real operator of test/e2e's Karpenter test) after them: three large builds at
# once would only thrash the cores.
if hack/testcluster/build-karpenter.sh >/dev/null; then say "karpenter built"; else say "karpenter build failed"; fi
if hack/krew/build.sh >/dev/null; then say "krew built"; else say "krew build failed"; fi
if make --no-print-directory goreleaser >/dev/null; then say "goreleaser built"; else say "goreleaser build failed"; exit 0; fi

# The release's compile of this machine's platform, as goreleaser runs it (.goreleaser.yaml: cgo
# off, -trimpath; GOAMD64 and GOARM64 at goreleaser's defaults; -ldflags only change the link),
# so that test/dist's release (DIST_PLATFORMS=host) only links and archives.
if CGO_ENABLED=0 GOAMD64=v1 GOARM64=v8.0 go build -trimpath -o /dev/null ./cmd/kubectl-informer; then
	say "the release's platform compiled into the build cache"
else
	say "the release's compile failed (test/dist will build and say why)"
fi
