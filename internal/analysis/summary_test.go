package analysis

import (
	"testing"

	"github.com/kubectl-informer/kubectl-informer/internal/scrape"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// With controllers' logs read, each ControllerQueue line of a controller says how many of its
// reconciles the logs showed so far; without them it says nothing of it.
func TestSummaryLogShows(t *testing.T) {
	for _, read := range []bool{true, false} {
		s := NewSummary()
		s.LogsRead = read
		for range 3 {
			s.Add(&watch.Event{Type: watch.ControllerReconcile, Reconcile: &watch.ReconcileInfo{Controller: "widget", Result: "unknown"}})
		}
		q := &scrape.QueueSample{Name: "widget", Controller: "widget", HasReconciles: true, Reconciles: scrape.Reconciles{Success: 10}}
		s.Add(&watch.Event{Type: watch.ControllerQueue, Sample: q})
		if q.HasLogShows != read || (read && q.LogShows != 3) {
			t.Errorf("logs read %v: HasLogShows %v, LogShows %d; want %v, 3", read, q.HasLogShows, q.LogShows, read)
		}
		if s.Logged["widget"].Counted != 10 {
			t.Errorf("counted %v, want 10", s.Logged["widget"].Counted)
		}
	}
}
