package watch

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// TestTypedObjects: with Config.TypedObjects, the Added lines of an object cached from protobuf
// carry it typed (Object nil) with the same name, resourceVersion and queue figures, and
// Materialize gives the object the line carried before; updates still carry both objects
// converted, their Go types beside. Without it, nothing is typed.
func TestTypedObjects(t *testing.T) {
	pod := typedPod()
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	cached := func(rv string) *compactObject {
		p := pod.DeepCopy()
		p.ResourceVersion = rv
		c, err := compactTyped(p, gvk)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, typed := range []bool{false, true} {
		ri, out := newTestInformer(t)
		ri.cfg.TypedObjects = typed
		feed(t, ri, true, cache.Delta{Type: cache.Replaced, Object: cached("1")})
		feed(t, ri, false, cache.Delta{Type: cache.Updated, Object: cached("2")})
		evs := drainEvents(out)
		if len(evs) != 2 {
			t.Fatalf("typed=%v: %d events, want 2", typed, len(evs))
		}
		added, updated := evs[0], evs[1]
		if got := added.Obj.Typed != nil && added.Obj.Object == nil; got != typed {
			t.Errorf("typed=%v: Added line typed: %v", typed, got)
		}
		if updated.Obj.Object == nil || updated.Obj.OldObject == nil {
			t.Errorf("typed=%v: the update is not converted: %s %s", typed, updated.Type, updated.Name)
		}
		if got := updated.Obj.Typed != nil && updated.Obj.OldTyped != nil; got != typed {
			t.Errorf("typed=%v: the update carries its Go types: %v", typed, got)
		}
		want := toUnstructured(cached("1"))
		if diff := cmp.Diff(want.Object, added.Materialize().Object); diff != "" {
			t.Errorf("typed=%v: Materialize (-before +now):\n%s", typed, diff)
		}
		if added.Name != pod.Name || added.Namespace != pod.Namespace || added.ResourceVersion != "1" || !added.Obj.InitialList ||
			added.Obj.Queue == nil || added.Obj.Queue.Depth != 1 {
			t.Errorf("typed=%v: Added line %+v", typed, added)
		}
	}
}

// TestTypedListDecodedAhead: a list large enough to be decoded on another goroutine gives the
// lines it gave decoded one by one, in the list's order: adds typed, the objects the cache had
// as updates with both objects converted.
func TestTypedListDecodedAhead(t *testing.T) {
	n := aheadMin + aheadWindow/2
	objs := cachedPods(t, n)
	run := func(typed bool) []Event {
		ri, out := newTestInformer(t)
		ri.cfg.TypedObjects = typed
		// Two objects cached already (at another resourceVersion): the list updates them.
		for _, i := range []int{3, n - 2} {
			old := objs[i].DeepCopyObject().(*compactObject)
			old.meta.ResourceVersion = "0"
			if err := ri.indexer.Add(old); err != nil {
				t.Fatal(err)
			}
		}
		return listLines(t, ri, out, objs)
	}
	plain, typed := run(false), run(true)
	if len(plain) != len(typed) || len(typed) != n+1 {
		t.Fatalf("%d and %d lines, want %d", len(plain), len(typed), n+1)
	}
	for i := range typed {
		p, ty := plain[i], typed[i]
		if p.Type != ty.Type || p.Name != ty.Name || p.ResourceVersion != ty.ResourceVersion {
			t.Fatalf("line %d: %s %s@%s, want %s %s@%s", i, ty.Type, ty.Name, ty.ResourceVersion, p.Type, p.Name, p.ResourceVersion)
		}
		if ty.Type == Added && (ty.Obj.Typed == nil || ty.Obj.Object != nil) {
			t.Errorf("line %d: Added not typed", i)
		}
		if ty.Type == Updated {
			// An update carries its maps (the diff reads them) and, beside them, the same
			// objects as their Go types (the state reads them).
			if ty.Obj.Object == nil || ty.Obj.OldObject == nil || ty.Obj.Typed == nil || ty.Obj.OldTyped == nil {
				t.Fatalf("line %d: update without its maps and Go types", i)
			}
			if diff := cmp.Diff(p.Obj.OldObject.Object, ty.Obj.OldObject.Object); diff != "" {
				t.Errorf("line %d: old object (-untyped run +typed run):\n%s", i, diff)
			}
			for _, pair := range []struct {
				typed runtime.Object
				m     map[string]any
			}{{ty.Obj.Typed, ty.Obj.Object.Object}, {ty.Obj.OldTyped, ty.Obj.OldObject.Object}} {
				if diff := cmp.Diff(toUnstructured(pair.typed).Object, pair.m); diff != "" {
					t.Errorf("line %d: a Go type is not the map beside it (-typed +map):\n%s", i, diff)
				}
			}
		}
		if ty.Type.IsObject() {
			if diff := cmp.Diff(p.Obj.Object.Object, ty.Materialize().Object); diff != "" {
				t.Fatalf("line %d (-decoded one by one +ahead):\n%s", i, diff)
			}
		}
	}
}

// TestListPrepared: with Config.Prepare, a large list's added objects are handed to it decoded
// without their managedFields (and nothing else missing), and their lines carry what it read
// and no decoded object, in the list's order; TypedObject and Materialize give the object the
// line carried before, managedFields included. A resource it says nothing for (nil) gets its
// lines typed as before; updates are never prepared. With Preparer.Reads, the objects come
// without what it leaves out of their metadata and specs.
func TestListPrepared(t *testing.T) {
	n := aheadMin + aheadWindow/2
	objs := cachedPods(t, n)
	for _, mode := range []string{"prepares", "prepares with a spec read", "does not prepare"} {
		prepares, specRead := mode != "does not prepare", mode == "prepares with a spec read"
		ri, out := newTestInformer(t)
		ri.cfg.TypedObjects = true
		var seen atomic.Int64
		prepare := readFunc(func(o runtime.Object) Prepared {
			p := o.(*corev1.Pod)
			var i int
			if _, err := fmt.Sscanf(p.Name, "p%04d", &i); err != nil {
				t.Fatal(err)
			}
			full, err := objs[i].(*compactObject).typed()
			if err != nil {
				t.Fatal(err)
			}
			want := full.(*corev1.Pod)
			if len(want.ManagedFields) == 0 {
				t.Fatal("the cached pod has no managedFields")
			}
			want.ManagedFields = nil
			if specRead {
				if len(want.Spec.Containers) == 0 {
					t.Fatal("the cached pod has no containers")
				}
				want.Spec = corev1.PodSpec{Containers: make([]corev1.Container, len(want.Spec.Containers))}
				want.ObjectMeta = metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace}
			}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Errorf("%s: Prepare got (-the object without managedFields +got):\n%s", mode, diff)
			}
			seen.Add(1)
			return "read " + p.Name
		})
		var pr Preparer
		switch {
		case specRead:
			pr = Preparer{Reader: prepare, Reads: &Reads{Metadata: []string{"Name", "Namespace"}, SpecCounted: []string{"Containers"}}}
		case prepares:
			pr = Preparer{Reader: prepare}
		}
		ri.cfg.Prepare = fixedReader{pr}
		ri.setPreparer(ri.cfg.Prepare.PrepareAdded(ri.res))
		old := objs[5].DeepCopyObject().(*compactObject)
		old.meta.ResourceVersion = "0"
		if err := ri.indexer.Add(old); err != nil {
			t.Fatal(err)
		}
		evs := listLines(t, ri, out, objs)
		if len(evs) != n+1 {
			t.Fatalf("prepares=%v: %d lines, want %d", prepares, len(evs), n+1)
		}
		if want := map[bool]int64{true: int64(n - 1), false: 0}[prepares]; seen.Load() != want {
			t.Errorf("prepares=%v: Prepare read %d objects, want %d (every added one)", prepares, seen.Load(), want)
		}
		for i, ev := range evs[:n] {
			name := fmt.Sprintf("p%04d", i)
			if ev.Name != name {
				t.Fatalf("prepares=%v: line %d is %s, want %s", prepares, i, ev.Name, name)
			}
			if i == 5 {
				if ev.Type != Updated || ev.Obj.Prepared != nil || ev.Obj.Object == nil {
					t.Errorf("prepares=%v: the cached object's line %s prepared %v, want an update with its objects", prepares, ev.Type, ev.Obj.Prepared)
				}
				continue
			}
			if ev.Type != Added || ev.Obj.Queue == nil {
				t.Fatalf("prepares=%v: line %d: %s, queue %v", prepares, i, ev.Type, ev.Obj.Queue)
			}
			if !prepares {
				if ev.Obj.Prepared != nil || ev.Obj.Typed == nil {
					t.Errorf("line %d: prepared %v, typed %v; want typed only", i, ev.Obj.Prepared, ev.Obj.Typed != nil)
				}
				continue
			}
			if ev.Obj.Prepared != "read "+name || ev.Obj.Typed != nil || ev.Obj.Object != nil || !ev.HasObject() {
				t.Fatalf("line %d: prepared %v, typed %v, object %v, has object %v; want what Prepare read and no decoded object",
					i, ev.Obj.Prepared, ev.Obj.Typed != nil, ev.Obj.Object != nil, ev.HasObject())
			}
			full := ev
			if diff := cmp.Diff(toUnstructured(objs[i]).Object, full.Materialize().Object); diff != "" {
				t.Fatalf("line %d: Materialize (-cached +line):\n%s", i, diff)
			}
			typed := ev
			if p, ok := typed.TypedObject().(*corev1.Pod); !ok || len(p.ManagedFields) != 1 || p.Name != name {
				t.Fatalf("line %d: TypedObject %T, not the cached pod with its managedFields", i, typed.TypedObject())
			}
			taken := ev
			if taken.TakePrepared() != "read "+name || taken.HasObject() {
				t.Errorf("line %d: TakePrepared left an object on the line", i)
			}
		}
	}
}

// cachedPods is n pods p0000, p0001, ... at resourceVersion 1, cached from protobuf.
func cachedPods(t *testing.T, n int) []runtime.Object {
	t.Helper()
	objs := make([]runtime.Object, n)
	for i := range objs {
		p := typedPod()
		p.Name, p.ResourceVersion = fmt.Sprintf("p%04d", i), "1"
		c, err := compactTyped(p, schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = c
	}
	return objs
}

// listLines feeds the informer an initial list of objs and returns every line it emitted.
func listLines(t *testing.T, ri *resourceInformer, out chan Event, objs []runtime.Object) []Event {
	t.Helper()
	done := make(chan []Event)
	go func() {
		var evs []Event
		for ev := range out {
			evs = append(evs, ev)
		}
		done <- evs
	}()
	feed(t, ri, true, replacedAll("9", objs...))
	close(out)
	return <-done
}

// readFunc is a test's ObjectReader.
type readFunc func(runtime.Object) Prepared

func (f readFunc) ReadObject(o runtime.Object) Prepared { return f(o) }

// fixedReader is a test's AddedReader: the same Preparer for every resource.
type fixedReader struct{ p Preparer }

func (r fixedReader) PrepareAdded(discovery.Resource) Preparer { return r.p }
