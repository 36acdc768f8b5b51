package testenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// fatalTB records a Fatalf and ends the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

// fails runs f with a fatalTB and returns what it failed with ("" if it did not).
func fails(t *testing.T, f func(tb testing.TB)) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
	return tb.msg
}

// A recording being written: a line without its end is not read yet; the wait returns the
// matching line once it is whole, and fails naming what never came.
func TestAwaitFileJSON(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rec.ndjson")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"type":"Recording"}` + "\n" + `{"type":"Updated","outOfFocus":tr`); err != nil {
		t.Fatal(err)
	}
	focus := func(m map[string]any) bool { return m["outOfFocus"] == true }
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = f.WriteString("ue}\n")
	}()
	if m := testenv.AwaitFileJSON(t, file, 10*time.Second, "an update out of focus", focus); m["type"] != "Updated" {
		t.Errorf("got %v", m)
	}
	msg := fails(t, func(tb testing.TB) {
		testenv.AwaitFileJSON(tb, file, 200*time.Millisecond, "a Relist line", func(m map[string]any) bool { return m["type"] == "Relist" })
	})
	if !strings.Contains(msg, "no line with a Relist line in "+file+" within 200ms") {
		t.Errorf("the failure does not name what never came: %q", msg)
	}
}

func TestEventually(t *testing.T) {
	n := 0
	testenv.Eventually(t, 10*time.Second, "the third try", func() (bool, error) { n++; return n == 3, nil })
	msg := fails(t, func(tb testing.TB) {
		testenv.Eventually(tb, 100*time.Millisecond, "kube-root-ca.crt published", func() (bool, error) { return false, fmt.Errorf("not found") })
	})
	if !strings.Contains(msg, "kube-root-ca.crt published: not within 100ms (last error: not found)") {
		t.Errorf("failure %q", msg)
	}
}

func TestDecodeNDJSON(t *testing.T) {
	got := testenv.DecodeNDJSON([]byte("# watching cm\n{\"type\":\"Synced\"}\n\n[1]\n{\"type\":\"Added\"}"))
	if len(got) != 2 || got[0]["type"] != "Synced" || got[1]["type"] != "Added" {
		t.Errorf("DecodeNDJSON: %v", got)
	}
}
