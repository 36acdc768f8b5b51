package watch

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestListPreparedAsReceived: the objects of an initial streaming list are read by Prepare as
// they are received (the tap hands each to the list's preparer), each once: the list's lines
// carry what was read, in the list's order, those read before it was complete and those decoded
// after it alike (ahead, in a large list); an object of a later list is not prepared as
// received.
func TestListPreparedAsReceived(t *testing.T) {
	for _, n := range []int{aheadMin + aheadWindow/2, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testListPreparedAsReceived(t, n) })
	}
}

func testListPreparedAsReceived(t *testing.T, n int) {
	objs := cachedPods(t, n)
	ri, out := newTestInformer(t)
	ri.cfg.TypedObjects = true
	var mu sync.Mutex
	reads := map[string]int{}
	ri.prepare = readFunc(func(o runtime.Object) Prepared {
		p := o.(*corev1.Pod)
		mu.Lock()
		reads[p.Name]++
		mu.Unlock()
		return "read " + p.Name
	})
	// The first half arrives before the list is complete, in another order than the list's;
	// the preparer reads them.
	for _, o := range slices.Backward(objs[:n/2]) {
		ri.prepareReceived(o.(*compactObject))
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		done := len(reads)
		mu.Unlock()
		if done == n/2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the preparer read %d of the %d objects received", done, n/2)
		}
	}
	// The rest arrive as the list ends: read as received, or ahead after it.
	for _, o := range objs[n/2:] {
		ri.prepareReceived(o.(*compactObject))
	}
	evs := listLines(t, ri, out, objs)
	if len(evs) != n+1 {
		t.Fatalf("%d lines, want %d", len(evs), n+1)
	}
	for i, ev := range evs[:n] {
		name := fmt.Sprintf("p%04d", i)
		if ev.Type != Added || ev.Name != name || ev.Obj.Prepared != "read "+name || ev.Obj.Typed != nil {
			t.Fatalf("line %d: %s %s prepared %v typed %v; want Added %s with what was read", i, ev.Type, ev.Name, ev.Obj.Prepared, ev.Obj.Typed != nil, name)
		}
	}
	for _, o := range objs {
		name := o.(*compactObject).meta.GetName()
		if reads[name] != 1 {
			t.Errorf("%s read %d times, want once", name, reads[name])
		}
	}
	if ri.listPrep != nil {
		t.Error("the preparer is left after the list")
	}
	// Synced: a later streaming list's objects are not prepared as received; nor, ever, a packed
	// object (read after its list).
	ri.hasSynced.Store(false)
	packed := *objs[0].(*compactObject)
	packed.packed = true
	ri.prepareReceived(&packed)
	if ri.listPrep != nil {
		t.Error("a packed object went to a preparer")
	}
	ri.hasSynced.Store(true)
	ri.prepareReceived(objs[0].(*compactObject))
	if ri.listPrep != nil {
		t.Error("an object of a list after the sync went to a preparer")
	}
}

// TestListPreparerPacksWhatItRead: the list's preparer packs each object it read (the tap left
// them to it, packLater), so that an object it took is packed once the list's lines take what
// it read, with no work left for them.
func TestListPreparerPacksWhatItRead(t *testing.T) {
	const n = 20
	objs := cachedPods(t, n)
	ri, _ := newTestInformer(t)
	ri.cfg.TypedObjects = true
	var mu sync.Mutex
	read := 0
	ri.prepare = readFunc(func(runtime.Object) Prepared {
		mu.Lock()
		read++
		mu.Unlock()
		return "read"
	})
	for _, o := range objs {
		c := o.(*compactObject)
		c.packLater = true
		if !ri.prepareReceived(c) {
			t.Fatalf("%s: not taken by the list's preparer", c.meta.Name)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		done := read
		mu.Unlock()
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the preparer read %d of the %d objects received", done, n)
		}
	}
	if got := len(ri.takePrepared()); got != n {
		t.Fatalf("%d objects read, want %d", got, n)
	}
	for _, o := range objs {
		if c := o.(*compactObject); c.packLater {
			t.Errorf("%s: read by the list's preparer and left to pack", c.meta.Name)
		}
	}
}
