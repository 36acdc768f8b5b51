package scrape

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Real pages: kube-controller-manager v1.37 (queues labelled name only, no reconcile metrics)
// and a controller-runtime v0.25 manager whose reconciles all fail (name+controller, depth also
// by priority), both captured from the test cluster's processes.
func TestParseRealPages(t *testing.T) {
	kcm, err := ParsePage(bytes.NewReader(readTestdata(t, "kube-controller-manager-v1.37.txt")))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, q := range kcm.Queues {
		names = append(names, q.Name)
		if q.Controller != "" || q.HasReconciles || q.HasWorkers {
			t.Errorf("kube-controller-manager queue %s: %+v, want name only and no reconcile metrics", q.Name, q)
		}
	}
	if diff := cmp.Diff([]string{"DynamicServingCertificateController", "deployment", "namespace", "replicaset"}, names); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	if d := kcm.Queues[1]; d.Adds != 15 || d.Retries != 11 || !d.HasQueueLatency || !d.HasWorkLatency {
		t.Errorf("deployment queue = %+v", d)
	}

	cr, err := ParsePage(bytes.NewReader(readTestdata(t, "controller-runtime-v0.25.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Queues) != 1 {
		t.Fatalf("controller-runtime queues = %+v, want widget only", cr.Queues)
	}
	w := cr.Queues[0]
	if w.Name != "widget" || w.Controller != "widget" || w.Adds != 11 || w.Retries != 11 ||
		!w.HasReconciles || w.Reconciles != (watch.ReconcileResults{Error: 11}) || w.ReconcileErrors != 11 ||
		!w.HasWorkers || w.MaxConcurrentReconciles != 2 || w.ActiveWorkers != 0 || !w.HasReconcileTime {
		t.Errorf("widget queue = %+v", w)
	}
	if cr.Families < 10 {
		t.Errorf("families = %d", cr.Families)
	}
}

// Queue label shapes: name only, name+controller, name+controller+priority; reconcile metrics
// find their controller's queue in each.
func TestParseLabelShapes(t *testing.T) {
	const reconciles = `controller_runtime_reconcile_total{controller="c",result="success"} 5
controller_runtime_reconcile_total{controller="c",result="requeue_after"} 2
controller_runtime_active_workers{controller="c"} 1
controller_runtime_max_concurrent_reconciles{controller="c"} 4
`
	tests := []struct {
		name, page string
		want       watch.QueueSample
	}{
		{"name only (older controller-runtime)", `workqueue_adds_total{name="c"} 7` + "\n" + reconciles,
			watch.QueueSample{Name: "c", Adds: 7}},
		{"name and controller", `workqueue_adds_total{controller="c",name="c"} 7` + "\n" + reconciles,
			watch.QueueSample{Name: "c", Controller: "c", Adds: 7}},
		{"name, controller and priority", `workqueue_depth{controller="c",name="c",priority="0"} 2
workqueue_depth{controller="c",name="c",priority="-100"} 3
workqueue_adds_total{controller="c",name="c"} 7
` + reconciles,
			watch.QueueSample{Name: "c", Controller: "c", Adds: 7, Depth: 5}},
		{"reconcile metrics without a queue", reconciles, watch.QueueSample{Name: "c", Controller: "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.page))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.HasReconciles, want.Reconciles = true, watch.ReconcileResults{Success: 5, RequeueAfter: 2}
			want.HasWorkers, want.ActiveWorkers, want.MaxConcurrentReconciles = true, 1, 4
			if diff := cmp.Diff([]watch.QueueSample{want}, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := func(adds, reconciles float64) watch.QueueSample {
		return watch.QueueSample{Name: "w", Controller: "w", Adds: adds, HasReconciles: true, Reconciles: watch.ReconcileResults{Success: reconciles}}
	}
	tr := NewTracker()
	steps := []struct {
		at   time.Duration
		in   []watch.QueueSample
		want []watch.QueueSample
	}{
		// First sight: a line, no rates.
		{0, []watch.QueueSample{q(10, 10)}, []watch.QueueSample{q(10, 10)}},
		// Moved: rates over the 2s since the previous scrape.
		{2 * time.Second, []watch.QueueSample{q(14, 12)}, []watch.QueueSample{func() watch.QueueSample {
			s := q(14, 12)
			s.HasRates, s.AddsPerSecond, s.ReconcilesPerSecond = true, 2, 1
			return s
		}()}},
		// Idle: folded, three times.
		{4 * time.Second, []watch.QueueSample{q(14, 12)}, nil},
		{6 * time.Second, []watch.QueueSample{q(14, 12)}, nil},
		{8 * time.Second, []watch.QueueSample{q(14, 12)}, nil},
		// Moves again, faster than before: the line says three scrapes were folded; the rate is
		// since the last scrape.
		{10 * time.Second, []watch.QueueSample{q(54, 12)}, []watch.QueueSample{func() watch.QueueSample {
			s := q(54, 12)
			s.HasRates, s.AddsPerSecond, s.Folded = true, 20, 3
			return s
		}()}},
		// A restart (counters went down): a line without rates.
		{12 * time.Second, []watch.QueueSample{q(1, 1)}, []watch.QueueSample{q(1, 1)}},
	}
	for i, st := range steps {
		got := tr.Next(t0.Add(st.at), st.in)
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("step %d (-want +got):\n%s", i, diff)
		}
	}
}

// A controller whose requeue timers move its counters at a steady rate gets a line a minute;
// a change of depth, a failure, or adds since the last line at more than twice its rate get
// one at once.
func TestTrackerSteady(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := NewTracker()
	var adds, reconciles, retries, depth float64
	var lines []time.Duration
	var last watch.QueueSample
	scrape := func(at time.Duration) {
		got := tr.Next(t0.Add(at), []watch.QueueSample{{Name: "w", Controller: "w", Adds: adds, Retries: retries, Depth: depth,
			HasReconciles: true, Reconciles: watch.ReconcileResults{RequeueAfter: reconciles}}})
		if len(got) > 0 {
			lines, last = append(lines, at), got[0]
		}
	}
	at := time.Duration(0)
	step := func(n int, perScrape float64) {
		for range n {
			at += 5 * time.Second
			adds += perScrape
			reconciles += perScrape
			scrape(at)
		}
	}
	scrape(0)
	step(36, 5) // three minutes of 1 add a second
	// The first line, the one that has a rate to compare with, then one a minute.
	want := []time.Duration{0, 5 * time.Second, 65 * time.Second, 125 * time.Second}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("lines at (-want +got):\n%s", diff)
	}
	if last.Steady != 11 || last.Folded != 0 {
		t.Errorf("last line: %d steady, %d folded scrapes before it; want 11, 0", last.Steady, last.Folded)
	}
	for _, tt := range []struct {
		name   string
		change func()
	}{
		{"depth", func() { depth++ }},
		{"a failure", func() { retries++ }},
		{"a burst of adds", func() { adds += 100 }},
	} {
		lines = nil
		step(1, 5)
		tt.change()
		step(1, 5)
		if len(lines) == 0 || lines[len(lines)-1] != at {
			t.Errorf("%s: lines at %v, want one at %v", tt.name, lines, at)
		}
		step(1, 5) // back to steady; the baseline rate settles
		step(1, 5)
		lines = nil
		step(3, 5)
		if len(lines) != 0 {
			t.Errorf("%s, then steady again: lines at %v, want none", tt.name, lines)
		}
	}
}
