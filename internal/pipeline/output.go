package pipeline

import (
	"context"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Output is a live run's last stage: a bounded outbox (human output may drop or fold, JSON
// waits) drained by one writer goroutine, the only one that writes stdout (with -o json, a few
// workers encode the lines' objects ahead of it, in order: ahead.go).
type Output struct {
	outbox  *Outbox
	printed chan error
	// lighten reads a typed line's state before the line waits in the outbox and drops its
	// decoded objects where the line needs nothing else of them (printer.Lighten).
	lighten func(*watch.Event) printer.Prepared
}

// StartOutput starts the writer goroutine printing what outbox hands out. cancel stops the run
// after a write error. The printer erases the progress line before each write, when it shares
// the screen (printer.Printer.ClearsFirst).
func StartOutput(outbox *Outbox, p *printer.Printer, cancel func()) *Output {
	// A line's state is read on the pipeline's goroutine as the line goes in, and its decoded
	// objects dropped where nothing else needs them, so the lines waiting for the writer hold no
	// decoded objects (and the writer, the slowest stage of a large initial list, has less to do).
	o := &Output{outbox: outbox, printed: make(chan error, 1), lighten: p.Lighten}
	if p.Prepares() { // -o json: typed objects encoded ahead, on every core (ahead.go)
		go func() { o.printed <- drainAhead(outbox, p, aheadWorkers(), cancel) }()
		return o
	}
	go func() { o.printed <- drain(outbox, p, cancel) }()
	return o
}

// Emit puts a line in the outbox; it is the pipeline's Emit for a live run.
func (o *Output) Emit(ev *watch.Event) error {
	// A line the informer prepared (watch.Config.Prepare: printer.PrepareAdded) has its state
	// read already, and no object.
	if pr, ok := ev.TakePrepared().(printer.Prepared); ok {
		o.outbox.PutPrepared(ev, pr)
		return nil
	}
	o.outbox.PutPrepared(ev, o.lighten(ev))
	return nil
}

// Close closes the outbox and waits for the writer to drain it: its write error, if any.
// Once ctx is done (signal, --timeout, a closed stdout) it gives up when the reader has taken
// nothing for a second: a stuck pager must not keep the process alive after Ctrl-C.
func (o *Output) Close(ctx context.Context) error {
	o.outbox.Close()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := -1
	for {
		select {
		case err := <-o.printed:
			return err
		case <-tick.C:
			n := o.outbox.Len()
			if ctx.Err() != nil && n == last {
				return nil
			}
			last = n
		}
	}
}

// drain prints what the outbox hands out, flushing whenever it runs empty (so a live terminal
// sees every line at once, and a busy pipe gets large writes). After a write error (stdout
// gone) it keeps draining without printing, so nothing waits on it.
func drain(outbox *Outbox, p lineWriter, cancel func()) error {
	var werr error
	// One event for every line (the printer keeps none): not one on the heap per line.
	var ev watch.Event
	var pr printer.Prepared
	for {
		var dropped int
		var ok, idle bool
		pr, dropped, ok, idle = outbox.getInto(&ev)
		if !ok {
			break
		}
		if werr != nil {
			continue
		}
		if werr = writeLine(p, dropped, &ev, pr, idle); werr != nil {
			cancel()
		}
	}
	if werr == nil {
		werr = p.Flush()
	}
	return werr
}

// lineWriter is what the writer goroutine needs of a printer: one call a line
// (printer.Printer.WriteOut), and the last flush.
type lineWriter interface {
	WriteOut(dropped, ev *watch.Event, pr printer.Prepared, flush bool) error
	Flush() error
}

// writeLine writes one line the outbox handed out, in one call: the Dropped line for the lines
// it dropped before it, then the line itself (when it has one) with what was prepared of it,
// then a flush when nothing else waits (idle).
func writeLine(p lineWriter, dropped int, ev *watch.Event, pr printer.Prepared, idle bool) error {
	var d *watch.Event
	if dropped > 0 {
		d = &watch.Event{Type: watch.Dropped, Time: time.Now(), Lifecycle: watch.LifecycleInfo{Items: dropped}}
	}
	return p.WriteOut(d, ev, pr, idle)
}
