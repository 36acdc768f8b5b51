package cmd

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() {
		gcTuning.Store(false)
		debug.SetGCPercent(before)
	})

	env := map[string]string{"GOGC": "200"}
	if TuneGC(func(k string) string { return env[k] }) {
		t.Error("GOGC=200: TuneGC overrode the user's setting")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=200: GC percent changed to %d", got)
	}

	if !TuneGC(func(string) string { return "" }) {
		t.Fatal("GOGC unset: TuneGC did not tune")
	}
	// A heap of 64 MiB kept: a quarter of it is more than the headroom, DefaultGCPercent.
	kept := make([][]byte, 64)
	for i := range kept {
		kept[i] = make([]byte, 1<<20)
	}
	awaitGCPercent(t, "64 MiB live", func(p int) bool { return p == DefaultGCPercent })
	// Let it go (nothing reads kept after this): the next collections find a small heap and
	// give it the headroom.
	runtime.KeepAlive(kept)
	awaitGCPercent(t, "64 MiB let go", func(p int) bool { return p > DefaultGCPercent })
}

// awaitGCPercent collects until the GC percent the tuner set satisfies ok (the tuner runs on
// the finalizer goroutine after a collection), for at most 10 seconds.
func awaitGCPercent(t *testing.T, what string, ok func(int) bool) {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		metrics.Read(s)
		p := int(s[0].Value.Uint64())
		if ok(p) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: GC percent %d after 10 s of collections", what, p)
		}
	}
}

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 200},       // Go's 4 MiB minimum heap, scaled to 8 MiB
		{4 << 20, 200}, // +8 MiB
		{16 << 20, 50}, // +8 MiB
		{32 << 20, 25}, // +8 MiB, a quarter
		{64 << 20, 25}, // a quarter, 16 MiB
		{1 << 30, 25},  // a quarter
		{20 << 20, 40}, // +8 MiB
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

func TestTuneMemProfile(t *testing.T) {
	before := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = before })

	runtime.MemProfileRate = defaultMemProfileRate
	if !TuneMemProfile(func(string) string { return "" }) || runtime.MemProfileRate != 0 {
		t.Errorf("GODEBUG unset: MemProfileRate %d, want 0", runtime.MemProfileRate)
	}
	runtime.MemProfileRate = 4096
	env := map[string]string{"GODEBUG": "gctrace=1,memprofilerate=4096"}
	if TuneMemProfile(func(k string) string { return env[k] }) || runtime.MemProfileRate != 4096 {
		t.Errorf("GODEBUG=memprofilerate=4096: MemProfileRate changed to %d", runtime.MemProfileRate)
	}

	// --memprofile samples again.
	runtime.MemProfileRate = 0
	stop, err := startProfiles("", filepath.Join(t.TempDir(), "mem.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if runtime.MemProfileRate != defaultMemProfileRate {
		t.Errorf("--memprofile: MemProfileRate %d, want %d", runtime.MemProfileRate, defaultMemProfileRate)
	}
}
