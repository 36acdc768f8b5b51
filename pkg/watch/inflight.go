package watch

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
)

// MaxBacklogWait bounds how long Reorder waits for a resource's received but unprocessed watch
// events (see InFlight): an event the processor never emits cannot hold the stream for longer.
const MaxBacklogWait = 10 * time.Second

// InFlight follows each resource's live watch events from the moment the tap receives them from
// the server to the moment they reach Reorder, so that Reorder waits for a backlog in the
// plugin's own pipeline (reflector, delta FIFO, processor, channel) instead of guessing it with
// a window. Within one resource, events arrive in resourceVersion order, so each resource's
// events in flight are a FIFO of resourceVersions.
//
// It is safe for concurrent use: taps add, Reorder removes.
type InFlight struct {
	mu  sync.Mutex
	res map[string][]inflightEvent
}

type inflightEvent struct {
	rv uint64
	at time.Time
}

// NewInFlight returns an empty tracker.
func NewInFlight() *InFlight { return &InFlight{res: map[string][]inflightEvent{}} }

// received notes a live watch event of resource res, received from the server at now.
func (f *InFlight) received(res string, rv uint64, now time.Time) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.res[res] = append(f.res[res], inflightEvent{rv: rv, at: now})
	f.mu.Unlock()
}

// arrived notes that resource res's live event rv reached Reorder: it and anything before it in
// that resource's stream are no longer in flight.
func (f *InFlight) arrived(res string, rv uint64) {
	if f == nil {
		return
	}
	f.mu.Lock()
	q := f.res[res]
	i := 0
	for i < len(q) && q[i].rv <= rv {
		i++
	}
	f.res[res] = q[i:]
	f.mu.Unlock()
}

// passed notes that ev left the informers' pipeline (see Reorder.Push): when it is a live watch
// event, it and the earlier events of its resource are no longer in flight. A stage that holds or
// drops lines (--owned, --events) calls it as it takes them, so lines it keeps back or filters
// out do not hold the other resources' lines.
func (f *InFlight) passed(ev *Event) {
	if f == nil {
		return
	}
	if rv, ok := liveRV(ev); ok {
		f.arrived(ev.Resource.String(), rv)
	}
}

// forget drops a live event the reflector never got (its watch was stopped first).
func (f *InFlight) forget(res string, ev watch.Event) {
	if f == nil {
		return
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return
	}
	rv, ok := parseRV(m.GetResourceVersion())
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.res[res] = slices.DeleteFunc(f.res[res], func(e inflightEvent) bool { return e.rv == rv })
}

// earlier reports whether a resource other than res has an event in flight with a
// resourceVersion below rv, received after since (older ones are given up on and forgotten).
func (f *InFlight) earlier(res string, rv uint64, since time.Time) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for r, q := range f.res {
		for len(q) > 0 && q[0].at.Before(since) {
			q = q[1:]
		}
		f.res[r] = q
		if r != res && len(q) > 0 && q[0].rv < rv {
			return true
		}
	}
	return false
}

// Len is the number of events in flight, for tests.
func (f *InFlight) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, q := range f.res {
		n += len(q)
	}
	return n
}
