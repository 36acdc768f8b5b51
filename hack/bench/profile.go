package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// profileRuns runs every measured tool that can write profiles (the plugin's hidden
// --cpuprofile/--memprofile, the minimal informer's -cpuprofile/-memprofile) once more, outside
// the figures, and leaves in dir, per tool: TOOL.cpu.pprof, TOOL.heap.pprof and the text
// summaries TOOL.cpu.txt (go tool pprof -top), TOOL.alloc.txt (allocated bytes) and
// TOOL.inuse.txt (live bytes after the final GC, when the informer has stopped), and for the
// plugin TOOL.synced.txt (live bytes when its initial lists were in, its heap profile FILE.synced).
func (b *bench) profileRuns(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, name := range b.c.tools {
		tl := toolByName(name)
		if tl.profileArgs == nil {
			continue
		}
		file := strings.NewReplacer("+", "_", "=", "-", "/", "_").Replace(name)
		cpu := filepath.Join(abs, file+".cpu.pprof")
		heap := filepath.Join(abs, file+".heap.pprof")
		var cpus []string
		for i := range max(b.c.profileRuns, 1) {
			cpuI := cpu
			if i > 0 {
				cpuI = filepath.Join(abs, fmt.Sprintf("%s.cpu.%d.pprof", file, i+1))
			}
			logf("profiling %s (%d of %d)", name, i+1, max(b.c.profileRuns, 1))
			// Each run patches with a value of its own (the value is named by the round).
			r := b.runOne(ctx, tl, -i, 0, tl.profileArgs(cpuI, heap)...)
			if r.Err != "" {
				logf("  %s: %s\n%s", name, r.Err, r.Stderr)
				continue
			}
			cpus = append(cpus, cpuI)
			logf("  sync %.2fs, cpu %.2fs, peak RSS %.0f MiB (with profiling on)", r.Sync.Seconds(), r.CPU().Seconds(), float64(r.MaxRSS)/1024)
		}
		if len(cpus) == 0 {
			continue
		}
		for _, p := range []struct {
			profile, out string
			args         []string
		}{
			{cpus[0], file + ".cpu.txt", append([]string{"-top", "-nodecount=40"}, cpus[1:]...)},
			{cpus[0], file + ".cpu-cum.txt", append([]string{"-top", "-cum", "-nodecount=60"}, cpus[1:]...)},
			{heap, file + ".alloc.txt", []string{"-top", "-sample_index=alloc_space", "-nodecount=40"}},
			{heap, file + ".inuse.txt", []string{"-top", "-sample_index=inuse_space", "-nodecount=25"}},
			{heap + ".synced", file + ".synced.txt", []string{"-top", "-sample_index=inuse_space", "-nodecount=40"}},
		} {
			if _, err := os.Stat(p.profile); err != nil {
				continue // the minimal informer writes no FILE.synced
			}
			cmd := exec.CommandContext(ctx, goCmd(), append(append([]string{"tool", "pprof"}, p.args...), p.profile)...)
			out, err := cmd.Output()
			if err != nil {
				logf("  go tool pprof %s: %v", filepath.Base(p.profile), err)
				continue
			}
			if err := os.WriteFile(filepath.Join(abs, p.out), out, 0o644); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(os.Stderr, "bench: profiles and their summaries are in %s\n", abs)
	return nil
}
