package pipeline

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// listAdd is the add of object name in an initial list.
func listAdd(name string) watch.Event {
	ev := add(name, "1")
	ev.Obj.InitialList = true
	return ev
}

// The lines a list brings, which the informer hands on in one burst: the initial list's adds, a
// relist's updates and adds (delta Replaced), a resync's updates (Sync).
var listKinds = map[string]func(name string) watch.Event{
	"initial list": listAdd,
	"relist update": func(name string) watch.Event {
		ev := add(name, "2")
		ev.Type, ev.Obj.Delta, ev.Obj.OldResourceVersion = watch.Updated, watch.DeltaReplaced, "1"
		return ev
	},
	"relist add": func(name string) watch.Event {
		ev := add(name, "2")
		ev.Obj.Delta = watch.DeltaReplaced
		return ev
	},
	"resync": func(name string) watch.Event {
		ev := add(name, "1")
		ev.Type, ev.Obj.Delta, ev.Obj.OldResourceVersion = watch.Updated, watch.DeltaSync, "1"
		return ev
	},
}

// A list's lines pour in when it ends, faster than a reader takes them: a lossy outbox makes
// them wait for a writer that takes lines, rather than drop them, and its slice stays at its
// first size instead of growing to the bound.
func TestOutboxPacesAList(t *testing.T) {
	for kind, line := range listKinds {
		t.Run(kind, func(t *testing.T) { testOutboxPaces(t, line) })
	}
}

func testOutboxPaces(t *testing.T, line func(string) watch.Event) {
	const bound, n = 4 * listWindow, 12 * listWindow
	o := NewOutbox(bound, true, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			o.Put(line(fmt.Sprint("n", i)))
		}
	}()
	// A reader slower than the informer: it takes a line only once half the window waits (or
	// every line was put).
	taken, dropped := 0, 0
	for finished := false; taken+dropped < n; {
		for !finished && o.Len() < listWindow/2 {
			select {
			case <-done:
				finished = true
			default:
				runtime.Gosched()
			}
		}
		ev, d, _ := o.Get()
		dropped += d
		if ev.Type == watch.Dropped {
			continue
		}
		if want := fmt.Sprint("n", taken+dropped); ev.Name != want && dropped == 0 {
			t.Fatalf("line %d is %s, want %s", taken, ev.Name, want)
		}
		taken++
	}
	<-done
	if dropped != 0 {
		t.Fatalf("%d of the list's %d lines dropped for a reader that took every line it was given", dropped, n)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := cap(o.buf); c > outboxFirst {
		t.Errorf("the outbox's slice grew to %d lines for a list paced at %d (its first: %d)", c, listWindow, outboxFirst)
	}
}

// A reader that stopped (a pager) does not hold up the informers: a list's line gives up on the
// writer after stallAfter without a take, and the list's lines are kept or dropped as any add.
func TestOutboxListGivesUpOnAStoppedReader(t *testing.T) {
	o := NewOutbox(8, true, nil)
	o.pace.stallAfter = time.Millisecond
	for i := range 100 {
		o.Put(listAdd(fmt.Sprint("n", i)))
	}
	events, dropped := drainOutboxForTest(o)
	if len(events) != 8 || dropped != 92 {
		t.Errorf("a reader that never read got %d lines and %d dropped, want the bound (8) and 92", len(events), dropped)
	}
}

// A watch's lines come at the server's pace: a reader that stopped loses its adds beyond the
// bound at once, and the informer never waits for it.
func TestOutboxDoesNotPaceAWatch(t *testing.T) {
	o := NewOutbox(8, true, nil)
	o.pace.stallAfter = time.Millisecond
	for i := range 100 {
		ev := add(fmt.Sprint("n", i), "1")
		ev.Obj.Delta = watch.DeltaAdded
		o.Put(ev)
	}
	o.mu.Lock()
	waits := o.pace.epoch
	o.mu.Unlock()
	if waits != 0 {
		t.Errorf("a watch's adds waited for the writer %d times, want never", waits)
	}
	if events, dropped := drainOutboxForTest(o); len(events) != 8 || dropped != 92 {
		t.Errorf("a reader that never read got %d lines and %d dropped, want the bound (8) and 92", len(events), dropped)
	}
}
