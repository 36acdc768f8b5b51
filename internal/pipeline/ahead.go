package pipeline

import (
	"runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Encoding ahead (-o json): the writer goroutine was the slowest stage of a large initial
// list, encoding every typed object itself (printer.Prepare: ~50 µs a pod). A feeder takes the
// lines from the outbox in order and hands those with something to prepare to a few workers;
// the writer takes the lines in the same order, waits for a line's preparation when it is not
// done yet, and prints it with what was prepared (printer.PrintPrepared: the same bytes).
// At most aheadWindow lines are out of the outbox and not yet written, so what waits is still
// the outbox's (bounded, and said when it is full), and the prepared bytes are a small window.

// aheadWindow bounds the lines taken from the outbox and not yet written; aheadMaxWorkers the
// workers (one per core up to it).
const (
	aheadWindow     = 64
	aheadMaxWorkers = 4
)

// aheadLine is one line between the outbox and the writer.
type aheadLine struct {
	ev      watch.Event
	dropped int
	// done is closed when prep is set; nil: nothing to prepare.
	done chan struct{}
	prep printer.Prepared
}

// preparer is what the ahead stage needs of a printer (a test's slow or checking one too).
type preparer interface {
	Prepare(ev *watch.Event) printer.Prepared
	lineWriter
}

// aheadWorkers is how many workers prepare lines: one per core (GOMAXPROCS), at most
// aheadMaxWorkers.
func aheadWorkers() int { return min(max(runtime.GOMAXPROCS(0), 1), aheadMaxWorkers) }

// drainAhead is drain with the lines prepared ahead by workers goroutines, written in the
// outbox's order.
func drainAhead(outbox *Outbox, p preparer, workers int, cancel func()) error {
	lines := make(chan *aheadLine, aheadWindow)
	work := make(chan *aheadLine, aheadWindow)
	go feedAhead(outbox, lines, work)
	for range workers {
		go func() {
			for l := range work {
				l.prep = p.Prepare(&l.ev)
				close(l.done)
			}
		}()
	}
	var werr error
	for l := range lines {
		if l.done != nil {
			<-l.done
		}
		if werr != nil {
			continue
		}
		if werr = writeLine(p, l.dropped, &l.ev, l.prep, len(lines) == 0 && outbox.Len() == 0); werr != nil {
			cancel()
		}
	}
	if werr == nil {
		werr = p.Flush()
	}
	return werr
}

// feedAhead takes the outbox's lines in order: every line goes to lines, those with an object
// to encode to work too (first, so a worker may start on it before the writer waits for it).
// It closes both once the outbox is closed and empty.
func feedAhead(outbox *Outbox, lines, work chan<- *aheadLine) {
	defer close(lines)
	defer close(work)
	for {
		ev, pr, dropped, ok := outbox.GetPrepared()
		if !ok {
			return
		}
		l := &aheadLine{ev: ev, dropped: dropped, prep: pr}
		if ev.Type.IsObject() && ev.Obj.Object == nil && ev.HasObject() {
			l.done = make(chan struct{})
			work <- l
		}
		lines <- l
	}
}
