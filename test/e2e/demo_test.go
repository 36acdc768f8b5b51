package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// `hack/demo -cluster-only` stops its whole control plane (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, kwok, and its watchdog) when it is told to, however it
// is told: SIGINT, SIGTERM, a second SIGTERM while it stops (it then exits at once and its
// watchdog kills the rest), and the death of the process that started it (`go run` dies of
// SIGTERM without passing it on; the demo lived on with its cluster).
func TestDemoClusterOnlyStops(t *testing.T) {
	t.Parallel() // control planes of its own, one a subtest (docs/testcluster.md, "Parallel tests")
	bin, err := testenv.BuildDemoOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		parent bool // started by a shell that is then killed, as `go run` is
		stop   func(t *testing.T, demo, parent int)
	}{
		{"SIGINT", false, func(t *testing.T, demo, _ int) { signal(t, demo, syscall.SIGINT) }},
		{"SIGTERM twice", false, func(t *testing.T, demo, _ int) {
			signal(t, demo, syscall.SIGTERM)
			signal(t, demo, syscall.SIGTERM)
		}},
		{"its parent killed", true, func(t *testing.T, _, parent int) { signal(t, parent, syscall.SIGKILL) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr lockedBuffer
			argv := []string{bin, "-cluster-only"}
			if tt.parent {
				// The shell waits for the demo, as `go run` does, and says its pid.
				argv = []string{"sh", "-c", `"$0" -cluster-only & echo "demo $!" >&2; wait`, bin}
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stderr = &stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

			testenv.Eventually(t, 5*time.Minute, "the control plane ready", func() (bool, error) {
				return strings.Contains(stderr.String(), "demo: control plane ready"), nil
			})
			demo := cmd.Process.Pid
			if tt.parent {
				m := regexp.MustCompile(`(?m)^demo (\d+)$`).FindStringSubmatch(stderr.String())
				if m == nil {
					t.Fatalf("the shell did not say the demo's pid:\n%s", stderr.String())
				}
				demo, _ = strconv.Atoi(m[1])
			}
			pids := children(demo)
			names := map[string]bool{}
			for _, p := range pids {
				names[comm(p)] = true
			}
			for _, want := range []string{"etcd", "kube-apiserver", "kube-controller", "kube-scheduler", "kwok", "sh"} {
				if !names[want] {
					t.Fatalf("no %s among the demo's children %v (%v)", want, pids, names)
				}
			}
			tt.stop(t, demo, cmd.Process.Pid)
			pids = append(pids, demo)
			testenv.Eventually(t, await, "every process of the demo gone", func() (bool, error) {
				for _, p := range pids {
					if alive(p) {
						return false, nil
					}
				}
				return true, nil
			})
			if !tt.parent {
				<-exited
			}
			t.Logf("the demo said:\n%s", stderr.String())
		})
	}
}

func signal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("kill -%d %d: %v", sig, pid, err)
	}
}

// children are the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(p); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// statFields are /proc/PID/stat's fields after the command name: state, ppid, pgrp, ...
func statFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

func comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	return strings.TrimSpace(string(b))
}

// alive: pid runs (a zombie, waiting for whoever adopted it to reap it, does not).
func alive(pid int) bool {
	f := statFields(pid)
	return len(f) > 0 && f[0] != "Z"
}

// lockedBuffer is a bytes.Buffer written by a process and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
