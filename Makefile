# kubectl-informer: build, test, demo. Tools are pinned here and installed into ./bin.
SHELL := /usr/bin/env bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG := github.com/kubectl-informer/kubectl-informer
LDFLAGS := -s -w -X $(PKG)/internal/cmd.Version=$(VERSION) -X $(PKG)/internal/cmd.Commit=$(COMMIT) -X $(PKG)/internal/cmd.Date=$(DATE)
GOLANGCI_LINT_VERSION ?= v2.15.0
# v2.15.0: the newest goreleaser v2 that builds with Go 1.26 from the module proxy here (later ones
# need Go 1.27, or a module the proxy does not serve). It is built once, in a few minutes.
GORELEASER_VERSION ?= v2.15.0
GORELEASER := $(BIN)/goreleaser-$(GORELEASER_VERSION)

# One build configuration for everything make compiles but the race-detecting unit tests: the
# release's (.goreleaser.yaml: cgo off, -trimpath). go vet, the e2e builds, mutations, fuzzing,
# the background prebuild and goreleaser then share one compile of every dependency instead of
# two, and every test binary links with Go's own linker instead of the host's (cgo on, a
# dependency's import of package plugin asks for external linking: 5.1 s against 2.5 s for
# internal/cmd's tests, each of the 221 mutations links one). docs/testcluster.md, "Where the
# time goes".
export CGO_ENABLED ?= 0
export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)

.PHONY: all help build install test check unit mutate fuzz e2e testcluster krew chromium tmux demo lint vet tidy clean

all: build

# The targets a contributor needs, in the order they need them: `make help` prints each with
# its ## comment (and fails when one has none).
HELP_TARGETS := build install demo check unit vet lint e2e test mutate fuzz bench dist tidy clean
help: ## these targets, in the order a contributor needs them
	@for t in $(HELP_TARGETS); do \
	  line=$$(grep -m1 -E "^$$t:.*## " $(firstword $(MAKEFILE_LIST))) || { echo "make help: target $$t has no ## comment" >&2; exit 1; }; \
	  printf '  %-8s %s\n' "$$t" "$${line#*## }"; \
	done

build: ## the plugin binary, ./bin/kubectl-informer
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-informer ./cmd/kubectl-informer

install: ## install kubectl-informer into GOBIN (or GOPATH/bin), so kubectl finds it on PATH
	$(GO) install -trimpath -ldflags "$(LDFLAGS)" ./cmd/kubectl-informer

krew: ## build the pinned krew from the module proxy into the cache (once); test/dist installs the release with it
	@hack/krew/build.sh >/dev/null

testcluster: ## build kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok from the module proxy into the cache (once)
	@hack/testcluster/build.sh >/dev/null

tmux: ## tmux for the top command's terminal test (apt-get install tmux when none is on PATH)
	@hack/need.sh tmux "the top command's terminal test" tmux >/dev/null

chromium: ## headless Chromium for the report's browser test (apt-get install chromium when none is on PATH)
	@hack/need.sh chromium "the report's browser test" chromium chromium-browser google-chrome >/dev/null

# After vet and unit, the end-to-end tests run beside mutations and beside fuzzing (those two at
# once, at a lower priority, their output held and printed when they end): the e2e phase mostly
# waits on API servers and controllers, which left the CPU mostly idle for its ten minutes in CI,
# and mutations and fuzzing are mostly compiling and computing. `make vet unit mutate fuzz e2e`
# runs the same one after the other.
test: vet unit ## everything CI runs
	@GO="$(GO)" MAKE="$(MAKE)" hack/test-beside.sh

check: ## the edit-test loop: gofmt, vet and unit tests of the packages changed since main (minutes on a warm machine)
	@GO="$(GO)" hack/check.sh

vet: ## gofmt and go vet of every package
	@test -z "$$(gofmt -l cmd pkg internal test hack)" || { echo "gofmt needed:"; gofmt -l cmd pkg internal test hack; exit 1; }
	$(GO) vet ./...

# -vet=off: make vet (before it in make test) runs every vet check; go test would run a subset again.
# The race detector needs cgo; -linkmode=internal keeps Go's own linker all the same (a dependency
# imports package plugin, which would otherwise ask for the host's: 9.1 s against 4.9 s for
# internal/cmd's tests; no test loads a plugin).
unit: ## unit tests, with the race detector (internal/ and hack/ included: report, bench, dist, mutate)
	CGO_ENABLED=1 $(GO) test -race -vet=off -count=1 -ldflags=-linkmode=internal ./pkg/... ./internal/... ./cmd/... ./hack/...

