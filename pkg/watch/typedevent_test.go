package watch

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
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
		if got := added.Typed != nil && added.Object == nil; got != typed {
			t.Errorf("typed=%v: Added line typed: %v", typed, got)
		}
		if updated.Object == nil || updated.OldObject == nil {
			t.Errorf("typed=%v: the update is not converted: %s %s", typed, updated.Type, updated.Name)
		}
		if got := updated.Typed != nil && updated.OldTyped != nil; got != typed {
			t.Errorf("typed=%v: the update carries its Go types: %v", typed, got)
		}
		want := toUnstructured(cached("1"))
		if diff := cmp.Diff(want.Object, added.Materialize().Object); diff != "" {
			t.Errorf("typed=%v: Materialize (-before +now):\n%s", typed, diff)
		}
		if added.Name != pod.Name || added.Namespace != pod.Namespace || added.ResourceVersion != "1" || !added.InitialList ||
			added.Queue == nil || added.Queue.Depth != 1 {
			t.Errorf("typed=%v: Added line %+v", typed, added)
		}
	}
}

// TestTypedListDecodedAhead: a list large enough to be decoded on another goroutine gives the
// lines it gave decoded one by one, in the list's order: adds typed, the objects the cache had
// as updates with both objects converted.
func TestTypedListDecodedAhead(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	n := aheadMin + aheadWindow/2
	objs := make([]runtime.Object, n)
	for i := range objs {
		p := typedPod()
		p.Name, p.ResourceVersion = fmt.Sprintf("p%04d", i), "1"
		c, err := compactTyped(p, gvk)
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = c
	}
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
	plain, typed := run(false), run(true)
	if len(plain) != len(typed) || len(typed) != n+1 {
		t.Fatalf("%d and %d lines, want %d", len(plain), len(typed), n+1)
	}
	for i := range typed {
		p, ty := plain[i], typed[i]
		if p.Type != ty.Type || p.Name != ty.Name || p.ResourceVersion != ty.ResourceVersion {
			t.Fatalf("line %d: %s %s@%s, want %s %s@%s", i, ty.Type, ty.Name, ty.ResourceVersion, p.Type, p.Name, p.ResourceVersion)
		}
		if ty.Type == Added && (ty.Typed == nil || ty.Object != nil) {
			t.Errorf("line %d: Added not typed", i)
		}
		if ty.Type == Updated {
			// An update carries its maps (the diff reads them) and, beside them, the same
			// objects as their Go types (the state reads them).
			if ty.Object == nil || ty.OldObject == nil || ty.Typed == nil || ty.OldTyped == nil {
				t.Fatalf("line %d: update without its maps and Go types", i)
			}
			if diff := cmp.Diff(p.OldObject.Object, ty.OldObject.Object); diff != "" {
				t.Errorf("line %d: old object (-untyped run +typed run):\n%s", i, diff)
			}
			for _, pair := range []struct {
				typed runtime.Object
				m     map[string]any
			}{{ty.Typed, ty.Object.Object}, {ty.OldTyped, ty.OldObject.Object}} {
				if diff := cmp.Diff(toUnstructured(pair.typed).Object, pair.m); diff != "" {
					t.Errorf("line %d: a Go type is not the map beside it (-typed +map):\n%s", i, diff)
				}
			}
		}
		if ty.Type.IsObject() {
			if diff := cmp.Diff(p.Object.Object, ty.Materialize().Object); diff != "" {
				t.Fatalf("line %d (-decoded one by one +ahead):\n%s", i, diff)
			}
		}
	}
}
