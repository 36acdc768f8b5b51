//go:build !windows

package reenactrun

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPidList(t *testing.T) {
	pids := map[string]int{"kube-apiserver": 20, "etcd": 10, "kwok": 30}
	if got, want := pidList(pids, true), "etcd pid 10, kube-apiserver pid 20, kwok pid 30"; got != want {
		t.Errorf("pidList named = %q, want %q", got, want)
	}
	if got, want := pidList(pids, false), "10 20 30"; got != want {
		t.Errorf("pidList = %q, want %q", got, want)
	}
}

// A process that died with a stack trace (etcd out of memory) is named by one line: the
// runtime's, never the trace.
func TestFailLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	trace := `{"level":"info","msg":"starting etcd"}
fatal error: runtime: cannot allocate memory

goroutine 1 [running]:
runtime.throw({0x1, 0x2})
	/usr/local/go/src/runtime/panic.go:1101 +0x48
main.main()
`
	if err := os.WriteFile(path, []byte(trace), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := failLine(path), "fatal error: runtime: cannot allocate memory"; got != want {
		t.Errorf("failLine = %q, want %q", got, want)
	}
	if err := os.WriteFile(path, []byte("all well\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := failLine(path); got != "" {
		t.Errorf("failLine of a calm log = %q", got)
	}
	if got := failLine(filepath.Join(t.TempDir(), "none")); got != "" {
		t.Errorf("failLine of no file = %q", got)
	}
}
