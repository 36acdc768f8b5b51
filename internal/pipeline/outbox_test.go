package pipeline

import (
	"fmt"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func TestOutboxDroppedComesBeforeTheNextEvent(t *testing.T) {
	o := NewOutbox(1, true, nil)
	o.Put(watch.Event{Type: watch.Added})
	o.Put(watch.Event{Type: watch.Added}) // dropped
	if _, d, _ := o.Get(); d != 1 {
		t.Fatalf("first Get reports %d dropped, want 1 (they happened before it was read)", d)
	}
	o.Put(watch.Event{Type: watch.Deleted})
	if ev, d, _ := o.Get(); d != 0 || ev.Type != watch.Deleted {
		t.Errorf("got %v, %d", ev.Type, d)
	}
}

func TestOutboxLosslessBlocksAndSaysSo(t *testing.T) {
	behind := make(chan struct{}, 10)
	o := NewOutbox(2, false, func() { behind <- struct{}{} })
	o.Put(watch.Event{Lifecycle: watch.LifecycleInfo{Items: 1}})
	o.Put(watch.Event{Lifecycle: watch.LifecycleInfo{Items: 2}})
	done := make(chan struct{})
	go func() {
		o.Put(watch.Event{Lifecycle: watch.LifecycleInfo{Items: 3}}) // waits for the reader
		close(done)
	}()
	<-behind // the wait was reported
	select {
	case <-done:
		t.Fatal("Put did not wait on a full lossless outbox")
	default:
	}
	for want := 1; want <= 3; want++ {
		ev, d, ok := o.Get()
		if !ok || d != 0 || ev.Lifecycle.Items != want {
			t.Fatalf("Get = %v %d %v, want item %d", ev.Lifecycle.Items, d, ok, want)
		}
	}
	<-done
}

// A reader that keeps falling behind is announced once, not on every wait.
func TestOutboxBehindOncePerStreak(t *testing.T) {
	var calls int
	o := NewOutbox(2, false, func() { calls++ })
	done := make(chan struct{})
	go func() {
		for i := range 50 {
			o.Put(watch.Event{Lifecycle: watch.LifecycleInfo{Items: i}})
		}
		close(done)
	}()
	for i := range 50 {
		ev, _, ok := o.Get()
		if !ok || ev.Lifecycle.Items != i {
			t.Fatalf("Get %d = %v %v", i, ev.Lifecycle.Items, ok)
		}
		if i == 20 {
			// Let the writer fill it again before the reader goes on.
			for o.Len() < 2 {
				select {
				case <-done:
					t.Fatal("writer finished early")
				default:
				}
			}
		}
	}
	<-done
	if calls != 1 {
		t.Errorf("behind called %d times for one slow reader; want once", calls)
	}
}

// upd is an update of object name from oldRV to rv; add and del are its add and delete.
func upd(name, oldRV, rv string) watch.Event {
	return watch.Event{Type: watch.Updated, Resource: deploy, Namespace: "demo", Name: name, Obj: watch.ObjectInfo{OldResourceVersion: oldRV}, ResourceVersion: rv}
}

func add(name, rv string) watch.Event {
	return watch.Event{Type: watch.Added, Resource: deploy, Namespace: "demo", Name: name, ResourceVersion: rv}
}

func del(name, rv string, tombstone bool) watch.Event {
	return watch.Event{Type: watch.Deleted, Resource: deploy, Namespace: "demo", Name: name, ResourceVersion: rv, Obj: watch.ObjectInfo{Tombstone: tombstone}}
}

// got is what a reader takes out of a closed outbox: the events, in order, and the dropped
// counts it was told.
func drainOutboxForTest(o *Outbox) (events []watch.Event, dropped int) {
	o.Close()
	for {
		ev, d, ok := o.Get()
		if !ok {
			return events, dropped
		}
		dropped += d
		if ev.Type != "" {
			events = append(events, ev)
		}
	}
}

func describe(evs []watch.Event) []string {
	var out []string
	for _, ev := range evs {
		s := string(ev.Type)
		if ev.Name != "" {
			s += " " + ev.Name + " " + ev.ResourceVersion
		}
		if ev.Obj.Tombstone {
			s += " tombstone"
		}
		if ev.Obj.Folded > 0 {
			s += fmt.Sprintf(" folded=%d", ev.Obj.Folded)
		}
		out = append(out, s)
	}
	return out
}

// Behind a slow reader of human output, adds and updates beyond the bound are dropped and
// counted; deletes (tombstones too), lifecycle lines and diagnoses are all kept, in order.
func TestOutboxNeverDropsDeletesLifecycleOrDiagnoses(t *testing.T) {
	lifecycle := []watch.Type{watch.List, watch.Watch, watch.WatchClosed, watch.Synced, watch.Resync, watch.Relist,
		watch.Error, watch.Recovered, watch.HotLoop, watch.HotLoopEnded}
	o := NewOutbox(16, true, nil)
	var want []string
	for i := range 16 { // full
		o.Put(add(fmt.Sprint("a", i), "1"))
		want = append(want, fmt.Sprintf("Added a%d 1", i))
	}
	o.Put(add("b", "2"))                       // dropped
	o.Put(del("a0", "3", false))               // kept
	o.Put(upd("c", "4", "5"))                  // dropped
	o.Put(del("a1", "6", true))                // kept: a tombstone
	o.Put(watch.Event{Type: watch.Reconciled}) // dropped
	o.Put(watch.Event{Type: watch.ControllerQueue})
	o.Put(watch.Event{Type: watch.Bookmark})
	want = append(want, "Deleted a0 3", "Deleted a1 6 tombstone")
	for _, typ := range lifecycle { // lifecycle lines and diagnoses: kept
		o.Put(watch.Event{Type: typ})
		want = append(want, string(typ))
	}
	o.Put(del("a2", "7", false))
	want = append(want, "Deleted a2 7")
	events, dropped := drainOutboxForTest(o)
	if diff := cmp.Diff(want, describe(events)); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if dropped != 5 {
		t.Errorf("dropped %d, want 5 (b's add, c's update, Reconciled, ControllerQueue, Bookmark)", dropped)
	}
}

// Updates of one object fold behind a slow reader: the newest is kept, at its own place in
// the stream, and says how many it folded; never across a delete, an add or another resource.
func TestOutboxFoldsUpdatesPerObject(t *testing.T) {
	o := NewOutbox(2, true, nil)
	other := upd("a", "1", "2")
	other.Resource = secrets
	puts := []watch.Event{
		upd("a", "1", "2"), upd("b", "1", "2"), // full
		upd("a", "2", "3"),   // folds a 1→2
		{Type: watch.Relist}, // kept
		upd("a", "3", "4"),   // folds a 2→3 (and what it folded)
		other,                // another resource's "a": nothing to fold into, dropped
		del("a", "5", false), // kept
		upd("a", "5", "6"),   // a's last line is a delete: dropped
		add("c", "7"),        // dropped
		upd("c", "7", "8"),   // nothing of c waits: dropped
	}
	for _, ev := range puts {
		o.Put(ev)
	}
	events, dropped := drainOutboxForTest(o)
	want := []string{"Updated b 2", "Relist", "Updated a 4 folded=2", "Deleted a 5"}
	if diff := cmp.Diff(want, describe(events)); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if dropped != 4 {
		t.Errorf("dropped %d, want 4", dropped)
	}
	if a := events[2]; a.Obj.OldResourceVersion != "3" {
		t.Errorf("the kept update is %s→%s; want the newest, 3→4", a.Obj.OldResourceVersion, a.ResourceVersion)
	}
}

// The folding index is built only when a fold is first tried, from the lines waiting then,
// and dropped when the reader catches up: folding finds an update put before the outbox was
// full, in a second episode as in the first, and a reader that keeps up leaves no index.
func TestOutboxFoldsIndexBuiltWhenFull(t *testing.T) {
	o := NewOutbox(2, true, nil)
	for episode := range 2 {
		rv := fmt.Sprint(10 * episode)
		o.Put(upd("a", rv, rv+"1")) // waits, indexed by nobody yet
		if o.last != nil {
			t.Fatalf("episode %d: an index before any fold was tried", episode)
		}
		o.Put(upd("b", rv, rv+"1")) // full
		o.Put(upd("a", rv+"1", rv+"2"))
		var got []string
		for range 2 {
			ev, _, ok := o.Get()
			if !ok {
				t.Fatal("closed")
			}
			got = append(got, describe([]watch.Event{ev})...)
		}
		want := []string{"Updated b " + rv + "1", "Updated a " + rv + "2 folded=1"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("episode %d: delivered (-want +got):\n%s", episode, diff)
		}
		if o.last != nil {
			t.Errorf("episode %d: the index outlived the lines it indexed: %v", episode, o.last)
		}
	}
}

// A random stream through a reader that keeps falling behind: every delete and lifecycle line
// arrives, in order; per object the lines keep their order; and every line put is accounted for:
// shown, folded into a shown update, or counted in a Dropped line.
func TestOutboxAccountsForEveryLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	o := NewOutbox(16, true, nil)
	var puts, shown []watch.Event
	dropped := 0
	read := func(n int) {
		for range n {
			ev, d, ok := o.Get()
			if !ok {
				return
			}
			dropped += d
			if ev.Type != "" {
				shown = append(shown, ev)
			}
		}
	}
	rv := 0
	for range 20000 {
		rv++
		name := fmt.Sprint("o", rng.IntN(12))
		var ev watch.Event
		switch r := rng.IntN(100); {
		case r < 70:
			ev = upd(name, fmt.Sprint(rv-1), fmt.Sprint(rv))
		case r < 80:
			ev = add(name, fmt.Sprint(rv))
		case r < 88:
			ev = del(name, fmt.Sprint(rv), r%2 == 0)
		case r < 92:
			ev = watch.Event{Type: watch.Reconciled, Key: name}
		default:
			ev = watch.Event{Type: watch.Relist, ResourceVersion: fmt.Sprint(rv)}
		}
		puts = append(puts, ev)
		o.Put(ev)
		// The reader takes a few lines now and then, never enough to keep up for long; it
		// reads before the lines that are never dropped would make Put wait.
		if rng.IntN(4) == 0 || o.Len() >= 31 {
			read(rng.IntN(3) + 1)
		}
		if o.Len() > 32 {
			t.Fatalf("%d events wait; bound 16 (32 with the lines never dropped)", o.Len())
		}
	}
	o.Close()
	read(1 << 30)
	folded := 0
	for _, ev := range shown {
		folded += ev.Obj.Folded
	}
	if len(shown)+folded+dropped != len(puts) {
		t.Errorf("shown %d + folded %d + dropped %d != %d put", len(shown), folded, dropped, len(puts))
	}
	if dropped == 0 || folded == 0 {
		t.Errorf("dropped %d, folded %d: the reader was not slow enough to test anything", dropped, folded)
	}
	keep := func(evs []watch.Event) []string {
		var out []string
		for _, ev := range evs {
			if !droppable(ev.Type) {
				out = append(out, fmt.Sprint(ev.Type, ev.Name, ev.ResourceVersion))
			}
		}
		return out
	}
	if diff := cmp.Diff(keep(puts), keep(shown)); diff != "" {
		t.Errorf("lines that are never dropped (-put +shown):\n%s", diff)
	}
	// Per object, the shown lines are a subsequence of the put lines.
	next := map[string]int{}
	for _, ev := range shown {
		if !ev.Type.IsObject() {
			continue
		}
		i := next[ev.Name]
		for i < len(puts) && (puts[i].Name != ev.Name || puts[i].Type != ev.Type || puts[i].ResourceVersion != ev.ResourceVersion) {
			i++
		}
		if i == len(puts) {
			t.Fatalf("%s %s %s shown out of order", ev.Type, ev.Name, ev.ResourceVersion)
		}
		next[ev.Name] = i + 1
	}
}

