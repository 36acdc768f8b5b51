package printer

import (
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Outbox sits between the informers and a slow reader of the output (a pager, a slow
// terminal). Lossy, it never blocks: object lines beyond its bound are dropped and counted, and
// the count comes out as one Dropped line when the reader catches up; lifecycle lines (List,
// Relist, Error, ...) are kept. Lossless (-o json), it applies backpressure: Put waits while it
// is full, and reports it through behind, at most once every ten seconds.
type Outbox struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     []watch.Event // buf[head:] waits
	head    int
	max     int
	lossy   bool
	dropped int
	closed  bool
	behind  func()
	// announced is when behind was last called: at most once per behindEvery.
	announced time.Time
}

// behindEvery spaces out the "not keeping up" notices of a reader that stays slow.
const behindEvery = 10 * time.Second

// NewOutbox returns an outbox holding at most max events (lifecycle lines may take it to twice
// that when lossy). behind, if set, is called when a lossless Put starts waiting.
func NewOutbox(max int, lossy bool, behind func()) *Outbox {
	o := &Outbox{max: max, lossy: lossy, behind: behind, buf: make([]watch.Event, 0, min(max, 1024))}
	o.cond = sync.NewCond(&o.mu)
	return o
}

func keepAlways(t watch.Type) bool {
	return !t.IsObject() && t != watch.Reconciled && t != watch.ControllerQueue && t != watch.Bookmark
}

// Put adds an event. Lossy: it never blocks. Lossless: it blocks while the outbox is full.
func (o *Outbox) Put(ev watch.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lossy {
		if n := o.lenLocked(); n >= o.max && (!keepAlways(ev.Type) || n >= 2*o.max) {
			o.dropped++
			return
		}
	} else {
		for o.lenLocked() >= o.max && !o.closed {
			if now := time.Now(); now.Sub(o.announced) >= behindEvery {
				o.announced = now
				if o.behind != nil {
					o.behind()
				}
			}
			o.cond.Wait()
		}
	}
	if o.head > 0 && len(o.buf) == cap(o.buf) {
		// Reuse the consumed front instead of growing: the outbox stays one bounded slice.
		n := copy(o.buf, o.buf[o.head:])
		clear(o.buf[n:])
		o.buf, o.head = o.buf[:n], 0
	}
	o.buf = append(o.buf, ev)
	o.cond.Broadcast()
}

func (o *Outbox) lenLocked() int { return len(o.buf) - o.head }

// Get waits for the next event. dropped is the number of events dropped just before it (print
// it first). ok is false once the outbox is closed and empty.
func (o *Outbox) Get() (ev watch.Event, dropped int, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.lenLocked() == 0 && o.dropped == 0 && !o.closed {
		o.cond.Wait()
	}
	dropped, o.dropped = o.dropped, 0
	if o.lenLocked() == 0 {
		return watch.Event{}, dropped, dropped > 0
	}
	ev = o.buf[o.head]
	o.buf[o.head] = watch.Event{}
	o.head++
	if o.head == len(o.buf) {
		o.buf, o.head = o.buf[:0], 0
	}
	o.cond.Broadcast()
	return ev, dropped, true
}

// Close wakes everyone; Get drains what is left, then reports !ok.
func (o *Outbox) Close() {
	o.mu.Lock()
	o.closed = true
	o.cond.Broadcast()
	o.mu.Unlock()
}

// Len is the number of events waiting.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lenLocked()
}

// Shows reports whether p prints anything for ev, so that hidden events (bookmarks and
// reconciles in human output, unless asked for) neither fill an outbox nor count as dropped.
func (p *Printer) Shows(ev *watch.Event) bool {
	if p.opts.Output != "" && p.opts.Output != "wide" {
		return ev.Type != watch.Reconciled || !p.opts.OmitReconciles
	}
	switch ev.Type {
	case watch.Bookmark:
		return p.opts.ShowBookmarks
	case watch.Reconciled:
		return p.opts.ShowReconciles
	}
	return true
}
