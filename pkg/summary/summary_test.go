package summary

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// With controllers' logs read, each ControllerQueue line of a controller says how many of its
// reconciles the logs showed so far; without them it says nothing of it.
func TestSummaryLogShows(t *testing.T) {
	for _, read := range []bool{true, false} {
		s := New()
		s.LogsRead = read
		for range 3 {
			s.Add(&watch.Event{Type: watch.ControllerReconcile, Reconcile: &watch.ReconcileInfo{Controller: "widget", Result: "unknown"}})
		}
		q := &watch.QueueSample{Name: "widget", Controller: "widget", HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 10}}
		s.Add(&watch.Event{Type: watch.ControllerQueue, Scrape: watch.ScrapeInfo{Sample: q}})
		if q.HasLogShows != read || (read && q.LogShows != 3) {
			t.Errorf("logs read %v: HasLogShows %v, LogShows %d; want %v, 3", read, q.HasLogShows, q.LogShows, read)
		}
		if s.Logged["widget"].Counted != 10 {
			t.Errorf("counted %v, want 10", s.Logged["widget"].Counted)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {1, 10}} {
		if got := Percentile(ds, tt.p); got != tt.want {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if Percentile(nil, 0.5) != 0 {
		t.Error("empty percentile")
	}
}

// The summary counts what the step marked and made: noise, hot loops and their ends, folded
// updates (not as events).
func TestSummaryCounts(t *testing.T) {
	s := New()
	for _, ev := range []watch.Event{
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated, Ignored: true}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated, Ignored: true}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated, OutOfFocus: true}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced}},
		{Type: watch.HotLoop, HotLoop: &watch.HotLoopInfo{Updates: 11}},
		{Type: watch.HotLoopEnded, Key: "demo/c", HotLoop: &watch.HotLoopInfo{Updates: 20}},
		{Type: watch.Folded, HotLoop: &watch.HotLoopInfo{Updates: 512}},
		{Type: watch.Watch, Resource: summaryCMs}, {Type: watch.Watch, Resource: summaryCMs},
		{Type: watch.List}, {Type: watch.Bookmark, Lifecycle: watch.LifecycleInfo{InitialEventsEnd: true}},
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{TriggerCount: 3, Failed: true}, Obj: watch.ObjectInfo{Queue: &watch.QueueFigures{Depth: 4}}},
	} {
		s.Add(&ev)
	}
	got := []int{s.Ignored, s.OutOfFocus, s.HotLoops, len(s.Ended), s.FoldedUpdates, s.FoldedLines, s.ByType[watch.Updated],
		s.ByDelta[watch.Updated][watch.DeltaUpdated], s.Objects, s.WatchRestarts(), s.Lists(), s.Reconciles, s.Failed, s.Triggers, int(s.MaxDepth)}
	want := []int{2, 1, 1, 1, 512, 1, 4, 3, 4, 1, 2, 1, 1, 3, 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

var summaryCMs = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