// Lines that are never dropped may take a lossy outbox to twice its bound; beyond that Put
// waits for the reader, and says so, instead of dropping a delete.
func TestOutboxLossyWaitsRatherThanDropADelete(t *testing.T) {
	behind := make(chan struct{}, 10)
	o := NewOutbox(2, true, func() { behind <- struct{}{} })
	for i := range 4 {
		o.Put(del(fmt.Sprint("d", i), "1", false))
	}
	done := make(chan struct{})
	go func() {
		o.Put(del("last", "2", true))
		close(done)
	}()
	<-behind
	select {
	case <-done:
		t.Fatal("a fifth delete was put into a lossy outbox of bound 2 without waiting")
	default:
	}
	events, dropped := drainOutboxForTest(o)
	<-done
	if o.Len() != 0 {
		events2, _ := drainOutboxForTest(o)
		events = append(events, events2...)
	}
	if dropped != 0 || len(events) < 4 {
		t.Errorf("dropped %d, delivered %v", dropped, describe(events))
	}
}

// Memory stays bounded under a flood a reader never reads: the outbox holds at most its bound
// of droppable lines, and its slice does not grow with folds (holes are reused).
func TestOutboxBoundedSlice(t *testing.T) {
	o := NewOutbox(8, true, nil)
	for i := range 100000 {
		o.Put(upd(fmt.Sprint("o", i%5), fmt.Sprint(i), fmt.Sprint(i+1)))
		o.Put(add(fmt.Sprint("n", i), "1"))
		if i%3 == 0 {
			o.Get()
		}
		if o.Len() > 8 {
			t.Fatalf("%d events wait, bound 8", o.Len())
		}
		if c := cap(o.buf); c > 64 {
			t.Fatalf("slice grew to %d for a bound of 8", c)
		}
	}
	o2 := NewOutbox(8, true, nil)
	for i := range 100000 { // nobody reads: only folds
		o2.Put(upd(fmt.Sprint("o", i%8), fmt.Sprint(i), fmt.Sprint(i+1)))
		if c := cap(o2.buf); c > 64 {
			t.Fatalf("never read: slice grew to %d for a bound of 8", c)
		}
	}
	if len(o2.last) > 8 {
		t.Errorf("%d objects remembered for 8 waiting lines", len(o2.last))
	}
	// A list's lines pouring in: the slice grows to the bound and no further, then (deletes,
	// never dropped) to twice the bound.
	o3 := NewOutbox(3000, true, nil)
	for i := range 3000 {
		o3.Put(add(fmt.Sprint("n", i), "1"))
	}
	if c := cap(o3.buf); c != 3000 {
		t.Errorf("3000 lines wait in a slice of %d for a bound of 3000", c)
	}
	for i := range 3000 {
		o3.Put(del(fmt.Sprint("n", i), "2", false))
	}
	if c := cap(o3.buf); c != 6000 {
		t.Errorf("6000 lines wait in a slice of %d for a bound of 3000", c)
	}
}

var (
	deploy  = discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	secrets = discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
)
