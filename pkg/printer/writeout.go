package printer

import "github.com/kubectl-informer/kubectl-informer/pkg/watch"

// ClearsFirst makes WriteOut erase l before it writes (l is on the same screen as the output:
// a terminal's progress line); nil erases nothing.
func (p *Printer) ClearsFirst(l *ProgressLine) { p.progress = l }

// WriteOut is one turn of a live output's writer, in one call: it erases the progress line
// (ClearsFirst), prints dropped (a Dropped line) when not nil, then ev with what was prepared of
// it (PrintPrepared) when ev has a type, then flushes when flush (nothing else waits).
func (p *Printer) WriteOut(dropped, ev *watch.Event, pr Prepared, flush bool) error {
	p.progress.Clear()
	var err error
	if dropped != nil {
		err = p.Print(dropped)
	}
	if err == nil && ev.Type != "" {
		err = p.PrintPrepared(ev, pr)
	}
	if err == nil && flush {
		err = p.Flush()
	}
	return err
}
