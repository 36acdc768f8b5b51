package ctrllog

import (
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	widgets     = discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}
	deployments = discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	t0          = time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
)

func objEvent(res discovery.Resource, typ watch.Type, ns, name, rv string, at time.Time, owners ...watch.Owner) *watch.Event {
	return &watch.Event{Type: typ, Obj: watch.ObjectInfo{Delta: watch.Delta(typ), Owners: owners}, Resource: res, Namespace: ns, Name: name, ResourceVersion: rv, Time: at}
}

func rec(id, ns, name string, start time.Time, result string) Reconcile {
	return Reconcile{Controller: "widget", Object: ObjectRef{Kind: "Widget", Namespace: ns, Name: name}, ReconcileID: id,
		Start: start, End: start.Add(5 * time.Millisecond), Precise: true, Result: result, Read: start}
}

func rvs(ev watch.Event) []string {
	var out []string
	for _, t := range ev.Queued.Triggers {
		out = append(out, t.ResourceVersion)
	}
	return out
}

// Each reconcile's triggers are its own object's events since the same controller's previous
// reconcile of it, up to its start: another object's events are not its triggers (a reconcile
// attributed to the wrong object), and an event after it started is the next reconcile's.
func TestJoinTriggersOfItsObjectBeforeItsStart(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Skew: 10 * time.Millisecond})
	j.Observe(objEvent(widgets, watch.Added, "demo", "shop", "1", t0))
	j.Observe(objEvent(widgets, watch.Updated, "demo", "other", "2", t0.Add(5*time.Millisecond)))
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "3", t0.Add(10*time.Millisecond)))
	j.Add(rec("a", "demo", "shop", t0.Add(50*time.Millisecond), ResultOK))
	// After the first reconcile started: the second's trigger.
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "4", t0.Add(2*time.Second)))
	j.Add(rec("b", "demo", "shop", t0.Add(3*time.Second), ResultOK))
	evs := j.Flush()
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	first, second := evs[0], evs[1]
	if first.Reconcile.ReconcileID != "a" || first.Key != "demo/shop" || first.Resource.Kind != "Widget" {
		t.Fatalf("first = %+v", first)
	}
	if got := rvs(first); first.Queued.TriggerCount != 2 || len(got) != 2 || got[0] != "1" || got[1] != "3" {
		t.Errorf("first reconcile's triggers = %v (count %d), want rv 1 and 3 (not demo/other's 2, not the later 4)", got, first.Queued.TriggerCount)
	}
	if got := rvs(second); second.Queued.TriggerCount != 1 || got[0] != "4" {
		t.Errorf("second reconcile's triggers = %v, want rv 4 only", got)
	}
}

// An event that comes to this machine a little after the reconcile started by the log's clock
// (both informers heard of the write at about the same time) is within the skew tolerated.
func TestJoinSkew(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Skew: 100 * time.Millisecond})
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "7", t0.Add(30*time.Millisecond)))
	j.Add(rec("a", "demo", "shop", t0, ResultOK))
	ev := j.Flush()[0]
	if ev.Queued.TriggerCount != 1 {
		t.Fatalf("trigger count %d, want 1 (30ms after the start, within 100ms skew)", ev.Queued.TriggerCount)
	}
}

// With no trigger, a reconcile says why it ran: first, a retry after an error, a requeueAfter,
// a resource not watched.
func TestJoinReasons(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Owned: []discovery.Resource{deployments}})
	j.Add(rec("a", "demo", "shop", t0, ResultError))
	j.Add(rec("b", "demo", "shop", t0.Add(time.Second), ResultRequeueAfter))
	j.Add(rec("c", "demo", "shop", t0.Add(2*time.Second), ResultOK))
	j.Add(rec("d", "demo", "shop", t0.Add(3*time.Second), ResultOK))
	other := rec("e", "demo", "cm", t0.Add(4*time.Second), ResultOK)
	other.Object.Kind = "ConfigMap"
	j.Add(other)
	evs := j.Flush()
	want := []string{ReasonFirst, ReasonRetry, ReasonRequeueAfter, ReasonNoEvent, ReasonNotWatched}
	for i, ev := range evs {
		if ev.Lifecycle.Reason != want[i] || ev.Reconcile.ReasonMessage == "" {
			t.Errorf("reconcile %s: reason %q (%q), want %q", ev.Reconcile.ReconcileID, ev.Lifecycle.Reason, ev.Reconcile.ReasonMessage, want[i])
		}
	}
	if evs[4].Reconcile.ReasonMessage != "ConfigMap demo/cm is not watched: add configmap to the watched resources (or to --owned-resources) to see what triggers it" {
		t.Errorf("not watched: %q", evs[4].Reconcile.ReasonMessage)
	}
}

