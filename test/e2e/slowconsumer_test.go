package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createLongNamed makes n config maps whose human lines are long enough to fill a pipe.
func createLongNamed(t *testing.T, ns string, n int) {
	t.Helper()
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("%s-%04d", strings.Repeat("long-name-", 20), i))
	}
	createConfigMaps(t, cluster.Clientset, ns, names...)
}

// startUnread starts the plugin with a stdout nobody reads yet.
func startUnread(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"informer"}, args...)...)
	cmd.Env = cluster.Environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, stdout, bufio.NewReader(stderr)
}

// awaitFile waits until path contains s (the recording is written by the informer loop itself,
// so it shows how far the informers got while stdout is stuck).
func awaitFile(t *testing.T, path, s string) {
	t.Helper()
	testenv.Eventually(t, await, fmt.Sprintf("%s containing %q", path, s), func() (bool, error) {
		b, err := os.ReadFile(path)
		return strings.Contains(string(b), s), err
	})
}

// A reader that does not keep up with human output (a pager, a slow terminal): the informer is
// not held back, memory stays bounded, what was not shown is counted in Dropped lines, and no
// delete is ever lost.
func TestSlowReaderHuman(t *testing.T) {
	ns := newNamespace(t, cluster)
	const n, deletes = 400, 15
	createLongNamed(t, ns, n)
	rec := filepath.Join(t.TempDir(), "rec.ndjson")
	cmd, stdout, _ := startUnread(t, "watch", "cm", "-n", ns, "--color", "never", "--output-buffer", "20", "--record", rec, "--no-summary")
	// All 400 objects get through the informer while nobody reads stdout.
	awaitFile(t, rec, `"type":"Synced"`)
	// Deletes while the outbox is full of adds: each one is kept (15 deletes and the lifecycle
	// lines stay within twice the bound, so the informer does not wait either).
	var deleted []string
	for i := range deletes {
		name := fmt.Sprintf("%s-%04d", strings.Repeat("long-name-", 20), n-1-i)
		if err := cluster.Clientset.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, name)
	}
	awaitFile(t, rec, `"type":"Deleted","group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespace":"`+ns+`","name":"`+deleted[deletes-1]+`"`)
	out := make(chan string)
	go func() { b, _ := io.ReadAll(stdout); out <- string(b) }()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	text := <-out
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
	shown := strings.Count(text, "  Added  ")
	dropped := 0
	for _, m := range regexp.MustCompile(`Dropped\s+(\d+) lines not shown`).FindAllStringSubmatch(text, -1) {
		k, _ := strconv.Atoi(m[1])
		dropped += k
	}
	t.Logf("%d Added lines shown, %d dropped", shown, dropped)
	if dropped == 0 {
		t.Fatalf("nothing was dropped: the test did not make the reader slow enough\n%s", text[:min(len(text), 2000)])
	}
	// Every object is accounted for: shown, or counted as dropped (with the lifecycle lines the
	// outbox keeps, the header and the Synced line among them).
	if shown+dropped < n || shown+dropped > n+5 {
		t.Errorf("shown %d + dropped %d does not account for %d objects", shown, dropped, n)
	}
	if !strings.Contains(text, "cache synced: 400 objects") {
		t.Error("the Synced line was dropped; lifecycle lines must be kept")
	}
	for _, name := range deleted {
		if !strings.Contains(text, "  Deleted     configmaps  "+ns+"/"+name+"  ") {
			t.Errorf("the delete of %s was not shown; deletes are never dropped", name)
		}
	}
}

// -o json never drops: the informer waits for the reader, and says so once on stderr.
func TestSlowReaderJSON(t *testing.T) {
	ns := newNamespace(t, cluster)
	const n = 400
	createLongNamed(t, ns, n)
	cmd, stdout, stderr := startUnread(t, "watch", "cm", "-n", ns, "-o", "json", "--output-buffer", "20", "--no-summary")
	line, err := stderr.ReadString('\n')
	if err != nil || !strings.Contains(line, "stdout is not keeping up") {
		t.Fatalf("stderr: %q, %v", line, err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	added := 0
	for added < n && sc.Scan() {
		if strings.Contains(sc.Text(), `"type":"Added"`) {
			added++
		}
		if strings.Contains(sc.Text(), `"type":"Dropped"`) {
			t.Fatal("-o json dropped events")
		}
	}
	if added != n {
		t.Fatalf("%d Added lines, want %d", added, n)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
}
