#!/usr/bin/env bash
# Fails when a name in a list of tests (NAME|NAME|..., as the Makefile's E2E_JSON_WIRE) is no
# test of the package: a renamed test must not silently leave the pass that names it.
#   hack/e2e-names.sh 'TestA|TestB' ./test/e2e/
# The package's tests are listed with `go test -list` (test/e2e's TestMain starts nothing then).
set -euo pipefail
names=${1:?usage: hack/e2e-names.sh 'TestA|TestB' [package]}
pkg=${2:-./test/e2e/}
IFS='|' read -ra want <<<"$names"
for n in "${want[@]}"; do
  [[ $n =~ ^Test[A-Za-z0-9_]*$ ]] || { echo "error: \"$n\" is not a test name (the list takes plain names, NAME|NAME)" >&2; exit 1; }
done
listed=$(${GO:-go} test -list "^(${names})\$" "$pkg") || { echo "$listed" >&2; exit 1; }
missing=()
for n in "${want[@]}"; do
  grep -qx -- "$n" <<<"$listed" || missing+=("$n")
done
if ((${#missing[@]})); then
  echo "error: no test named ${missing[*]} in $pkg (renamed? update the list that names it)" >&2
  exit 1
fi
echo "${#want[@]} tests named, all in $pkg"
