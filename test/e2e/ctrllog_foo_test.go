package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// fooCounts is what hack/foo-controller's /metrics says of its own syncs: client-go's workqueue
// metrics of its queue and its foo_controller_syncs_total, per Foo of one namespace.
type fooCounts struct {
	adds, work, depth float64        // workqueue_{adds_total,work_duration_seconds_count,depth}{name="foo"}
	ok, errs          map[string]int // foo_controller_syncs_total{result="success"|"error"} by Foo
}

// total is every sync counted, of every Foo.
func (c fooCounts) total() int {
	n := 0
	for _, m := range []map[string]int{c.ok, c.errs} {
		for _, v := range m {
			n += v
		}
	}
	return n
}

// scrapeFoo reads the foo-controller's counters of the Foos names in namespace ns.
func scrapeFoo(t *testing.T, url, ns string, names []string) fooCounts {
	t.Helper()
	raw := getPage(t, url)
	queue := map[string]string{"name": "foo"}
	c := fooCounts{
		adds:  metricSum(t, raw, "workqueue_adds_total", queue),
		work:  metricSum(t, raw, "workqueue_work_duration_seconds_count", queue),
		depth: metricSum(t, raw, "workqueue_depth", queue),
		ok:    map[string]int{}, errs: map[string]int{},
	}
	for _, name := range names {
		for result, into := range map[string]map[string]int{"success": c.ok, "error": c.errs} {
			into[name] = int(metricSum(t, raw, "foo_controller_syncs_total", map[string]string{"namespace": ns, "name": name, "result": result}))
		}
	}
	return c
}

// hasTrigger reports whether a ControllerReconcile line names the event of resourceVersion rv
// among its triggers.
func hasTrigger(m map[string]any, rv string) bool {
	ts, _ := m["triggers"].([]any)
	for _, tr := range ts {
		if tr, _ := tr.(map[string]any); tr["resourceVersion"] == rv {
			return true
		}
	}
	return false
}

// hack/foo-controller (client-go's workqueue, klog; its own counters on /metrics) run locally
// with its log in a file, in klog text and in component-base's JSON (--logging-format=json),
// at its default verbosity (it logs every sync there: "Successfully synced", "Error syncing").
// Creates, an update of a Foo, a scale of its Deployment (the fight), the status-loop, syncs
// that fail and deletes: at least 95% of the syncs its foo_controller_syncs_total counts (and
// workqueue_work_duration_seconds_count, its queue's own count, agrees) are ControllerReconcile
// lines of `watch foos --controller-logs`, per Foo never more than it counted, each with a
// trigger or a reason.
func TestControllerLogsFooController(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel() // a foo-controller and a namespace of its own
			fooControllerLogsCoverage(t, format)
		})
	}
}

func fooControllerLogsCoverage(t *testing.T, format string) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.FooCRD()); err != nil {
		t.Fatal(err)
	}
	// The log and the recording are kept ($E2E_ARTIFACTS/<test>): internal/report's testdata
	// recording is one of them. --workers 1: the plugin's simulated reconciles (Reconciled
	// lines) beside the controller's real ones.
	dir := artifactDir(t)
	logFile, rec := filepath.Join(dir, "foo-controller.log"), filepath.Join(dir, "recording.ndjson")
	for _, f := range []string{logFile, rec} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	p := c.RunPlugin(t, ctx, "watch", "foos", "-n", ns, "--owned", "--owned-resources", "deployments", "-o", "json",
		"--controller-logs", logFile, "--record", rec, "--workers", "1")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	fc := startFooController(t, c, testenv.FooControllerOptions{Namespace: ns, LogFile: logFile,
		Args: []string{"--logging-format=" + format}})
	provokeFooSyncs(t, c, p, ns)
	names := []string{"plain", "loop", "gamma"}
	// gamma's retries are over once its only successful sync, the one that finds it gone, is in.
	counted := awaitFooQuiet(t, fc.MetricsURL, ns, names, func(c fooCounts) bool { return c.ok["gamma"] > 0 })
	lines := awaitFooLines(t, p, ns, counted)
	after := scrapeFoo(t, fc.MetricsURL, ns, names)
	assertFooCoverage(t, format, lines, counted, after)
	p.Stop(t)
}

