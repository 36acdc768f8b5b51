package cmd

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync/atomic"
)

// DefaultGCPercent is the garbage collector's target the plugin runs with when GOGC is not set:
// a quarter of Go's default. The peak of a watch is the initial list; with the compact cache the
// live heap is small and much of the peak is garbage not yet reclaimed (objects decoded for their
// lines, copied events). On 20,000 ConfigMaps with --diff, 25 peaks at 0.85× of 50's memory
// (105 MiB against 123) for the same sync time and 2% more CPU to sync (docs/performance.md).
// GOGC, when set, is the user's choice and wins.
const DefaultGCPercent = 25

// gcHeadroom is the least the heap may grow between two collections under DefaultGCPercent.
// Go's own floor is 4 MiB scaled by GOGC (1 MiB at 25): while an initial list fills a small
// heap, it was collected every few hundred objects, each collection marking all that was
// kept so far. 8 MiB is below a quarter of the live heap at the peak of the bench's lists
// (~40 MB of pods or ConfigMaps), so the peak is the same; the collections before it are
// about half as many (docs/performance.md).
const gcHeadroom = 8 << 20

// TuneGC sets the garbage collector's target to DefaultGCPercent, with at least gcHeadroom of
// growth between collections, unless getenv("GOGC") is set; it reports whether it did.
func TuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	gcTuning.Store(true)
	tuneGCPercent()
	return true
}

// gcPercentFor is the GC percent that lets a heap of live bytes grow by DefaultGCPercent, and
// by gcHeadroom at least. Below Go's 4 MiB minimum heap the minimum is what the percent scales.
func gcPercentFor(live uint64) int {
	live = max(live, 4<<20)
	return max(DefaultGCPercent, int(gcHeadroom*100/live))
}

var (
	gcLive = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	// gcTuning: the finalizer chain sets the percent (a test turns it off after it).
	gcTuning atomic.Bool
)

// gcSentinel is an object nothing keeps: its finalizer runs after each collection that found
// it (a pointer field keeps it out of the tiny allocator, whose blocks are freed together).
type gcSentinel struct{ _ *byte }

// tuneGCPercent sets the GC percent for the live heap now, and again after every collection
// (a finalizer on an object nothing keeps, set anew each time: the runtime has no hook).
func tuneGCPercent() {
	if !gcTuning.Load() {
		return
	}
	metrics.Read(gcLive)
	debug.SetGCPercent(gcPercentFor(gcLive[0].Value.Uint64()))
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { tuneGCPercent() })
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
