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
