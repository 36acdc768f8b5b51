package cmd

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts a CPU profile and arranges a heap profile at the end, as asked by the
// hidden --cpuprofile and --memprofile flags; the returned func finishes both.
func startProfiles(cpu, mem string) (func(), error) {
	if mem != "" && runtime.MemProfileRate == 0 {
		runtime.MemProfileRate = defaultMemProfileRate
	}
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		cpuFile = f
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem != "" {
			writeHeapProfile(mem)
		}
	}, nil
}

// writeHeapProfile writes a heap profile after a garbage collection (errors ignored: a
// diagnostic never fails a run).
func writeHeapProfile(file string) {
	if f, err := os.Create(file); err == nil {
		runtime.GC()
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}
}
