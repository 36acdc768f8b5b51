package watch

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"
)

// A tombstone whose last known object is gone (client-go hands over DeletedFinalStateUnknown
// with a nil or foreign Obj) is still a Deleted line, named from its key: a delete is never
// dropped, and never a panic.
func TestTombstoneWithoutObjectNamedFromKey(t *testing.T) {
	for _, tt := range []struct {
		name string
		obj  any
	}{
		{"nil object", nil},
		{"not unstructured", struct{}{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ri, out := newTestInformer(t)
			feed(t, ri, true, replacedAll("10", cm("x", "5"), cm("y", "6")))
			drain(out)
			feed(t, ri, false, cache.Delta{Type: cache.Deleted, Object: cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: tt.obj}})
			var got []Event
			for _, ev := range drainEvents(out) {
				got = append(got, Event{Type: ev.Type, Obj: ObjectInfo{Delta: ev.Obj.Delta, Tombstone: ev.Obj.Tombstone}, Namespace: ev.Namespace, Name: ev.Name})
			}
			want := []Event{{Type: Deleted, Obj: ObjectInfo{Delta: DeltaDeleted, Tombstone: true}, Namespace: "ns", Name: "x"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if keys := ri.indexer.ListKeys(); !cmp.Equal(keys, []string{"ns/y"}) {
				t.Errorf("cache holds %v, want only ns/y", keys)
			}
		})
	}
}

func drainEvents(out chan Event) []Event {
	var got []Event
	for {
		select {
		case ev := <-out:
			got = append(got, ev)
		default:
			return got
		}
	}
}

// queue.depth is the workqueue's depth gauge, not its adds counter: once a worker has taken a
// key the two differ, and the lines must show the depth.
func TestQueueDepthIsTheGaugeNotTheAdds(t *testing.T) {
	wq, err := newWorkQueue("test", QueueConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ns/a", "ns/b", "ns/c"} {
		if f := wq.add(key, Trigger{Type: Added}); f.Depth != f.Adds {
			t.Fatalf("before any worker: %+v", f)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan Event, 10)
	var wg waitGroup
	wq.run(ctx, &wg.WaitGroup, func(ev Event) { events <- ev })
	var depths []int64
	for range 3 {
		ev := <-events
		if ev.Obj.Queue.Adds != 3 {
			t.Errorf("%s: adds = %d, want 3", ev.Key, ev.Obj.Queue.Adds)
		}
		depths = append(depths, ev.Obj.Queue.Depth)
	}
	cancel()
	wg.Wait()
	if diff := cmp.Diff([]int64{2, 1, 0}, depths); diff != "" {
		t.Errorf("depth after each reconcile (-want +got):\n%s", diff)
	}
	if f := wq.figures(); f.Depth != 0 || f.Adds != 3 {
		t.Errorf("figures after the queue drained: %+v, want depth 0, adds 3", f)
	}
}

// A Recovered line says "again" only of the verb that failed: a list that works after a failed
// watch was never broken (issue #38: "Recovered: list works again" after a failed watch).
func TestRecoveredMessage(t *testing.T) {
	tests := []struct {
		verb   string
		n      int
		failed []string
		want   string
	}{
		{"watch", 3, []string{"watch"}, "watch works again after 3 failed attempts"},
		{"list", 1, []string{"list"}, "list works again after 1 failed attempt"},
		{"list", 1, []string{"watch"}, "list works, after 1 failed attempt of watch"},
		{"list", 4, []string{"watch", "list"}, "list works, after 4 failed attempts of watch and list"},
	}
	for _, tt := range tests {
		if got := recoveredMessage(tt.verb, tt.n, tt.failed); got != tt.want {
			t.Errorf("recoveredMessage(%q, %d, %v) = %q, want %q", tt.verb, tt.n, tt.failed, got, tt.want)
		}
	}
}
