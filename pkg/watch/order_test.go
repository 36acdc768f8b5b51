package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var (
	pods = discovery.Resource{Version: "v1", Resource: "pods"}
	rss  = discovery.Resource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

func live(res discovery.Resource, typ Type, rv string) Event {
	d := map[Type]Delta{Added: DeltaAdded, Updated: DeltaUpdated, Deleted: DeltaDeleted}[typ]
	return Event{Type: typ, Resource: res, ResourceVersion: rv, Obj: ObjectInfo{Delta: d}, Name: rv}
}

func names(evs []Event) string {
	var b []string
	for _, e := range evs {
		s := string(e.Type)
		if e.Name != "" {
			s = e.Resource.Resource + "@" + e.Name
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

func TestReorder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type push struct {
		ev Event
		at int
	}
	synced := Event{Type: Synced, Resource: pods}
	initial := Event{Type: Added, Resource: rss, ResourceVersion: "5", Obj: ObjectInfo{Delta: DeltaReplaced, InitialList: true}, Name: "5"}
	tests := []struct {
		name   string
		window time.Duration
		in     []push
		want   string
	}{
		{"an effect before its cause across resources", 100 * time.Millisecond,
			[]push{{live(pods, Added, "282"), 0}, {live(rss, Added, "281"), 1}, {live(rss, Updated, "285"), 2}},
			"replicasets@281 pods@282 replicasets@285"},
		{"a resource's own order is kept", 100 * time.Millisecond,
			[]push{{live(pods, Updated, "10"), 0}, {live(pods, Updated, "11"), 1}, {live(rss, Updated, "9"), 2}},
			"replicasets@9 pods@10 pods@11"},
		{"never ahead of its resource's other lines", 100 * time.Millisecond,
			[]push{{live(rss, Updated, "20"), 0}, {synced, 1}, {live(pods, Added, "12"), 2}},
			"replicasets@20 Synced pods@12"},
		{"initial lists are not reordered", 100 * time.Millisecond,
			[]push{{live(pods, Added, "20"), 0}, {initial, 1}},
			"pods@20 replicasets@5"},
		{"a tombstone stays", 100 * time.Millisecond,
			[]push{{live(pods, Added, "20"), 0}, {Event{Type: Deleted, Resource: rss, ResourceVersion: "3", Obj: ObjectInfo{Delta: DeltaDeleted, Tombstone: true}, Name: "3"}, 1}},
			"pods@20 replicasets@3"},
		{"a reconcile does not hold its resource's events back", 100 * time.Millisecond,
			[]push{{live(rss, Updated, "30"), 0}, {live(pods, Updated, "27"), 1}, {Event{Type: Reconciled, Resource: pods}, 2}, {live(pods, Updated, "29"), 3}},
			"pods@27 pods@29 replicasets@30 Reconciled"},
		{"outside the window, arrival order", 100 * time.Millisecond,
			[]push{{live(pods, Added, "282"), 0}, {live(rss, Added, "281"), 150}},
			"pods@282 replicasets@281"},
		{"off", 0,
			[]push{{live(pods, Added, "282"), 0}, {live(rss, Added, "281"), 1}},
			"pods@282 replicasets@281"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReorder(tt.window)
			var got []Event
			for _, p := range tt.in {
				got = append(got, r.Push(p.ev, ms(p.at))...)
			}
			got = append(got, r.Due(ms(10_000))...)
			if r.Len() != 0 {
				t.Errorf("%d events still held after the window", r.Len())
			}
			if s := names(got); s != tt.want {
				t.Errorf("order %q, want %q", s, tt.want)
			}
		})
	}
}

// Nothing is held past the window, nothing is lost, and a long stream comes out in
// resourceVersion order when its skew is within the window.
func TestReorderBounded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewReorder(50 * time.Millisecond)
	var got []Event
	// Two resources, each in order; the replicasets' stream lags 20ms behind.
	for i := range 1000 {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		got = append(got, r.Push(live(pods, Updated, fmt.Sprint(2*i+1)), now)...)
		if i >= 20 {
			got = append(got, r.Push(live(rss, Updated, fmt.Sprint(2*(i-20))), now)...)
		}
		for _, e := range r.buf {
			if now.Sub(e.at) > r.Window {
				t.Fatalf("an event held %s, longer than the window", now.Sub(e.at))
			}
		}
	}
	got = append(got, r.Flush()...)
	if len(got) != 1980 {
		t.Fatalf("%d events out, want 1980", len(got))
	}
	prev := uint64(0)
	for _, e := range got {
		rv, _ := parseRV(e.ResourceVersion)
		if rv < prev {
			t.Fatalf("rv %d after %d", rv, prev)
		}
		prev = rv
	}
}

// A plugin that lags: the tap received an earlier pod event that is still in the plugin's
// pipeline when a later ReplicaSet event is due. Reorder waits for it, well past the window,
// and gives up on one that never comes after MaxBacklogWait.
func TestReorderWaitsForBacklog(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	r := NewReorder(100 * time.Millisecond)
	r.InFlight = NewInFlight()
	// Received from the server in this order: pods@10, replicasets@12, pods@14.
	r.InFlight.received(pods.String(), 10, at(0))
	r.InFlight.received(rss.String(), 12, at(time.Millisecond))
	r.InFlight.received(pods.String(), 14, at(2*time.Millisecond))
	// The ReplicaSet event reaches Reorder first; the pods stream is backed up.
	var got []Event
	got = append(got, r.Push(live(rss, Updated, "12"), at(3*time.Millisecond))...)
	if out := r.Due(at(2 * time.Second)); len(out) != 0 {
		t.Fatalf("released %s while an earlier pod event was in flight", names(out))
	}
	got = append(got, r.Push(live(pods, Updated, "10"), at(2*time.Second))...)
	got = append(got, r.Due(at(2*time.Second))...)
	if s := names(got); s != "pods@10 replicasets@12" {
		t.Fatalf("order %q, want pods@10 replicasets@12", s)
	}
	got = append(got, r.Push(live(pods, Updated, "14"), at(3*time.Second))...)
	if got = append(got, r.Flush()...); names(got) != "pods@10 replicasets@12 pods@14" {
		t.Fatalf("order %q, want pods@10 replicasets@12 pods@14", names(got))
	}
	if n := r.InFlight.Len(); n != 0 {
		t.Errorf("%d events still in flight", n)
	}
	// An event the tap saw that never arrives holds the others for MaxBacklogWait only.
	r.InFlight.received(pods.String(), 20, at(4*time.Second))
	r.Push(live(rss, Updated, "22"), at(4*time.Second))
	if out := r.Due(at(4*time.Second + MaxBacklogWait/2)); len(out) != 0 {
		t.Fatalf("released %s before MaxBacklogWait", names(out))
	}
	if out := r.Due(at(4*time.Second + MaxBacklogWait + time.Millisecond)); names(out) != "replicasets@22" {
		t.Fatalf("after MaxBacklogWait got %q, want replicasets@22", names(out))
	}
	// Without a tracker the same arrival is released after the window, out of order.
	r2 := NewReorder(100 * time.Millisecond)
	out := append(r2.Push(live(rss, Updated, "12"), at(0)), r2.Due(at(2*time.Second))...)
	out = append(out, r2.Push(live(pods, Updated, "10"), at(2*time.Second))...)
	out = append(out, r2.Flush()...)
	if s := names(out); s != "replicasets@12 pods@10" {
		t.Fatalf("without a tracker %q", s)
	}
}

// A live KubeEvent moves into resourceVersion order like an object event: the Event a controller
// wrote after creating a ReplicaSet does not come before the ReplicaSet.
func TestReorderKubeEvent(t *testing.T) {
	now := time.Now()
	r := NewReorder(time.Second)
	ev := Event{Type: KubeEvent, Resource: discovery.Resource{Group: "events.k8s.io", Resource: "events"}, Name: "e", ResourceVersion: "12", Obj: ObjectInfo{Delta: DeltaAdded}}
	rs := Event{Type: Added, Resource: discovery.Resource{Group: "apps", Resource: "replicasets"}, Name: "rs", ResourceVersion: "11", Obj: ObjectInfo{Delta: DeltaAdded}}
	r.Push(ev, now)
	r.Push(rs, now.Add(time.Millisecond))
	var got []string
	for _, e := range r.Flush() {
		got = append(got, e.Name)
	}
	if strings.Join(got, ",") != "rs,e" {
		t.Errorf("order %v, want rs before the Event", got)
	}
}
