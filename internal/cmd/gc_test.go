package cmd

import (
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	if !TuneGC(func(string) string { return "" }) {
		t.Fatal("GOGC unset: TuneGC did not tune")
	}
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, DefaultGCPercent)
	}

	env := map[string]string{"GOGC": "200"}
	if TuneGC(func(k string) string { return env[k] }) {
		t.Error("GOGC=200: TuneGC overrode the user's setting")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=200: GC percent changed to %d", got)
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
