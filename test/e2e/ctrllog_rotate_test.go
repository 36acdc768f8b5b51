package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// rotatingLog is a controller's log file as logrotate leaves it: appended to (as `>> mgr.log`
// does), renamed away and made anew by its name (logrotate's create, the writer reopening its
// log), or emptied in place (copytruncate: the writer goes on at the new end).
type rotatingLog struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

func newRotatingLog(t *testing.T, path string) *rotatingLog {
	t.Helper()
	l := &rotatingLog{path: path}
	l.open(t)
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		_ = l.f.Close()
	})
	return l
}

func (l *rotatingLog) open(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	l.f = f
}

// Write appends to the file of the moment.
func (l *rotatingLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(b)
}

// rotate renames the file to path.1 and writes on in a new file by its name.
func (l *rotatingLog) rotate(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		t.Fatal(err)
	}
	_ = l.f.Close()
	l.open(t)
}

// truncate empties the file in place; the writer goes on at its new end.
func (l *rotatingLog) truncate(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.f.Truncate(0); err != nil {
		t.Fatal(err)
	}
}

// A controller's log rotated while `watch --controller-logs FILE` follows it, as logrotate
// does: renamed away and made anew, then truncated in place. The foo-controller syncs a Foo
// before the rotation, one after it and one after the truncation, each at rest before the log
// is touched: every sync its foo_controller_syncs_total counts is exactly one ControllerReconcile
// line (none lost after a rotation, none read twice), and no watched event is the trigger of two
// of them.
func TestControllerLogsRotated(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.FooCRD()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "foo-controller.log")
	log := newRotatingLog(t, path)
	p := c.RunPlugin(t, ctx, "watch", "foos", "-n", ns, "-o", "json", "--controller-logs", path)
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	fc := startFooController(t, c, testenv.FooControllerOptions{Namespace: ns, LogWriter: log})
	foos := c.Dynamic.Resource(testenv.FooGVR).Namespace(ns)
	names := []string{"before", "rotated", "truncated"}
	// step makes a Foo and awaits its syncs at rest, every one a line.
	step := func(name string) {
		t.Helper()
		if _, err := foos.Create(ctx, testenv.NewFoo(ns, name, name+"-deploy", 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		counted := awaitFooQuiet(t, fc.MetricsURL, ns, names, func(c fooCounts) bool { return c.ok[name] > 0 })
		assertEverySyncOnce(t, name, awaitFooLines(t, p, ns, counted), counted)
	}
	step("before")
	log.rotate(t)
	step("rotated")
	log.truncate(t)
	step("truncated")
	for _, name := range names {
		if err := foos.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	counted := awaitFooQuiet(t, fc.MetricsURL, ns, names, func(fooCounts) bool { return true })
	assertEverySyncOnce(t, "the end", awaitFooLines(t, p, ns, counted), counted)
}

// assertEverySyncOnce checks that each Foo has exactly as many ControllerReconcile lines as
// syncs counted, no two of one Foo at the same log time, and no watched event (resourceVersion)
// the trigger of two lines.
func assertEverySyncOnce(t *testing.T, when string, lines map[string][]map[string]any, counted fooCounts) {
	t.Helper()
	triggerOf := map[string]string{}
	for name, n := range counted.ok {
		want := n + counted.errs[name]
		at := map[string]bool{}
		for _, m := range lines[name] {
			if ts := fmt.Sprint(m["time"]); at[ts] {
				t.Errorf("%s: two lines of %s at %s: a sync read twice", when, name, ts)
			} else {
				at[ts] = true
			}
			ts, _ := m["triggers"].([]any)
			for _, tr := range ts {
				rv := fmt.Sprint(tr.(map[string]any)["resourceVersion"])
				if prev, dup := triggerOf[rv]; dup {
					t.Errorf("%s: the event of resourceVersion %s is the trigger of %s and of %s %v", when, rv, prev, name, m["time"])
				}
				triggerOf[rv] = fmt.Sprintf("%s %v", name, m["time"])
			}
		}
		if len(lines[name]) != want {
			t.Errorf("%s: %s has %d ControllerReconcile lines, the controller counted %d syncs", when, name, len(lines[name]), want)
		}
	}
	t.Logf("%s: syncs counted %v ok, %v error; lines per Foo %v", when, counted.ok, counted.errs, lineCounts(lines))
}

func lineCounts(lines map[string][]map[string]any) map[string]int {
	out := map[string]int{}
	for name, ls := range lines {
		out[name] = len(ls)
	}
	return out
}
