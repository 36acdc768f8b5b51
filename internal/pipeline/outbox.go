package pipeline

import (
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Outbox sits between the informers and a slow reader of the output (a pager, a slow
// terminal).
//
// Lossy (human output), the informers do not wait for the reader. Beyond the bound, only lines
// the next ones supersede are given up: an update whose object already has an update waiting is
// folded into it (the older one is removed, the newest keeps its place at the end and counts
// what it folded), other adds and updates, bookmarks, reconciles and scraped queue figures are
// dropped and counted, and the count comes out as one Dropped line when the reader catches up.
// Deletes (tombstones included), lifecycle lines (List, Relist, Error, ...) and diagnoses
// (HotLoop, HotLoopEnded) are never dropped: they may take the outbox to twice its bound, and
// only beyond that does Put wait, saying so through behind, as a lossless outbox does.
//
// The lines of a list (the initial list's adds, a relist's adds and updates, a resync's
// updates) come all at once, faster than any reader takes them. Lossy, such a line waits for the
// writer once listWindow lines wait (until half of them are taken) as long as the writer takes a
// line at least every stallAfter: a reader that reads gets the whole list, paced, and the outbox
// stays small. A writer that took nothing for that long has a reader that stopped (a pager): the
// list's lines are then kept or dropped as any add, until the writer takes a line again.
//
// Lossless (-o json), it applies backpressure: Put waits while it is full, and reports it
// through behind, at most once every ten seconds.
type Outbox struct {
	mu   sync.Mutex
	cond *sync.Cond
	// buf[head:] waits; a hole is an update folded into a later one.
	buf  []slot
	head int
	// base is the position of buf[0] since the outbox was made: positions survive compaction.
	base    int
	waiting int // events in buf[head:], holes excluded
	holes   int
	max     int
	lossy   bool
	dropped int
	closed  bool
	behind  func()
	// announced is when behind was last called: at most once per behindEvery.
	announced time.Time
	// last is the position of each object's last waiting line, in a lossy outbox that had to
	// fold: built when the first fold is tried (the outbox is full then), kept up while lines
	// wait, dropped when the outbox runs empty. A reader that keeps up never pays for it (two
	// object keys and a map entry per line were a tenth of the lines' way after a large list).
	last map[string]int
	// pace is the state of a list's line waiting for the writer (pace.go).
	pace pacing
}

type slot struct {
	ev   watch.Event
	prep printer.Prepared
	hole bool
}

// behindEvery spaces out the "not keeping up" notices of a reader that stays slow.
const behindEvery = 10 * time.Second

// outboxFirst is the capacity of an outbox's first slice (at most its bound).
const outboxFirst = 1024

// NewOutbox returns an outbox holding at most max events (lines that are never dropped may take
// a lossy one to twice that). behind, if set, is called when a Put starts waiting.
func NewOutbox(max int, lossy bool, behind func()) *Outbox {
	o := &Outbox{max: max, lossy: lossy, behind: behind, buf: make([]slot, 0, min(max, outboxFirst))}
	o.cond = sync.NewCond(&o.mu)
	o.pace.init(&o.mu)
	return o
}

// droppable reports whether a slow reader may lose a line of type t: adds and updates (the
// object's next line, or the Dropped count, tells), bookmarks, reconciles and scraped queue
// figures (the next ones supersede them). Never deletes, lifecycle lines or diagnoses.
func droppable(t watch.Type) bool {
	switch t {
	case watch.Added, watch.Updated, watch.Bookmark, watch.Reconciled, watch.ControllerQueue:
		return true
	}
	return false
}

// Put adds an event. Lossy: it waits only when twice the bound of lines that are never dropped
// wait, or for a writer that takes an initial list's lines (paceLocked). Lossless: it waits
// while the outbox is full.
func (o *Outbox) Put(ev watch.Event) { o.PutPrepared(&ev, printer.Prepared{}) }

// PutPrepared is Put of an event with what was prepared of its line ahead (printer.Lighten),
// which GetPrepared hands out with it.
// The event is copied into the outbox.
func (o *Outbox) PutPrepared(ev *watch.Event, pr printer.Prepared) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case !o.lossy:
		o.waitLocked(o.max)
	case !droppable(ev.Type):
		o.waitLocked(2 * o.max)
	case listLine(ev) && o.paceLocked():
		// room made by a writer that takes the list's lines
	case o.waiting >= o.max && !o.foldLocked(ev):
		o.dropped++
		return
	}
	o.appendLocked(ev, pr)
	o.cond.Broadcast()
}

// waitLocked waits while limit events or more wait, announcing it.
func (o *Outbox) waitLocked(limit int) {
	for o.waiting >= limit && !o.closed {
		if now := time.Now(); now.Sub(o.announced) >= behindEvery {
			o.announced = now
			if o.behind != nil {
				o.behind()
			}
		}
		o.cond.Wait()
	}
}

