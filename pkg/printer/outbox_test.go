package printer

import (
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func TestOutboxLossyDropsAndCounts(t *testing.T) {
	o := NewOutbox(3, true, nil)
	for i := range 10 {
		o.Put(watch.Event{Type: watch.Updated, Items: i})
	}
	o.Put(watch.Event{Type: watch.Relist}) // lifecycle lines are kept past the bound
	if o.Len() != 4 {
		t.Fatalf("Len = %d, want 3 objects + the Relist", o.Len())
	}
	var got []watch.Type
	var totalDropped int
	o.Close()
	for {
		ev, dropped, ok := o.Get()
		if !ok {
			break
		}
		totalDropped += dropped
		if ev.Type != "" {
			got = append(got, ev.Type)
		}
	}
	if totalDropped != 7 {
		t.Errorf("dropped %d, want 7", totalDropped)
	}
	if len(got) != 4 || got[3] != watch.Relist {
		t.Errorf("delivered %v", got)
	}
}

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
	o.Put(watch.Event{Items: 1})
	o.Put(watch.Event{Items: 2})
	done := make(chan struct{})
	go func() {
		o.Put(watch.Event{Items: 3}) // waits for the reader
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
		if !ok || d != 0 || ev.Items != want {
			t.Fatalf("Get = %v %d %v, want item %d", ev.Items, d, ok, want)
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
			o.Put(watch.Event{Items: i})
		}
		close(done)
	}()
	for i := range 50 {
		ev, _, ok := o.Get()
		if !ok || ev.Items != i {
			t.Fatalf("Get %d = %v %v", i, ev.Items, ok)
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

// The outbox reuses its slice instead of growing without bound.
func TestOutboxBoundedSlice(t *testing.T) {
	o := NewOutbox(8, true, nil)
	for i := range 10000 {
		o.Put(watch.Event{Items: i})
		if i%3 == 0 {
			o.Get()
		}
		if c := cap(o.buf); c > 64 {
			t.Fatalf("slice grew to %d for a bound of 8", c)
		}
	}
}
