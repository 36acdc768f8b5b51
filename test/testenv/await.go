package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The waits of this file are how a test awaits what it asserts on: a line the plugin printed, a
// line in a recording, a state of a file. Each is bounded, and fails the test naming what never
// came, with the plugin's stderr and last lines; none sleeps a guessed time.

// DecodeNDJSON decodes every line of b that is a JSON object (newline-delimited JSON, as the
// plugin's -o json and its recordings are); other lines (blank, human text) are skipped.
func DecodeNDJSON(b []byte) []map[string]any {
	var out []map[string]any
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if m := decodeObject(line); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// ReadNDJSON reads a recording (or any NDJSON file) and returns its lines, failing the test if
// the file cannot be read or a non-blank line is not a JSON object.
func ReadNDJSON(t testing.TB, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for line := range bytes.SplitSeq(bytes.TrimSpace(raw), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || m == nil {
			t.Fatalf("%s: line %.200q is not a JSON object: %v", path, line, err)
		}
		out = append(out, m)
	}
	return out
}

func decodeObject(line []byte) map[string]any {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return m
}

// JSON returns every stdout line so far that is a JSON object, decoded, in the order printed.
func (p *PluginRun) JSON() []map[string]any {
	var out []map[string]any
	for _, l := range p.All() {
		if m := decodeObject(l); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// Strings returns every stdout line so far, as strings.
func (p *PluginRun) Strings() []string {
	all := p.All()
	out := make([]string, len(all))
	for i, l := range all {
		out[i] = string(l)
	}
	return out
}

// Count is how many stdout lines so far are JSON objects satisfying pred.
func (p *PluginRun) Count(pred func(map[string]any) bool) int {
	n := 0
	for _, m := range p.JSON() {
		if pred(m) {
			n++
		}
	}
	return n
}

// AwaitSeen waits until any stdout line so far, in any order, is a JSON object satisfying pred,
// and returns the first such line. Lines of different resources come from different informers,
// so their order is not the server's: AwaitJSON's "after the previous match" is for one
// resource's sequence. It fails the test naming what (e.g. "the Deployment with 3 available
// replicas") when timeout passes or the plugin exits first.
func (p *PluginRun) AwaitSeen(t testing.TB, timeout time.Duration, what string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	seen := 0 // lines already tried: pred may count (it is called once per line)
	for {
		p.mu.Lock()
		lines := p.lines[seen:len(p.lines):len(p.lines)]
		changed, exited := p.changed, p.exited
		p.mu.Unlock()
		for _, l := range lines {
			seen++
			if m := decodeObject(l); m != nil && pred(m) {
				return m
			}
		}
		if exited {
			t.Fatalf("kubectl informer exited (code %d) before a line with %s\nstderr:\n%s\nlast lines:\n%s",
				p.code, what, p.Stderr(), p.tail(20))
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no line with %s from kubectl informer within %s\nstderr:\n%s\nlast lines:\n%s",
				what, timeout, p.Stderr(), p.tail(20))
		}
	}
}

// AwaitLine waits for the next stdout line (after the previous AwaitLine's, through Lines)
// containing s and returns it; it fails the test when timeout passes or the plugin exits first.
func (p *PluginRun) AwaitLine(t testing.TB, timeout time.Duration, s string) string {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case l, ok := <-p.Lines():
			if !ok {
				t.Fatalf("kubectl informer exited (code %d) before a line containing %q\nstderr:\n%s", p.code, s, p.Stderr())
			}
			if strings.Contains(string(l), s) {
				return string(l)
			}
		case <-deadline.C:
			t.Fatalf("no line containing %q from kubectl informer within %s\nstderr:\n%s\nlast lines:\n%s",
				s, timeout, p.Stderr(), p.tail(20))
		}
	}
}

// Stop ends the run as a user does, with SIGINT, waits for it to exit and returns its stderr
// (the exit summary). It fails the test unless the plugin exited 0.
func (p *PluginRun) Stop(t testing.TB) string {
	t.Helper()
	return p.StopWith(t, syscall.SIGINT)
}

// StopWith is Stop with another signal (SIGTERM ends a run as SIGINT does).
func (p *PluginRun) StopWith(t testing.TB, sig syscall.Signal) string {
	t.Helper()
	if err := p.Signal(sig); err != nil {
		t.Fatalf("kubectl informer: send %s: %v", sig, err)
	}
	if code, err := p.Wait(); err != nil || code != 0 {
		t.Fatalf("kubectl informer after %s: exit %d, %v; stderr:\n%s", sig, code, err, p.Stderr())
	}
	return p.Stderr()
}

// AwaitFileJSON waits until the NDJSON file at path (a recording being written, one whole line
// per event) holds a line satisfying pred, and returns it. It fails the test naming what when
// timeout passes. A missing file counts as empty (the plugin may not have created it yet).
func AwaitFileJSON(t testing.TB, path string, timeout time.Duration, what string, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := findInFile(path, pred); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line with %s in %s within %s", what, path, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func findInFile(path string, pred func(map[string]any) bool) map[string]any {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		// A line without its end is still being written: only whole lines count.
		if err != nil {
			return nil
		}
		if m := decodeObject(line); m != nil && pred(m) {
			return m
		}
	}
}

// Eventually polls cond every 50ms until it returns true, and fails the test naming what when
// timeout passes first. For a state outside the plugin (an object on the server, a file).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			if last != nil {
				t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
			}
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AwaitStderr waits until the plugin's stderr so far (its last MiB) satisfies cond, and fails
// the test naming what when timeout passes or the plugin exits first.
func (p *PluginRun) AwaitStderr(t testing.TB, timeout time.Duration, what string, cond func(stderr string) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond(p.Stderr()) {
		select {
		case <-p.done:
			if cond(p.Stderr()) {
				return
			}
			t.Fatalf("kubectl informer exited (code %d) before its stderr had %s\nstderr:\n%s", p.code, what, p.Stderr())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl informer's stderr had no %s within %s\nstderr:\n%s", what, timeout, p.Stderr())
		}
	}
}