// foldLocked folds the update waiting for ev's object, if its last waiting line is one, into
// ev: the older one becomes a hole and ev counts it (and what it had folded).
func (o *Outbox) foldLocked(ev *watch.Event) bool {
	if ev.Type != watch.Updated {
		return false
	}
	if o.last == nil {
		o.indexLocked()
	}
	pos, ok := o.last[ev.ObjectID()]
	if !ok {
		return false
	}
	s := &o.buf[pos-o.base]
	if s.hole || s.ev.Type != watch.Updated {
		return false
	}
	ev.Obj.Folded += s.ev.Obj.Folded + 1
	*s = slot{hole: true}
	o.holes++
	o.waiting--
	return true
}

func (o *Outbox) appendLocked(ev *watch.Event, pr printer.Prepared) {
	if len(o.buf) == cap(o.buf) && 4*(o.head+o.holes) >= len(o.buf) && len(o.buf) > 0 {
		// Reuse the consumed front and the holes instead of growing: the outbox stays one
		// bounded slice.
		o.compactLocked()
	}
	if o.last != nil && ev.Type.IsObject() {
		o.last[ev.ObjectID()] = o.base + len(o.buf)
	}
	if len(o.buf) == cap(o.buf) {
		o.growLocked()
	}
	// Filled in place: the event is copied once.
	o.buf = o.buf[:len(o.buf)+1]
	s := &o.buf[len(o.buf)-1]
	s.ev, s.prep, s.hole = *ev, pr, false
	o.waiting++
}

// growLocked makes the outbox's slice four times as large, up to the bound (twice the bound
// past it, for the lines never dropped). append grows a large slice by a quarter at a time: a
// list's lines pouring in faster than the writer takes them (10,000 lines of ~900 bytes) made it
// copy its whole buffer about ten times over, each old copy garbage; doubling still copied 15,000
// slots.
func (o *Outbox) growLocked() {
	limit := o.max
	if len(o.buf) >= o.max {
		limit = 2 * o.max
	}
	buf := make([]slot, len(o.buf), max(min(4*cap(o.buf), limit), len(o.buf)+1, 16))
	copy(buf, o.buf)
	o.buf = buf
}

func (o *Outbox) compactLocked() {
	n := 0
	for _, s := range o.buf[o.head:] {
		if !s.hole {
			o.buf[n] = s
			n++
		}
	}
	clear(o.buf[n:])
	o.base += len(o.buf) // fresh positions: none in last survives
	o.buf, o.head, o.holes = o.buf[:n], 0, 0
	if o.last != nil {
		o.indexLocked()
	}
}

// indexLocked (re)builds last from the lines waiting.
func (o *Outbox) indexLocked() {
	if o.last == nil {
		o.last = make(map[string]int, o.waiting)
	}
	clear(o.last)
	for i := o.head; i < len(o.buf); i++ {
		if s := &o.buf[i]; !s.hole && s.ev.Type.IsObject() {
			o.last[s.ev.ObjectID()] = o.base + i
		}
	}
}

// Get waits for the next event. dropped is the number of events dropped just before it (print
// it first). ok is false once the outbox is closed and empty.
func (o *Outbox) Get() (ev watch.Event, dropped int, ok bool) {
	ev, _, dropped, ok = o.GetPrepared()
	return ev, dropped, ok
}

// GetPrepared is Get with what was prepared of the event's line (PutPrepared's).
func (o *Outbox) GetPrepared() (ev watch.Event, pr printer.Prepared, dropped int, ok bool) {
	pr, dropped, ok, _ = o.getInto(&ev)
	return ev, pr, dropped, ok
}

// getInto is GetPrepared into *ev (one copy of the event, not two), also saying whether the
// outbox is empty after it (idle: the writer flushes then). *ev is zero when there is no event.
func (o *Outbox) getInto(ev *watch.Event) (pr printer.Prepared, dropped int, ok, idle bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.waiting == 0 && o.dropped == 0 && !o.closed {
		o.cond.Wait()
	}
	dropped, o.dropped = o.dropped, 0
	for o.head < len(o.buf) && o.buf[o.head].hole {
		o.buf[o.head] = slot{}
		o.head++
		o.holes--
	}
	if o.waiting == 0 {
		o.resetIfEmptyLocked()
		*ev = watch.Event{}
		return printer.Prepared{}, dropped, dropped > 0, true
	}
	s := &o.buf[o.head]
	*ev, pr = s.ev, s.prep
	if o.last != nil && ev.Type.IsObject() {
		if k := ev.ObjectID(); o.last[k] == o.base+o.head {
			delete(o.last, k)
		}
	}
	*s = slot{}
	o.head++
	o.waiting--
	o.resetIfEmptyLocked()
	o.tookLocked()
	o.cond.Broadcast()
	return pr, dropped, true, o.waiting == 0
}

func (o *Outbox) resetIfEmptyLocked() {
	if o.waiting == 0 && o.head > 0 {
		clear(o.buf[o.head:])
		o.base += len(o.buf)
		o.buf, o.head, o.holes = o.buf[:0], 0, 0
		o.last = nil // the reader caught up: no index until a fold is tried again
	}
}

// Close wakes everyone; Get drains what is left, then reports !ok.
func (o *Outbox) Close() {
	o.mu.Lock()
	o.closed = true
	o.cond.Broadcast()
	o.pace.room.Broadcast()
	o.mu.Unlock()
}

// Len is the number of events waiting.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waiting
}
