package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// syncedBuffer is a bytes.Buffer written by one goroutine and read by the test.
type syncedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncedBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncedBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// awaitText waits until buf holds want.
func awaitText(t *testing.T, buf *syncedBuffer, want string) {
	t.Helper()
	testenv.Eventually(t, await, fmt.Sprintf("%q in the output", want), func() (bool, error) {
		if got := buf.String(); !strings.Contains(got, want) {
			return false, fmt.Errorf("the output so far: %q", got[max(0, len(got)-2000):])
		}
		return true, nil
	})
}

// progressArgs make a slow initial list: one object per page, at most 10 pages a second.
func progressArgs(ns string) []string {
	return []string{"informer", "watch", "widgets", "-n", ns, "-o", "json", "--list-mode", "list", "--chunk-size", "1", "--qps", "10", "--burst", "1", "--timeout", "60s"}
}

// A long initial list shows a single updating progress line (objects, pages, bytes, elapsed) on
// stderr when stderr is a terminal, erased once the list is done; stdout (-o json) never has it.
func TestProgressOnTerminal(t *testing.T) {
	ns := newNamespace(t, cluster)
	createWidgets(t, cluster, ns, 25)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var stderr, stdout syncedBuffer
	go func() { _, _ = io.Copy(&stderr, ptmx) }()
	cmd := exec.Command("kubectl", withKubeconfigArg(progressArgs(ns))...)
	cmd.Env = cluster.Environ()
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	awaitText(t, &stderr, "\r\x1b[Klisting widgets.example.com: ")
	awaitText(t, &stdout, `"type":"Synced"`)
	// Once the list is done, the line is erased: nothing after the last erase.
	deadline := time.Now().Add(await)
	for s := stderr.String(); !strings.HasSuffix(s, "\r\x1b[K") || strings.Count(s, "\r\x1b[K") < 2; s = stderr.String() {
		if time.Now().After(deadline) {
			t.Fatalf("the progress line was not erased after the list:\n%q", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v; stderr:\n%q", err, stderr.String())
	}
	out := stderr.String()
	t.Logf("stderr on the terminal:\n%q", out)
	last := out[strings.LastIndex(out, "listing widgets"):]
	line, _, _ := strings.Cut(last, "\r")
	for _, want := range []string{"objects", "pages", "B,"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	if strings.Contains(stdout.String(), "listing") || strings.Contains(stdout.String(), "\r") {
		t.Errorf("stdout has the progress line:\n%s", stdout.String())
	}
	checkJSONLines(t, stdout.String())
}

// The same slow list with stderr a pipe: no progress line at all.
func TestProgressNotInPipe(t *testing.T) {
	ns := newNamespace(t, cluster)
	createWidgets(t, cluster, ns, 25)
	cmd := exec.Command("kubectl", withKubeconfigArg(progressArgs(ns))...)
	cmd.Env = cluster.Environ()
	var stderr syncedBuffer
	cmd.Stderr = &stderr
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdoutPipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var stdout strings.Builder
	var stats map[string]any
	for sc.Scan() {
		stdout.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"type":"Synced"`) {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}
		if strings.Contains(sc.Text(), `"type":"ApiStats"`) {
			if err := json.Unmarshal(sc.Bytes(), &stats); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	// The list was slowed down as on the terminal: 25 pages, held back by the rate limiter.
	if stats == nil || stats["listPages"] != 25.0 || stats["clientWaits"].(float64) < 1 {
		t.Errorf("ApiStats = %v, want 25 list pages, some held back by the client-side rate limiter", stats)
	}
	if s := stderr.String(); strings.Contains(s, "listing") || strings.Contains(s, "\r") || strings.Contains(s, "\x1b") {
		t.Errorf("stderr (a pipe) has a progress line:\n%q", s)
	}
	if strings.Contains(stdout.String(), "listing") {
		t.Errorf("stdout has a progress line")
	}
}

// withKubeconfigArg adds the cluster's kubeconfig after the plugin's arguments.
func withKubeconfigArg(args []string) []string {
	return append(args, "--kubeconfig="+cluster.KubeconfigPath)
}

// checkJSONLines fails unless every line of out is a JSON object.
func checkJSONLines(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("stdout line is not JSON: %q", l)
		}
	}
}
