//go:build !windows

package reenactrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// options are the control plane's options for its mode, with the binaries it needs.
func (f *ControlPlane) options() (controlplane.Options, []string) {
	need := append([]string{}, controlplane.ServerBinaries...)
	if !f.Full {
		return controlplane.Options{}, need
	}
	return controlplane.Options{Controllers: true, Scheduler: true, Nodes: 1}, append(need, controlplane.ComponentBinaries...)
}

// controlPlane starts the control plane of --control-plane (see startControlPlane) and returns
// its kubeconfig and context, with the function that stops it.
// While ctx lasts, a process of it that exits ends the run: died is called with the error that
// names it.
func (o *Config) controlPlane(ctx context.Context, died func(error)) (kubeconfig, kubeContext string, stop func(), err error) {
	cp, stopCP, err := o.startControlPlane(ctx)
	if err != nil {
		return "", "", nil, err
	}
	pids := cp.PIDs()
	dead := make(chan struct{})
	go watchProcesses(ctx, pids, filepath.Join(filepath.Dir(cp.Dir), "control-plane.log"), func(err error) {
		close(dead)
		died(err)
	})
	return cp.KubeconfigPath, cp.Context, func() {
		select {
		case <-dead: // the rest cannot stop gracefully (a kube-apiserver without its etcd waits long)
			killAll(pids)
		default:
		}
		stopCP()
	}, nil
}

// killAll kills the process groups of pids (each process leads its own), and the processes.
func killAll(pids map[string]int) {
	for _, pid := range pids {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// processPoll is how often watchProcesses looks at the control plane's processes.
const processPoll = 500 * time.Millisecond

// watchProcesses calls died, once, when a process of pids (by name) is gone, with an error naming
// it and the line of its output (logPath) that says why, if one does; it returns when ctx ends.
func watchProcesses(ctx context.Context, pids map[string]int, logPath string, died func(error)) {
	tick := time.NewTicker(processPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, name := range slices.Sorted(maps.Keys(pids)) {
			if err := syscall.Kill(pids[name], 0); errors.Is(err, syscall.ESRCH) {
				msg := fmt.Sprintf("the control plane's %s (pid %d) exited", name, pids[name])
				if line := failLine(logPath); line != "" {
					msg += ": " + line
				}
				died(errors.New(msg))
				return
			}
		}
	}
}

// failPatterns mark the line of a process's output that says why it died (Go's runtime, a
// panic, etcd's and klog's fatal lines).
var failPatterns = []string{"fatal error:", "panic:", "out of memory", "cannot allocate memory", `"level":"fatal"`, `"level":"panic"`, "F0", "Error:"}

// failLine is the first line of the file at path that says why a process died (a runtime
// error, a panic, a fatal log line), cut to one short line; "" when none does. A stack trace
// is never part of it.
func failLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		for _, p := range failPatterns {
			if i := strings.Index(line, p); i >= 0 && (p != "F0" || i == 0) {
				if len(line) > 200 {
					line = line[:200] + "..."
				}
				return printer.Escape(line)
			}
		}
	}
	return ""
}

// startControlPlane starts the control plane of --control-plane, says on stderr where its
// kubeconfig is, and returns it with the function that stops it (by pid) and removes its
// directory, or, --keep-control-plane, says how to.
func (o *Config) startControlPlane(ctx context.Context) (*controlplane.ControlPlane, func(), error) {
	opts, need := o.ControlPlane.options()
	assets, err := controlplane.FindAssets(o.ControlPlane.Assets, need)
	if err != nil {
		return nil, nil, fmt.Errorf("--control-plane: %w", err)
	}
	tmp, err := os.MkdirTemp("", "kubectl-informer-reenact-")
	if err != nil {
		return nil, nil, err
	}
	// The processes write to a file, not through a pipe of ours: with --keep-control-plane
	// they outlive this process.
	logPath := filepath.Join(tmp, "control-plane.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	defer logFile.Close() // the processes hold their own descriptors
	opts.AssetsDir, opts.Dir, opts.Output = assets, filepath.Join(tmp, "cluster"), logFile
	fmt.Fprintf(o.ErrOut, "reenact: starting %s from %s\n", strings.Join(processNames(opts), ", "), assets)
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		if line := failLine(logPath); line != "" {
			err = fmt.Errorf("%w (%s)", err, line)
		}
		err = fmt.Errorf("--control-plane: %w", err)
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	fmt.Fprintf(o.ErrOut, "reenact: control plane ready (%s); for the controller under test:\n    export KUBECONFIG=%s\n",
		pidList(cp.PIDs(), true), cp.KubeconfigPath)
	started := cp.PIDs()
	return cp, func() { o.stopControlPlane(cp, tmp, started) }, nil
}

// stopControlPlane stops cp (started: its processes' pids) and removes tmp, or,
// --keep-control-plane, says how to.
func (o *Config) stopControlPlane(cp *controlplane.ControlPlane, tmp string, started map[string]int) {
	pids := pidList(started, false)
	if o.ControlPlane.Keep {
		// KILL: a kube-apiserver whose etcd went first may wait long in its graceful shutdown;
		// nothing of a throw-away cluster needs saving.
		fmt.Fprintf(o.ErrOut, "reenact: the control plane keeps running (KUBECONFIG=%s); stop it with:\n    kill -KILL %s; rm -rf %s\n",
			cp.KubeconfigPath, pids, tmp)
		return
	}
	fmt.Fprintf(o.ErrOut, "reenact: stopping the control plane (pids %s)\n", pids)
	if err := errors.Join(cp.Stop(), os.RemoveAll(tmp)); err != nil {
		fmt.Fprintf(o.ErrOut, "reenact: stopping the control plane: %v\n", err)
	}
}

// processNames are the processes opts starts.
func processNames(opts controlplane.Options) []string {
	names := []string{"etcd", "kube-apiserver"}
	if opts.Controllers {
		names = append(names, controlplane.ControllerManager)
	}
	if opts.Scheduler {
		names = append(names, controlplane.Scheduler)
	}
	if opts.Nodes > 0 {
		names = append(names, controlplane.Kwok)
	}
	return names
}

// pidList is "etcd pid 1, kube-apiserver pid 2" (named) or "1 2", in pid order.
func pidList(pids map[string]int, named bool) string {
	names := make([]string, 0, len(pids))
	for n := range pids {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return pids[names[i]] < pids[names[j]] })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = strconv.Itoa(pids[n])
		if named {
			parts[i] = n + " pid " + parts[i]
		}
	}
	sep := " "
	if named {
		sep = ", "
	}
	return strings.Join(parts, sep)
}
