#!/usr/bin/env bash
# Release artifacts with goreleaser (.goreleaser.yaml): VERSION=vX.Y.Z hack/dist.sh [goreleaser flags]
#
# `make dist VERSION=vX.Y.Z` runs this with the pinned goreleaser (GORELEASER). It refuses a version
# krew would (semver with a leading v) before building anything, then builds a snapshot of HEAD
# stamped with that version: five archives, checksums.txt and krew/informer.yaml in ./dist (or the
# config's dist directory). test/dist runs it for a test version and checks what it wrote.
set -euo pipefail
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-((0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$'
version="${VERSION:-}"
if [[ ! "$version" =~ $semver ]]; then
	echo "dist: VERSION \"$version\" is not a semantic version with a leading v; use e.g. make dist VERSION=v0.1.0" >&2
	exit 2
fi
goreleaser="${GORELEASER:-goreleaser}"
command -v "$goreleaser" >/dev/null || { echo "dist: $goreleaser not found; run make goreleaser" >&2; exit 2; }
# What the binaries are stamped with, and the time every file of the release carries.
if [[ -z "${COMMIT:-}" ]]; then
	COMMIT=$(git rev-parse --short HEAD)
	[[ -z "$(git status --porcelain)" ]] || COMMIT+=-dirty
fi
if [[ -z "${DATE:-}" ]]; then
	if [[ -n "${SOURCE_DATE_EPOCH:-}" ]]; then
		DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
	else
		DATE=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)
	fi
fi
SOURCE_DATE_EPOCH=$(date -u -d "$DATE" +%s) || { echo "dist: DATE \"$DATE\" is not a time" >&2; exit 2; }
export VERSION="$version" COMMIT DATE SOURCE_DATE_EPOCH
exec "$goreleaser" release --snapshot --clean "$@"
