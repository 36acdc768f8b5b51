package replayrun

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func genObj(rv string, gen int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetResourceVersion(rv)
	u.SetGeneration(gen)
	return u
}

// A recorded reconcile would not have run when every one of its triggers is filtered; a
// reconcile with one passing trigger, a retry, or triggers the recording capped is not counted.
func TestPredicateCheck(t *testing.T) {
	ps, err := watch.ParsePredicates([]string{"generation"})
	if err != nil {
		t.Fatal(err)
	}
	c := newPredicateCheck(ps)
	upd := func(old, cur *unstructured.Unstructured) *watch.Event {
		return &watch.Event{
			Type: watch.Updated,
			Obj: watch.ObjectInfo{
				Delta:              watch.DeltaUpdated,
				Object:             cur,
				OldObject:          old,
				OldResourceVersion: old.GetResourceVersion(),
			},
			ResourceVersion: cur.GetResourceVersion(),
		}
	}
	rec := func(count int, rvs ...string) *watch.Event {
		ev := &watch.Event{Type: watch.Reconciled, Queued: watch.QueuedInfo{TriggerCount: count}}
		for _, rv := range rvs {
			ev.Queued.Triggers = append(ev.Queued.Triggers, watch.Trigger{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: rv})
		}
		return ev
	}
	events := []*watch.Event{
		{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: genObj("1", 1)}, ResourceVersion: "1"},
		upd(genObj("1", 1), genObj("2", 1)), // status only: filtered
		upd(genObj("2", 1), genObj("3", 1)), // filtered
		upd(genObj("3", 1), genObj("4", 2)), // spec: passes
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{TriggerCount: 1, Triggers: []watch.Trigger{{Type: watch.Added, Delta: watch.DeltaAdded, ResourceVersion: "1"}}}}, // the create: runs
		rec(2, "2", "3"),  // only filtered events: saved
		rec(2, "3", "4"),  // one passes: runs
		rec(12, "2", "3"), // capped: cannot tell
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{Requeue: true}}, // a retry
	}
	for _, ev := range events {
		c.observe(ev)
	}
	if events[1].Obj.Filtered != "generation" || events[3].Obj.Filtered != "" {
		t.Errorf("filtered marks: %q, %q", events[1].Obj.Filtered, events[3].Obj.Filtered)
	}
	r := c.report("generation")
	if r.Reconciles != 5 || r.Saved != 1 || r.Unknown != 1 || !r.Replay || r.Predicates != "generation" {
		t.Errorf("report %+v, want 5 reconciles, 1 saved, 1 unknown", r)
	}
}
