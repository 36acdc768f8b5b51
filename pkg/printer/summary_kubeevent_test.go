package printer

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The exit summary counts the KubeEvent lines (--events) beside the object events: nothing
// printed goes uncounted.
func TestSummaryCountsKubeEvents(t *testing.T) {
	s := NewSummary()
	s.Add(&watch.Event{Type: watch.Added, Delta: watch.DeltaAdded})
	for range 2 {
		s.Add(&watch.Event{Type: watch.KubeEvent, Delta: watch.DeltaAdded, Kube: &watch.KubeEventInfo{Reason: "ScalingReplicaSet"}})
	}
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "events: Added 1 (Added 1); KubeEvent 2\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}
