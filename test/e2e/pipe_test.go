package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// headRun runs `kubectl informer args...` with its stdout a pipe, reads n lines and closes the
// read end, as `| head -n` does, and returns how the process ended.
func headRun(t *testing.T, n int, args ...string) (exit string, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"informer"}, args...)...)
	cmd.Env = cluster.Environ()
	cmd.Stdout = w
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	br := bufio.NewReader(r)
	for i := 0; i < n; i++ {
		if _, err := br.ReadString('\n'); err != nil {
			t.Errorf("line %d: %v", i+1, err)
			break
		}
	}
	r.Close()
	_ = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("the plugin kept running after its reader went away")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		// What a shell shows as 128+signal: 141 for SIGPIPE.
		return fmt.Sprintf("killed by %v (%d)", ws.Signal(), 128+int(ws.Signal())), errb.String()
	}
	return fmt.Sprint(ws.ExitStatus()), errb.String()
}

// `watch cm | head -3` exits 0, every time, while events keep coming after the reader left: a
// write to a closed stdout must end the run, not kill the process with SIGPIPE (exit 141).
func TestClosedPipeWatchExitsZero(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	ctx, stop := context.WithCancel(context.Background())
	ns := newNamespace(t, cluster)
	createConfigMaps(t, cluster.Clientset, ns, "busy")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cms := cluster.Clientset.CoreV1().ConfigMaps(ns)
		for i := 0; ctx.Err() == nil; i++ {
			_, _ = cms.Patch(ctx, "busy", types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"v":"%d"}}`, i)), metav1.PatchOptions{})
			time.Sleep(2 * time.Millisecond)
		}
	}()
	defer func() { stop(); wg.Wait() }()
	for _, output := range []string{"", "json"} {
		for i := range 10 {
			exit, stderr := headRun(t, 3, "watch", "cm", "-n", ns, "-o", output)
			if exit != "0" || stderr != "" {
				t.Errorf("-o %q, run %d: exit %s, stderr %q; want 0 and nothing", output, i+1, exit, stderr)
			}
		}
	}
}

// `replay FILE | head -3` exits 0, every time: the replay has far more to write than a pipe
// holds.
func TestClosedPipeReplayExitsZero(t *testing.T) {
	t.Parallel() // a file of its own, no cluster (docs/testcluster.md, "Parallel tests")
	src, err := os.ReadFile("../../pkg/replay/testdata/configmaps.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	var b strings.Builder
	b.WriteString(lines[0] + "\n" + lines[1] + "\n")
	for i := range 20000 {
		fmt.Fprintf(&b, `{"time":"2026-11-21T05:00:01.000000000Z","type":"Added","group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespace":"demo","name":"cm-%d","resourceVersion":"%d","initialList":false,"delta":"Added","tombstone":false,"object":{"apiVersion":"v1","data":{"v":"1"},"kind":"ConfigMap","metadata":{"name":"cm-%d","namespace":"demo","resourceVersion":"%d"}}}`+"\n", i, 1000+i, i, 1000+i)
	}
	file := filepath.Join(t.TempDir(), "big.ndjson")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"", "json"} {
		for i := range 10 {
			exit, stderr := headRun(t, 3, "replay", file, "-o", output)
			if exit != "0" || stderr != "" {
				t.Errorf("-o %q, run %d: exit %s, stderr %q; want 0 and nothing", output, i+1, exit, stderr)
			}
		}
	}
}
