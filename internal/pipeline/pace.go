package pipeline

import (
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// A lossy outbox paces the lines of a list (Outbox): the initial list's, a relist's and a
// resync's all come at once, as fast as the informer hands them on (20,000 ConfigMaps read as
// received: 20,000 lines in ~80 ms), and beyond the bound a reader slower than that lost them,
// though it takes every line in time; while they waited, the outbox's slice grew to its bound
// (~850 bytes a line). Lines a watch delivers come at the server's pace and are not paced.

// listWindow is how many lines may wait before a list's line waits for the writer
// (at most the outbox's bound): three quarters of the outbox's first slice, so that a quarter of
// it is always taken when it is full, and it is compacted rather than grown (appendLocked) while
// a reader takes the list.
const listWindow = outboxFirst * 3 / 4

// stallAfter is how long a list's line waits for a writer that takes nothing before it gives
// up on the reader (stopped: a pager) and is kept or dropped as any add; Output.Close gives up
// on a reader after as long.
const stallAfter = time.Second

// pacing is an outbox's state for a list's line waiting for the writer (under the outbox's mu).
type pacing struct {
	room *sync.Cond // a waiting list's line may go on
	// waits: a list's line waits; epoch numbers the waits, for their stall timers.
	waits bool
	epoch uint64
	taken uint64 // lines the writer took
	// stalled: the writer took nothing for stallAfter while a list's line waited; its next
	// take clears it.
	stalled    bool
	stallAfter time.Duration
}

func (p *pacing) init(mu *sync.Mutex) {
	p.room = sync.NewCond(mu)
	p.stallAfter = stallAfter
}

// listLine reports whether ev is an add or update of a list: the initial list, a relist (delta
// Replaced) or a resync (Sync), which the informer hands on in one burst.
func listLine(ev *watch.Event) bool {
	if ev.Type != watch.Added && ev.Type != watch.Updated {
		return false
	}
	return ev.Obj.InitialList || ev.Obj.Delta == watch.DeltaReplaced || ev.Obj.Delta == watch.DeltaSync
}

// paceLocked makes a list's line wait for the writer while listWindow lines or more wait, until
// half of them are taken, as long as the writer takes a line at least every stallAfter. False:
// it gave up on a writer that took nothing for that long, now or at an earlier wait and nothing
// since; the line is then kept or dropped as any add.
func (o *Outbox) paceLocked() bool {
	p := &o.pace
	window := min(listWindow, o.max)
	if o.waiting < window {
		return true
	}
	if p.stalled {
		return false
	}
	p.epoch++
	p.waits = true
	epoch, last := p.epoch, p.taken
	var t *time.Timer
	t = time.AfterFunc(p.stallAfter, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		switch {
		case !p.waits || p.epoch != epoch: // a wait that ended
		case p.taken == last:
			p.stalled = true
			p.room.Broadcast()
		default:
			last = p.taken
			t.Reset(p.stallAfter)
		}
	})
	for o.waiting > window/2 && !p.stalled && !o.closed {
		p.room.Wait()
	}
	p.waits = false
	t.Stop()
	return !p.stalled
}

// tookLocked counts a line the writer took, and lets a list's line waiting for room go on.
func (o *Outbox) tookLocked() {
	p := &o.pace
	p.taken++
	p.stalled = false
	if p.waits && o.waiting <= min(listWindow, o.max)/2 {
		p.room.Signal()
	}
}
