package watch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var cms = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}

func cm(name, rv string) *unstructured.Unstructured {
	return testutil.Object("v1", "ConfigMap", "ns", name, rv)
}

// newTestInformer returns a resource informer whose delta processor can be fed by hand; its
// queue has no workers, so depths only grow.
func newTestInformer(t *testing.T) (*resourceInformer, chan Event) {
	t.Helper()
	out := make(chan Event, 100)
	ri, err := newResourceInformer(Config{Client: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), Resources: []discovery.Resource{cms}}, cms, out)
	if err != nil {
		t.Fatal(err)
	}
	ri.ctx = context.Background()
	ri.start = time.Now()
	t.Cleanup(ri.queue.q.ShutDown)
	return ri, out
}

type line struct {
	Type      Type
	Delta     Delta
	Name      string
	RV, OldRV string
	Initial   bool
	Tombstone bool
	Counts    RelistCounts
	Items     int
	Depth     int64
}

func drain(out chan Event) []line { return linesOf(drainEvents(out)) }

func linesOf(evs []Event) []line {
	var got []line
	for _, ev := range evs {
		l := line{Type: ev.Type, Delta: ev.Obj.Delta, Name: ev.Name, RV: ev.ResourceVersion, OldRV: ev.Obj.OldResourceVersion,
			Initial: ev.Obj.InitialList, Tombstone: ev.Obj.Tombstone, Counts: ev.Lifecycle.Counts, Items: ev.Lifecycle.Items}
		if ev.Obj.Queue != nil {
			l.Depth = ev.Obj.Queue.Depth
		}
		if ev.Type == Relist || ev.Type == Synced {
			l.RV = ""
		}
		got = append(got, l)
	}
	return got
}

func feed(t *testing.T, ri *resourceInformer, initial bool, deltas ...cache.Delta) {
	t.Helper()
	for _, d := range deltas {
		if err := ri.process(cache.Deltas{d}, initial); err != nil {
			t.Fatal(err)
		}
	}
}

func replacedAll(rv string, objs ...runtime.Object) cache.Delta {
	var items []interface{}
	for _, o := range objs {
		items = append(items, o)
	}
	return cache.Delta{Type: cache.ReplacedAll, Object: cache.ReplacedAllInfo{ResourceVersion: rv, Objects: items}}
}

// typedCM is cm as the protobuf path caches it: a *corev1.ConfigMap with its apiVersion and kind.
func typedCM(name, rv string) runtime.Object {
	c := &corev1.ConfigMap{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cm(name, rv).Object, c); err != nil {
		panic(err)
	}
	return c
}

// The delta processor works the same on the objects of both wires: unstructured (JSON) and
// typed (protobuf, the compact cache), and emits unstructured objects for either.
func TestProcessLifecycle(t *testing.T) {
	forms := []struct {
		name string
		cm   func(name, rv string) runtime.Object
	}{
		{"json", func(name, rv string) runtime.Object { return cm(name, rv) }},
		{"protobuf", typedCM},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) { testProcessLifecycle(t, f.cm) })
	}
}

