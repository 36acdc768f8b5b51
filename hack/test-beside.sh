#!/usr/bin/env bash
# The rest of `make test` after vet and unit: `make e2e` in the foreground, and beside it
# `make mutate fuzz` at a lower priority (nice 10), its output held in a file and printed when it
# ends, so the two logs do not interleave. Fails if either fails; on SIGINT or SIGTERM both are
# stopped (mutate and fuzz run in a process group of their own, killed by its id).
set -uo pipefail
make="${MAKE:-make}"
log=$(mktemp)
setsid nice -n 10 "$make" --no-print-directory mutate fuzz >"$log" 2>&1 &
beside=$!
cleanup() { kill -- -"$beside" 2>/dev/null; rm -f "$log"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "make mutate fuzz: started beside make e2e (nice 10, pid $beside); its output follows e2e's"
"$make" --no-print-directory e2e
e2e=$?
wait "$beside"
rest=$?
echo "---- make mutate fuzz (beside make e2e) ----"
cat "$log"
if ((e2e != 0 || rest != 0)); then
	echo "make test: e2e exited $e2e, mutate and fuzz $rest" >&2
	exit 1
fi
