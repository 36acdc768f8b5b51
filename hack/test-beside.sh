#!/usr/bin/env bash
# The rest of `make test` after vet and unit: `make e2e` in the foreground, and beside it
# `make mutate` and `make fuzz`, each at a lower priority (nice 10), each in a process group of
# its own, each with its output held in a file and printed when e2e has ended, so the logs do not
# interleave. The e2e tests mostly wait on API servers, controllers and timers; mutations and
# fuzzing are mostly compiles and CPU: the two beside it take what e2e leaves idle, at once
# rather than one after the other (docs/testcluster.md). Fails if any fails; on SIGINT or SIGTERM
# all are stopped (each group killed by its id).
set -uo pipefail
make="${MAKE:-make}"
mutate_log=$(mktemp)
fuzz_log=$(mktemp)
# -baseline=false: make test's unit tests (all of them, on this tree) have passed before this
# script runs, so the step that runs the mutations' tests unmutated first is skipped.
setsid nice -n 10 "$make" --no-print-directory mutate MUTATE_FLAGS=-baseline=false >"$mutate_log" 2>&1 &
mutate=$!
setsid nice -n 10 "$make" --no-print-directory fuzz >"$fuzz_log" 2>&1 &
fuzz=$!
cleanup() {
	kill -- -"$mutate" 2>/dev/null
	kill -- -"$fuzz" 2>/dev/null
	rm -f "$mutate_log" "$fuzz_log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "make mutate, make fuzz: started beside make e2e (nice 10, pids $mutate, $fuzz); their output follows e2e's"
start=$(date +%s)
"$make" --no-print-directory e2e
e2e=$?
echo "make e2e: ended after $(($(date +%s) - start)) s"
wait "$mutate"
mutated=$?
echo "---- make mutate (beside make e2e) ----"
cat "$mutate_log"
wait "$fuzz"
fuzzed=$?
echo "---- make fuzz (beside make e2e) ----"
cat "$fuzz_log"
echo "make test: the part beside make e2e ended after $(($(date +%s) - start)) s"
if ((e2e != 0 || mutated != 0 || fuzzed != 0)); then
	echo "make test: e2e exited $e2e, mutate $mutated, fuzz $fuzzed" >&2
	exit 1
fi