func testProcessLifecycle(t *testing.T, cm func(name, rv string) runtime.Object) {
	ri, out := newTestInformer(t)
	feed(t, ri, true, replacedAll("10", cm("a", "1"), cm("b", "2"), cm("c", "3")))
	feed(t, ri, false,
		cache.Delta{Type: cache.Added, Object: cm("d", "11")},
		cache.Delta{Type: cache.Updated, Object: cm("a", "12")},
		cache.Delta{Type: cache.Deleted, Object: cm("d", "13")},
		cache.Delta{Type: cache.SyncAll, Object: cache.SyncAllInfo{}},
	)
	// A relist: b gone, a changed, c unchanged, e new.
	ri.tap.pendingList = []listInfo{{reason: "Expired: too old", fromRV: "13"}}
	feed(t, ri, false, replacedAll("20", cm("a", "15"), cm("c", "3"), cm("e", "16")))
	// A tombstone as a non-atomic queue hands it over.
	feed(t, ri, false, cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/e", Obj: cm("e", "16")}})

	evs := drainEvents(out)
	got := linesOf(evs)
	for _, ev := range evs {
		if ev.Name == "" {
			continue
		}
		if ev.Obj.Object == nil || ev.Obj.Object.GetKind() != "ConfigMap" || ev.Obj.Object.GetAPIVersion() != "v1" || ev.Obj.Object.GetName() != ev.Name {
			t.Errorf("%s %s: object %v, want an unstructured v1 ConfigMap of that name", ev.Type, ev.Name, ev.Obj.Object)
		}
		if ev.Type == Updated && (ev.Obj.OldObject == nil || ev.Obj.OldObject.GetResourceVersion() != ev.Obj.OldResourceVersion) {
			t.Errorf("%s %s: old object %v, want resourceVersion %s", ev.Type, ev.Name, ev.Obj.OldObject, ev.Obj.OldResourceVersion)
		}
	}
	for _, o := range ri.indexer.List() {
		if want := fmt.Sprintf("%T", cm("x", "1")); fmt.Sprintf("%T", o) != want {
			t.Errorf("cache holds a %T, want a %s as the lister gave it", o, want)
		}
	}
	// A resync walks the cache in map order, as client-go's does: compare those lines sorted.
	if len(got) > 10 {
		slices.SortFunc(got[8:11], func(a, b line) int { return strings.Compare(a.Name, b.Name) })
	}
	want := []line{
		{Type: Added, Delta: DeltaReplaced, Name: "a", RV: "1", Initial: true, Depth: 1},
		{Type: Added, Delta: DeltaReplaced, Name: "b", RV: "2", Initial: true, Depth: 2},
		{Type: Added, Delta: DeltaReplaced, Name: "c", RV: "3", Initial: true, Depth: 3},
		{Type: Synced, Items: 3},
		{Type: Added, Delta: DeltaAdded, Name: "d", RV: "11", Depth: 4},
		{Type: Updated, Delta: DeltaUpdated, Name: "a", RV: "12", OldRV: "1", Depth: 4}, // a coalesces
		{Type: Deleted, Delta: DeltaDeleted, Name: "d", RV: "13", Depth: 4},
		{Type: Resync, Items: 3},
		{Type: Updated, Delta: DeltaSync, Name: "a", RV: "12", OldRV: "12", Depth: 4},
		{Type: Updated, Delta: DeltaSync, Name: "b", RV: "2", OldRV: "2", Depth: 4},
		{Type: Updated, Delta: DeltaSync, Name: "c", RV: "3", OldRV: "3", Depth: 4},
		{Type: Relist, Counts: RelistCounts{Added: 1, Updated: 1, Deleted: 1, Unchanged: 1}},
		{Type: Deleted, Delta: DeltaDeleted, Name: "b", RV: "2", Tombstone: true, Depth: 4},
		{Type: Updated, Delta: DeltaReplaced, Name: "a", RV: "15", OldRV: "12", Depth: 4},
		{Type: Updated, Delta: DeltaReplaced, Name: "c", RV: "3", OldRV: "3", Depth: 4},
		{Type: Added, Delta: DeltaReplaced, Name: "e", RV: "16", Depth: 5},
		{Type: Deleted, Delta: DeltaDeleted, Name: "e", RV: "16", Tombstone: true, Depth: 5},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if keys := ri.indexer.ListKeys(); len(keys) != 2 {
		t.Errorf("cache holds %v, want ns/a and ns/c", keys)
	}
}

func TestWorkQueueBackoffAndCoalescing(t *testing.T) {
	wq, err := newWorkQueue("test", QueueConfig{Workers: 1, FailRate: 1, Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		wq.add("ns/x", Trigger{Type: Updated, ResourceVersion: fmt.Sprint(i)}) // coalesces: one add
	}
	if f := wq.figures(); f.Depth != 1 || f.Adds != 1 {
		t.Fatalf("after 3 adds of one key: %+v", f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 10)
	var wg waitGroup
	wq.run(ctx, &wg.WaitGroup, func(ev Event) { events <- ev })
	for i := range 4 {
		ev := <-events
		if ev.Key != "ns/x" || !ev.Queued.Failed || ev.Queued.Requeues != i {
			t.Errorf("reconcile %d: %+v", i, ev)
		}
		// The first reconcile takes the three coalesced events; each retry comes from the
		// failure before it, with no event.
		if i == 0 && (ev.Queued.TriggerCount != 3 || len(ev.Queued.Triggers) != 3 || ev.Queued.Requeue || ev.Queued.Triggers[2].ResourceVersion != "2") {
			t.Errorf("first reconcile: triggers %d %+v, requeue %v; want the 3 events", ev.Queued.TriggerCount, ev.Queued.Triggers, ev.Queued.Requeue)
		}
		if i > 0 && (ev.Queued.TriggerCount != 0 || !ev.Queued.Requeue || ev.Queued.RequeueReason == "") {
			t.Errorf("retry %d: triggers %d, requeue %v %q; want a requeue with no event", i, ev.Queued.TriggerCount, ev.Queued.Requeue, ev.Queued.RequeueReason)
		}
	}
	cancel()
	wg.Wait()
	if f := wq.figures(); f.Retries < 4 {
		t.Errorf("retries = %d, want >= 4", f.Retries)
	}
	if _, err := newWorkQueue("x", QueueConfig{RateLimiter: "nope"}); err == nil {
		t.Error("unknown rate limiter accepted")
	}
}

type waitGroup struct{ sync.WaitGroup }

// Triggers are capped, the oldest two and the newest kept; the count stays exact.
func TestTriggersCapped(t *testing.T) {
	var p pending
	for i := range 25 {
		p.note(Trigger{ResourceVersion: fmt.Sprint(i)})
	}
	var rvs []string
	for _, tr := range p.triggers {
		rvs = append(rvs, tr.ResourceVersion)
	}
	want := []string{"0", "1", "17", "18", "19", "20", "21", "22", "23", "24"}
	if p.count != 25 || !slices.Equal(rvs, want) {
		t.Errorf("count %d, triggers %v; want 25, %v", p.count, rvs, want)
	}
}

// Every event the informer enqueues is a trigger of exactly one reconcile: the counts add up.
func TestTriggerCountsAddUp(t *testing.T) {
	wq, err := newWorkQueue("test", QueueConfig{Workers: 1, ReconcileTime: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 1000)
	var wg waitGroup
	wq.run(ctx, &wg.WaitGroup, func(ev Event) { events <- ev })
	const adds = 300
	for i := range adds {
		wq.add(fmt.Sprintf("ns/%d", i%3), Trigger{Type: Updated, ResourceVersion: fmt.Sprint(i)})
	}
	total, coalesced := 0, false
	for total < adds {
		ev := <-events
		total += ev.Queued.TriggerCount
		coalesced = coalesced || ev.Queued.TriggerCount >= 2
	}
	cancel()
	wg.Wait()
	if total != adds || !coalesced {
		t.Errorf("trigger counts add up to %d (coalesced: %v), want %d with some >= 2", total, coalesced, adds)
	}
}

// --drop-managed-fields works on both wires' objects.
func TestDropManagedFieldsTransformTyped(t *testing.T) {
	mf := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ManagedFields: mf}}
	u := cm("a", "1")
	u.SetManagedFields(mf)
	for _, o := range []runtime.Object{typed, u} {
		if _, err := dropManagedFieldsTransform(o); err != nil {
			t.Fatal(err)
		}
		a, _ := meta.Accessor(o)
		if a.GetManagedFields() != nil {
			t.Errorf("%T: managedFields %v left", o, a.GetManagedFields())
		}
	}
}
