//go:build !windows

package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
)

// options are the control plane's options for the mode, with the binaries it needs.
func (f *ControlPlaneFlags) options() (controlplane.Options, []string) {
	need := append([]string{}, controlplane.ServerBinaries...)
	if f.Mode != controlPlaneFull {
		return controlplane.Options{}, need
	}
	return controlplane.Options{Controllers: true, Scheduler: true, Nodes: 1}, append(need, controlplane.ComponentBinaries...)
}

// controlPlane starts the control plane of --control-plane (see startControlPlane) and returns
// its kubeconfig and context, with the function that stops it.
func (o *ReenactOptions) controlPlane(ctx context.Context) (kubeconfig, kubeContext string, stop func(), err error) {
	cp, stop, err := o.startControlPlane(ctx)
	if err != nil {
		return "", "", nil, err
	}
	return cp.KubeconfigPath, cp.Context, stop, nil
}

// startControlPlane starts the control plane of --control-plane, says on stderr where its
// kubeconfig is, and returns it with the function that stops it (by pid) and removes its
// directory, or, --keep-control-plane, says how to.
func (o *ReenactOptions) startControlPlane(ctx context.Context) (*controlplane.ControlPlane, func(), error) {
	opts, need := o.cp.options()
	assets, err := controlplane.FindAssets(o.cp.Assets, need)
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
		err = fmt.Errorf("--control-plane: %w%s", err, lastLines(logPath, 10))
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	fmt.Fprintf(o.ErrOut, "reenact: control plane ready (%s); for the controller under test:\n    export KUBECONFIG=%s\n",
		pidList(cp.PIDs(), true), cp.KubeconfigPath)
	return cp, func() { o.stopControlPlane(cp, tmp) }, nil
}

// stopControlPlane stops cp and removes tmp, or, --keep-control-plane, says how to.
func (o *ReenactOptions) stopControlPlane(cp *controlplane.ControlPlane, tmp string) {
	pids := pidList(cp.PIDs(), false)
	if o.cp.Keep {
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

// lastLines is "\n" and the last n lines of the file at path ("" when it is empty).
func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n" + strings.Join(lines, "\n")
}