// With --owned, an owned object's event is a trigger of its owner's reconcile, naming the object.
func TestJoinOwned(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Owned: []discovery.Resource{deployments}})
	j.Observe(objEvent(deployments, watch.Updated, "demo", "shop-web", "9", t0, watch.Owner{Kind: "Widget", Name: "shop"}))
	j.Add(rec("a", "demo", "shop", t0.Add(time.Second), ResultOK))
	ev := j.Flush()[0]
	if ev.Queued.TriggerCount != 1 || ev.Queued.Triggers[0].Resource != "deployments.apps" || ev.Queued.Triggers[0].Key != "demo/shop-web" {
		t.Fatalf("triggers %+v, want the Deployment's update", ev.Queued.Triggers)
	}
}

// Reconciles are held until Hold passed since they were read, and come out in the logs' order.
func TestJoinHoldAndOrder(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Hold: time.Second})
	b := rec("b", "demo", "b", t0.Add(time.Second), ResultOK)
	a := rec("a", "demo", "a", t0, ResultOK)
	a.Read, b.Read = t0.Add(1500*time.Millisecond), t0.Add(1200*time.Millisecond)
	j.Add(b)
	j.Add(a)
	if evs := j.Due(t0.Add(2 * time.Second)); len(evs) != 0 {
		t.Fatalf("due before the hold: %d", len(evs))
	}
	evs := j.Due(t0.Add(3 * time.Second))
	if len(evs) != 2 || evs[0].Reconcile.ReconcileID != "a" {
		t.Fatalf("due = %v, want a then b", evs)
	}
}

// Within the skew, an event still goes to the reconcile that was running when it came, not to
// one that had started before it: the next reconcile's start bounds the previous one's events.
func TestJoinSkewBoundedByNextReconcile(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Skew: 100 * time.Millisecond})
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "1", t0.Add(2*time.Millisecond)))
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "2", t0.Add(12*time.Millisecond)))
	j.Add(rec("a", "demo", "shop", t0, ResultOK))
	j.Add(rec("b", "demo", "shop", t0.Add(10*time.Millisecond), ResultOK))
	evs := j.Flush()
	if got := rvs(evs[0]); len(got) != 1 || got[0] != "1" {
		t.Errorf("first reconcile's triggers %v, want rv 1", got)
	}
	if got := rvs(evs[1]); len(got) != 1 || got[0] != "2" {
		t.Errorf("second reconcile's triggers %v, want rv 2", got)
	}
}

// A log with every namespace's reconciles (kube-controller-manager's): only the watched
// namespace's (and cluster-scoped objects') become lines; the others are counted.
func TestJoinNamespaceScope(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Namespace: "demo"})
	j.Add(rec("a", "demo", "shop", t0, ResultOK))
	j.Add(rec("b", "kube-system", "shop", t0, ResultOK))
	j.Add(rec("c", "", "node-1", t0, ResultOK))
	evs := j.Flush()
	if len(evs) != 2 || evs[0].Namespace != "demo" || evs[1].Name != "node-1" || j.OutOfScope != 1 {
		t.Fatalf("%d lines %v, %d out of scope", len(evs), evs, j.OutOfScope)
	}
}

// With --predicate, a reconcile whose every trigger a predicate kept out of the workqueue is
// one the predicate would have saved: its filtered triggers are counted.
func TestJoinFilteredTriggers(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}})
	status := objEvent(widgets, watch.Updated, "demo", "shop", "1", t0)
	status.Obj.Filtered = "generation"
	j.Observe(status)
	j.Add(rec("a", "demo", "shop", t0.Add(time.Second), ResultOK))
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "2", t0.Add(2*time.Second)))
	j.Observe(status2(t0.Add(2500 * time.Millisecond)))
	j.Add(rec("b", "demo", "shop", t0.Add(3*time.Second), ResultOK))
	evs := j.Flush()
	if evs[0].Reconcile.FilteredTriggers != 1 || evs[0].Queued.TriggerCount != 1 {
		t.Errorf("first: %d of %d triggers filtered, want 1 of 1", evs[0].Reconcile.FilteredTriggers, evs[0].Queued.TriggerCount)
	}
	if evs[1].Reconcile.FilteredTriggers != 1 || evs[1].Queued.TriggerCount != 2 {
		t.Errorf("second: %d of %d triggers filtered, want 1 of 2", evs[1].Reconcile.FilteredTriggers, evs[1].Queued.TriggerCount)
	}
}

func status2(at time.Time) *watch.Event {
	ev := objEvent(widgets, watch.Updated, "demo", "shop", "3", at)
	ev.Obj.Filtered = "generation"
	return ev
}
