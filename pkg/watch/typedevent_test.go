package watch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// TestTypedObjects: with Config.TypedObjects, the Added lines of an object cached from protobuf
// carry it typed (Object nil) with the same name, resourceVersion and queue figures, and
// Materialize gives the object the line carried before; updates still carry both objects
// converted. Without it, nothing is typed.
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
		if updated.Typed != nil || updated.Object == nil || updated.OldObject == nil {
			t.Errorf("typed=%v: the update is not converted: %+v", typed, updated)
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
