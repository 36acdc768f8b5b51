package printer

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The exit summary counts the KubeEvent lines (--events) beside the object events: nothing
// printed goes uncounted.
func TestSummaryCountsKubeEvents(t *testing.T) {
	s := summary.New()
	s.Add(&watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}})
	for range 2 {
		s.Add(&watch.Event{Type: watch.KubeEvent, Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}, Kube: &watch.KubeEventInfo{Reason: "ScalingReplicaSet"}})
	}
	var b strings.Builder
	if err := writeSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "events: Added 1 (Added 1); KubeEvent 2\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// A summary rebuilt from a recording without Reconciled lines says the reconciles are not known,
// instead of "0 reconciles" and the depth after the last enqueue as the final one.
func TestSummaryFromRecordingWithoutReconciles(t *testing.T) {
	for _, fromRecording := range []bool{false, true} {
		s := summary.New()
		s.FromRecording = fromRecording
		s.Add(&watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Queue: &watch.QueueFigures{Depth: 1, Adds: 1}}})
		var b strings.Builder
		if err := writeSummary(&b, s); err != nil {
			t.Fatal(err)
		}
		unknown := strings.Contains(b.String(), "simulated queue (the plugin's own workqueue, not your controller's): 1 adds, 0 retries, depth max 1; simulated reconciles not recorded")
		if unknown != fromRecording || strings.Contains(b.String(), "0 simulated reconciles") == fromRecording {
			t.Errorf("FromRecording %v:\n%s", fromRecording, b.String())
		}
	}
}
