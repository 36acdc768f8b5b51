package cmd

import (
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
