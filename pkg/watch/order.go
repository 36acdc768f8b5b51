package watch

import (
	"strconv"
	"time"
)

// Reorder puts the live watch events of several resources back into the server's order.
//
// Each resource has its own informer and watch stream, so a pod created by a ReplicaSet's
// change can reach the plugin before that change does. Within one stream the server sends
// events in resourceVersion order; across streams of one API server (one etcd), resourceVersions
// are comparable numbers. Reorder holds every event for Window and, when the oldest is due,
// first releases the live watch events that arrived after it with a smaller resourceVersion.
// When InFlight is set, a due event also waits while another resource has an earlier event
// that the server already sent but the plugin has not finished processing (a busy or starved
// plugin lags more than any window), up to MaxBacklogWait. The Window then only has to cover
// how much later one watch stream can deliver an event than another.
// Nothing waits longer than Window plus MaxBacklogWait, nothing is dropped, and an event never
// overtakes an earlier line of its own resource that is not such an event (a Watch, a Synced,
// an initial list; Reconciled lines of the simulated workers are not stream lines and do not
// hold events back), so each resource's own stream sequence is unchanged.
//
// It is not safe for concurrent use.
type Reorder struct {
	// Window is how long an event is held.
	Window time.Duration
	// InFlight, when set, tells which live events the taps received that have not arrived yet.
	InFlight *InFlight

	buf []held
	one [1]Event // what Push returns without a window, reused: no allocation per event
}

type held struct {
	ev  Event
	at  time.Time
	rv  uint64
	ok  bool // a live watch event with a numeric resourceVersion
	out bool // already released (pulled ahead)
}

// NewReorder holds events for window; window <= 0 passes them through (arrival order).
func NewReorder(window time.Duration) *Reorder { return &Reorder{Window: window} }

// Push adds ev, received at now, and returns the events due by now, in order. Without a window
// the slice is only valid until the next Push.
func (r *Reorder) Push(ev Event, now time.Time) []Event {
	if r.Window <= 0 {
		r.one[0] = ev
		return r.one[:]
	}
	h := held{ev: ev, at: now}
	h.rv, h.ok = liveRV(&ev)
	// What was due before ev arrived goes first: ev cannot overtake it. Unless what was due is
	// waiting for ev itself (in flight): then ev goes in first and the wait ends.
	out := r.Due(now)
	r.buf = append(r.buf, h)
	if h.ok && r.InFlight != nil {
		r.InFlight.arrived(ev.Resource.String(), h.rv)
		out = append(out, r.Due(now)...)
	}
	return out
}

// Due returns the events due by now, in order.
func (r *Reorder) Due(now time.Time) []Event {
	var out []Event
	for len(r.buf) > 0 && now.Sub(r.buf[0].at) >= r.Window {
		if h := r.buf[0]; h.ok && !h.out && r.InFlight.earlier(h.ev.Resource.String(), h.rv, now.Add(-MaxBacklogWait)) {
			break
		}
		out = r.release(out)
	}
	return out
}

// Flush returns every held event, in order (at the end of the stream).
func (r *Reorder) Flush() []Event {
	var out []Event
	for len(r.buf) > 0 {
		out = r.release(out)
	}
	return out
}

// Len is the number of events held.
func (r *Reorder) Len() int { return len(r.buf) }

// release emits the head, after the later live events with a smaller resourceVersion that may
// move: their resource has no other kind of line waiting before them.
func (r *Reorder) release(out []Event) []Event {
	head := r.buf[0]
	r.buf = r.buf[1:]
	if head.out {
		return out
	}
	if head.ok {
		blocked := map[string]bool{} // resources with a line that must stay first
		for {
			best := -1
			for i := range r.buf {
				h := &r.buf[i]
				if h.out {
					continue
				}
				res := h.ev.Resource.String()
				if !h.ok && h.ev.Type == Reconciled {
					// Not a line of the watch stream: the simulated workers' own timeline, hidden
					// in most runs. An event moved ahead of it was enqueued before it anyway.
					continue
				}
				if !h.ok {
					blocked[res] = true
					continue
				}
				if blocked[res] || h.rv >= head.rv {
					// An event of this resource that stays must keep the later ones behind it.
					blocked[res] = true
					continue
				}
				if best < 0 || h.rv < r.buf[best].rv {
					best = i
				}
			}
			if best < 0 {
				break
			}
			r.buf[best].out = true
			out = append(out, r.buf[best].ev)
			clear(blocked)
		}
	}
	r.compact()
	return append(out, head.ev)
}

// compact drops released events from the front.
func (r *Reorder) compact() {
	for len(r.buf) > 0 && r.buf[0].out {
		r.buf = r.buf[1:]
	}
}

// liveRV is the resourceVersion of a live watch event (an object's or an Event's, delta Added,
// Updated or Deleted, not a tombstone): the events Reorder may move.
func liveRV(ev *Event) (uint64, bool) {
	if !ev.Type.IsObject() && ev.Type != KubeEvent {
		return 0, false
	}
	switch ev.Obj.Delta {
	case DeltaAdded, DeltaUpdated, DeltaDeleted:
		if !ev.Obj.Tombstone {
			return parseRV(ev.ResourceVersion)
		}
	}
	return 0, false
}

func parseRV(s string) (uint64, bool) {
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