# Each lie the plugin must never tell (hack/mutate/mutations.go), given to go test as an overlay:
# the unit test named for it must fail. Two at once (hack/mutate -j). First the named tests must
# pass unmutated; make test skips that step (MUTATE_FLAGS=-baseline=false, hack/test-beside.sh):
# its unit tests, every one of them, have just passed on the same tree.
MUTATE_FLAGS ?=
mutate: ## fail if a unit test no longer catches one of the lies in hack/mutate/mutations.go
	$(GO) run ./hack/mutate $(MUTATE_FLAGS)

# FUZZTIME is a count of inputs, not a duration: see docs/reliability.md, "Bad input, fuzzed".
FUZZTIME ?= 20000x
# Every fuzz target, as package:Target; each runs for FUZZTIME (seeds always run in `unit`).
FUZZ_TARGETS := ./pkg/discovery:FuzzResolve ./pkg/watch:FuzzCompactJSON ./pkg/watch:FuzzCompactProtobuf ./pkg/watch:FuzzPack ./pkg/printer:FuzzPrint ./pkg/recording:FuzzDecodeLine ./pkg/diff:FuzzDiff ./internal/scrape:FuzzParse ./internal/analysis:FuzzFieldPaths ./internal/ctrllog:FuzzParse ./pkg/replay:FuzzReader