// provokeFooSyncs drives the foo-controller through every kind of sync, awaiting each as a line.
func provokeFooSyncs(t *testing.T, c *testenv.Cluster, p *testenv.PluginRun, ns string) {
	t.Helper()
	ctx := context.Background()
	foos := c.Dynamic.Resource(testenv.FooGVR).Namespace(ns)
	of := func(name string) func(map[string]any) bool {
		return func(m map[string]any) bool {
			return m["type"] == "ControllerReconcile" && m["namespace"] == ns && m["name"] == name
		}
	}
	create := func(name, deployment, bug string) {
		t.Helper()
		foo := testenv.NewFoo(ns, name, deployment, 1)
		if bug != "" {
			foo.SetAnnotations(map[string]string{testenv.FooBugAnnotation: bug})
		}
		if _, err := foos.Create(ctx, foo, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("plain", "plain-deploy", "")
	p.AwaitSeen(t, await, "a sync of plain", of("plain"))
	// An update of the Foo's spec: the sync it causes names it.
	upd, err := foos.Patch(ctx, "plain", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{FieldManager: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	p.AwaitSeen(t, await, "plain's sync triggered by its spec update", func(m map[string]any) bool {
		return of("plain")(m) && hasTrigger(m, upd.GetResourceVersion())
	})
	// The fight: a scale of its Deployment is put back by a sync of the Foo that owns it.
	scaled, err := c.Clientset.AppsV1().Deployments(ns).Patch(ctx, "plain-deploy", types.MergePatchType,
		[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "e2e-scale"})
	if err != nil {
		t.Fatal(err)
	}
	p.AwaitSeen(t, await, "plain's sync triggered by the scale of its Deployment", func(m map[string]any) bool {
		return of("plain")(m) && hasTrigger(m, scaled.ResourceVersion)
	})
	// The self-loop: every status write triggers the next sync.
	create("loop", "loop-deploy", "status-loop")
	loops := 0
	p.AwaitSeen(t, await, "10 syncs of loop", func(m map[string]any) bool {
		if of("loop")(m) {
			loops++
		}
		return loops >= 10
	})
	// Syncs that fail: gamma names plain's Deployment, which it does not own.
	create("gamma", "plain-deploy", "")
	failed := 0
	p.AwaitSeen(t, await, "3 failed syncs of gamma", func(m map[string]any) bool {
		if of("gamma")(m) && m["result"] == "error" {
			failed++
		}
		return failed >= 3
	})
	for _, name := range []string{"gamma", "loop", "plain"} {
		if err := foos.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitFooQuiet awaits the foo-controller's own counters at rest: ready, the queue empty with
// every add processed, and no sync counted for a second. It returns the counts.
func awaitFooQuiet(t *testing.T, url, ns string, names []string, ready func(fooCounts) bool) fooCounts {
	t.Helper()
	var cur fooCounts
	last, since := -1, time.Now()
	testenv.Eventually(t, await, "the foo-controller's counters at rest", func() (bool, error) {
		cur = scrapeFoo(t, url, ns, names)
		if n := cur.total(); n != last {
			last, since = n, time.Now()
		}
		return ready(cur) && cur.depth == 0 && cur.adds == cur.work && time.Since(since) >= time.Second, nil
	})
	return cur
}

// awaitFooLines awaits a ControllerReconcile line of each Foo for each sync counted (bounded:
// fewer is what the assertion then measures) and returns them by Foo.
func awaitFooLines(t *testing.T, p *testenv.PluginRun, ns string, counted fooCounts) map[string][]map[string]any {
	t.Helper()
	var by map[string][]map[string]any
	complete := func() bool {
		by = map[string][]map[string]any{}
		for _, m := range p.JSON() {
			if m["type"] == "ControllerReconcile" && m["namespace"] == ns {
				name := fmt.Sprint(m["name"])
				by[name] = append(by[name], m)
			}
		}
		for name, n := range counted.ok {
			if len(by[name]) < n+counted.errs[name] {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(await); !complete() && time.Now().Before(deadline); {
		select {
		case <-p.Done():
			return by
		case <-time.After(100 * time.Millisecond):
		}
	}
	return by
}

// assertFooCoverage compares the lines with the controller's counts: at least 95% of its
// syncs, per Foo never more lines than it counted (after), results never better than counted,
// each line with a trigger or a reason.
func assertFooCoverage(t *testing.T, format string, lines map[string][]map[string]any, counted, after fooCounts) {
	t.Helper()
	if float64(counted.total()) != counted.work {
		t.Errorf("foo_controller_syncs_total %d, workqueue_work_duration_seconds_count %v: the controller's counts disagree", counted.total(), counted.work)
	}
	shown, reasons := 0, map[string]int{}
	var figures []string
	for name := range counted.ok {
		results := map[string]int{}
		for _, m := range lines[name] {
			results[fmt.Sprint(m["result"])]++
			if m["kind"] != "Foo" || m["format"] != "klog-"+format {
				t.Errorf("line %v: not a Foo's sync in klog-%s", m, format)
			}
			if n, _ := m["triggerCount"].(float64); n == 0 {
				if m["reason"] == nil || m["reasonMessage"] == nil {
					t.Errorf("a sync with neither a trigger nor a reason: %v", m)
				}
				reasons[fmt.Sprint(m["reason"])]++
			}
		}
		want := counted.ok[name] + counted.errs[name]
		if got := len(lines[name]); got > after.ok[name]+after.errs[name] || results["ok"] > after.ok[name] || results["error"] > after.errs[name] {
			t.Errorf("%s: %d lines %v, but the controller counted %d ok and %d errors: a line it never ran", name, got, results, after.ok[name], after.errs[name])
		}
		shown += min(len(lines[name]), want)
		figures = append(figures, fmt.Sprintf("%s %d/%d (lines %v, counted %d ok %d error)", name, len(lines[name]), want, results, counted.ok[name], counted.errs[name]))
	}
	sort.Strings(figures)
	pct := 100 * float64(shown) / float64(max(counted.total(), 1))
	t.Logf("klog-%s: %d of %d syncs counted are ControllerReconcile lines (%.1f%%); %s; no trigger: %v",
		format, shown, counted.total(), pct, strings.Join(figures, "; "), reasons)
	if counted.total() < 20 || pct < 95 {
		t.Errorf("%.1f%% of %d syncs shown, want >= 95%% of at least 20", pct, counted.total())
	}
}
