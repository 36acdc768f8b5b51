package cmd

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// DefaultGCPercent is the garbage collector's target the plugin runs with when GOGC is not set:
// a quarter of Go's default. The peak of a watch is the initial list; with the compact cache the
// live heap is small and much of the peak is garbage not yet reclaimed (objects decoded for their
// lines, copied events). On 20,000 ConfigMaps with --diff, 25 peaks at 0.85× of 50's memory
// (105 MiB against 123) for the same sync time and 2% more CPU to sync (docs/performance.md).
// GOGC, when set, is the user's choice and wins.
const DefaultGCPercent = 25

// TuneGC sets the garbage collector's target to DefaultGCPercent unless getenv("GOGC") is set,
// and reports whether it did.
func TuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(DefaultGCPercent)
	return true
}

// defaultMemProfileRate is Go's heap-profile sampling rate, restored by --memprofile.
const defaultMemProfileRate = 512 * 1024

// TuneMemProfile turns off the heap profile's sampling (Go samples an allocation every 512 KiB
// by default, walking its stack and keeping a bucket per allocating stack: on 20,000
// ConfigMaps ~1.4 MiB of buckets and the executable's pages the walks touch), unless GODEBUG
// sets memprofilerate; --memprofile turns it on again. It reports whether it turned it off.
func TuneMemProfile(getenv func(string) string) bool {
	if strings.Contains(getenv("GODEBUG"), "memprofilerate=") {
		return false
	}
	runtime.MemProfileRate = 0
	return true
}