fuzz: ## a short run of every fuzz target
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $${t#*:} ($$(echo $$t | cut -d: -f1), $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

# -p 1: test/e2e and test/testenv start control planes of their own; two at once on two cores ran
# into their time limits.
# Built-in resources come over protobuf by default; E2E_JSON_WIRE, the tests most sensitive to
# the informer's data path, run a second time with everything on JSON (KUBECTL_INFORMER_WIRE
# gives --wire its default). The whole suite on JSON: KUBECTL_INFORMER_WIRE=json make e2e.
# hack/e2e-names.sh fails the pass when a name here is no test (renamed): the list cannot rot.
# -parallel: the tests marked t.Parallel (docs/testcluster.md, "Parallel tests") run together
# after the others, E2E_PARALLEL at once: they mostly wait on their own control planes and
# controllers, so four at once overlap those waits on two cores.
# test/dist (a release by goreleaser, this machine's platform; the other four type-checked) comes
# last: on a new machine .ci/run compiles it in the background (hack/ci-prebuild.sh) while
# everything else runs.
E2E_PARALLEL ?= 4
E2E_JSON_WIRE = TestInitialList|TestResync|TestRelist|TestChurnAcrossRestart|TestDropManagedFields|TestMetadataOnly|TestWatchDeploymentsJSON|TestReplayRelistIntoInformer|TestRealRollout|TestDisplayManagersAndChanges
e2e: testcluster chromium tmux ## end-to-end tests: the built plugin as `kubectl informer` on a real API server and real controllers; test/dist: a release by goreleaser
	GO=$(GO) hack/e2e-names.sh '$(E2E_JSON_WIRE)' ./test/e2e/
	KUBEBUILDER_ASSETS=$$(hack/testcluster/build.sh) $(GO) test -p 1 -parallel $(E2E_PARALLEL) -count=1 -timeout 40m ./test/e2e/ ./test/testenv/
	KUBEBUILDER_ASSETS=$$(hack/testcluster/build.sh) KUBECTL_INFORMER_WIRE=json $(GO) test -parallel $(E2E_PARALLEL) -count=1 -timeout 15m -run '^($(E2E_JSON_WIRE))$$' ./test/e2e/
	@$(MAKE) --no-print-directory dist-test

# .ci/run builds goreleaser and the release platforms in the background (hack/ci-prebuild.sh);
# dist-test waits for them (await-prebuild) before its prerequisites build anything a second time.
.PHONY: dist-test await-prebuild
# DIST_PLATFORMS=host (make test's): the release built for this machine's platform, installed by
# krew, and the other four type-checked from source (test/dist/typecheck_test.go); all: the five
# built, as a release is (docs/release.md: `make dist-test DIST_PLATFORMS=all` before one).
DIST_PLATFORMS ?= host
dist-test: await-prebuild $(GORELEASER) krew ## test/dist: a release by goreleaser with .goreleaser.yaml, installed, run and uninstalled by krew
	DIST_PLATFORMS=$(DIST_PLATFORMS) GORELEASER=$(GORELEASER) KREW=$$(hack/krew/build.sh) $(GO) test -count=1 -timeout 30m ./test/dist/

await-prebuild:
	@hack/await-prebuild.sh

# A flake hunt (docs/reliability.md, "Waits, and the soak"): the e2e suite SOAK_N times, the last
# run beside a neighbour burning every core; prints each test's pass rate, fails below 100%.
# SOAK_RUN selects tests (go test -run). Each run's go test -json is kept; the path is printed.
SOAK_N ?= 5
SOAK_RUN ?= .
.PHONY: e2e-soak
e2e-soak: testcluster chromium ## the e2e suite SOAK_N times (one beside a CPU-burning neighbour): each test's pass rate
	KUBEBUILDER_ASSETS=$$(hack/testcluster/build.sh) GO="$(GO)" $(GO) run ./hack/soak -n $(SOAK_N) -parallel $(E2E_PARALLEL) -run '$(value SOAK_RUN)'

demo: testcluster ## the demo: a local control plane (controllers, scheduler, kwok nodes), widget-operator, a story, and `kubectl informer watch`
	KUBEBUILDER_ASSETS=$$(hack/testcluster/build.sh) $(GO) run ./hack/demo

.PHONY: bench
bench: testcluster ## plugin vs kubectl get -w vs a minimal informer vs the wire limit on a local API server (~5 min); writes docs/bench-results.md; the controller-log and audit-log parsers' lines/s per format; the controller-log join's at 500,000 lines (a file, and live at 100,000 lines/s)
	KUBEBUILDER_ASSETS=$$(hack/testcluster/build.sh) GO="$(GO)" $(GO) run ./hack/bench -write $(BENCH_FLAGS)
	$(GO) test -run '^$$' -bench '^(BenchmarkParse|BenchmarkJoin)$$' -benchmem ./internal/ctrllog/ ./internal/audit/

# `make bench BENCH_FLAGS='-workload top ...'` runs the same through make bench.
TOP_OBJECTS ?= 100000
.PHONY: bench-top
bench-top: testcluster ## kubectl informer top over TOP_OBJECTS (100,000) objects in 20 CRDs vs a --metadata-only watch (the floor): first ranking, peak RSS; writes docs/bench-results.md
	KUBEBUILDER_ASSETS=$$(hack/testcluster/build.sh) GO="$(GO)" $(GO) run ./hack/bench -workload top -objects $(TOP_OBJECTS) -write $(BENCH_FLAGS)

.PHONY: dist goreleaser
# COMMIT and DATE are passed on only when given (make dist VERSION=v0.1.0 COMMIT=abc DATE=...);
# otherwise hack/dist.sh stamps git HEAD (with -dirty) and HEAD's commit time, so archives are
# reproducible.
DIST_STAMP = $(if $(filter command line environment,$(origin COMMIT)),COMMIT="$(COMMIT)") \
	$(if $(filter command line environment,$(origin DATE)),DATE="$(DATE)")
dist: $(GORELEASER) ## release archives for 5 platforms, checksums.txt and krew/informer.yaml in ./dist (goreleaser, .goreleaser.yaml), copied to ./krew.yaml: make dist VERSION=vX.Y.Z
	@VERSION="$(VERSION)" GORELEASER=$(GORELEASER) $(DIST_STAMP) hack/dist.sh
	@cp dist/krew/informer.yaml krew.yaml && echo "krew.yaml: the manifest of $(VERSION), from dist/krew/informer.yaml"

# The release krew.yaml describes (its spec.version): `make krew.yaml` writes it again from a
# release of HEAD, after a change to .goreleaser.yaml. test/dist fails when the two drift.
KREW_VERSION = $(shell sed -n 's/^  version: //p' krew.yaml 2>/dev/null)
.PHONY: krew.yaml
krew.yaml: ## regenerate ./krew.yaml (the plugin manifest at the top) for its own version, from goreleaser's output
	@$(MAKE) --no-print-directory dist VERSION=$(KREW_VERSION)

goreleaser: $(GORELEASER) ## install the pinned goreleaser into ./bin

$(GORELEASER):
	@mkdir -p $(BIN) && tmp=$$(mktemp -d) && GOBIN=$$tmp $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION) && mv $$tmp/goreleaser $@ && rmdir $$tmp

lint: $(BIN)/golangci-lint ## golangci-lint (pinned, installed into ./bin) on every package
	$(BIN)/golangci-lint run ./...

$(BIN)/golangci-lint:
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

tidy: ## go mod tidy
	$(GO) mod tidy

clean: ## remove ./bin and ./dist
	rm -rf $(BIN) dist
