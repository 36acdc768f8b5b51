package watchrun

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// watchRun is what a watch's pipeline writes to: the printer behind the outbox, the summary,
// the progress line, and whether stdout went away.
type watchRun struct {
	o          *Config
	ctx        context.Context
	pipe       *pipeline.Pipeline
	out        *pipeline.Output
	summary    *summary.Summary
	progress   *printer.ProgressLine
	stdoutGone *atomic.Bool
	logs       *ctrllog.Runner // --controller-logs, --controller-logs-from; nil without them
	start      time.Time
	rec        *recording.Writer
	resources  int // watched resources
	synced     int // Synced lines seen, for --memprofile's FILE.synced
	printer    *printer.Printer
	// exporter is --otlp's tracing stage; nil without it.
	exporter *tracing.Exporter
}

// newWatchRun makes the printer, the pipeline and the outbox, and starts the writer goroutine.
// readsLogs says that controllers' logs will be read (r.logs), which see every line.
func (o *Config) newWatchRun(ctx context.Context, cancel context.CancelFunc, rec *recording.Writer, exporter *tracing.Exporter, resources int, readsLogs bool) *watchRun {
	d := o.Display
	omitReconciles := d.Printer.OmitReconciles
	p := printer.New(o.Out, d.Printer)
	r := &watchRun{o: o, ctx: ctx, rec: rec, resources: resources, summary: summary.New(), stdoutGone: new(atomic.Bool), start: time.Now(), printer: p, exporter: exporter}
	watchClosedStdout(ctx, o.Out, func() {
		r.stdoutGone.Store(true)
		cancel()
	})
	// The informers do not wait for a terminal: human output goes through a bounded, lossy
	// outbox (adds and updates dropped or folded, counted; deletes, lifecycle lines and
	// diagnoses kept, up to twice the bound); machine-readable output never drops and waits
	// instead, saying so once per streak.
	lossy := d.Printer.Output.IsHuman()
	// Human output hides noise (counted); JSON and the recording keep every line.
	r.summary.HidesNoise = lossy
	outbox := pipeline.NewOutbox(max(o.OutputBuffer, 1), lossy, func() {
		if lossy {
			fmt.Fprintf(o.ErrOut, "kubectl informer: stdout is not keeping up; %d deletes and lifecycle lines wait, which are never dropped: the informers wait for it (said at most every 10s)\n", 2*max(o.OutputBuffer, 1))
			return
		}
		fmt.Fprintf(o.ErrOut, "kubectl informer: stdout is not keeping up; the informers wait for it (-o %s never drops events; said at most every 10s)\n", d.Printer.Output)
	})
	// A long initial list or relist shows an updating line on a terminal's stderr; the printer
	// clears it before it writes a line.
	r.progress = newProgressLine(o.ErrOut)
	if isTerminal(o.Out) { // the same screen, most likely: the line goes before stdout writes
		p.ClearsFirst(r.progress)
	}
	r.out = pipeline.StartOutput(outbox, p, cancel)
	cfg := pipeline.Config{
		// Every update is analyzed once, here, for every output (internal/analysis).
		Analysis: analysis.Config{Filter: o.Filter, HotLoopUpdates: d.HotLoopUpdates, HotLoopWindow: d.HotLoopWindow, Changes: d.Changes},
		Summary:  r.summary, Human: lossy, Fold: o.Fold,
		Shown: shownOf(p, d.Types),
		Emit:  r.out.Emit,
	}
	switch {
	case readsLogs: // the controllers' logs join every line
		cfg.Observe = r.observe
	case o.OnSynced != nil: // OnSynced waits for the Synced lines alone
		cfg.Observe, cfg.Observed = r.observe, []watch.Type{watch.Synced}
	}
	if rec != nil {
		// A recording is what -o json shows: Reconciled lines when workers are simulated.
		cfg.Record = func(ev *watch.Event) error {
			if ev.Type == watch.Reconciled && omitReconciles {
				return nil
			}
			return rec.Write(ev)
		}
		cfg.RecordFailed = func(error) { cancel() }
	}
	if exporter != nil {
		// Each update's changed paths go on its span.
		// The spans are of what -o json shows, as the recording is: a replay exports the same.
		cfg.Trace, cfg.Analysis.Changes = func(ev *watch.Event) {
			if ev.Type != watch.Reconciled || !omitReconciles {
				exporter.Line(ev)
			}
		}, true
	}
	r.pipe = pipeline.New(cfg)
	return r
}

// observe hands every line to the controllers' logs, when they are read, and calls OnSynced once
// every watched resource has synced.
func (r *watchRun) observe(ev *watch.Event) {
	if r.logs != nil {
		r.logs.Observe(ev)
	}
	if ev.Type != watch.Synced {
		return
	}
	if r.synced++; r.synced == r.resources {
		if r.o.OnSynced != nil {
			r.o.OnSynced()
		}
	}
}

// exit waits for stdout and the informers, closes the recording and prints the summary.
func (r *watchRun) exit(done <-chan error) error {
	o := r.o
	writeErr := r.out.Close(r.ctx)
	err := <-done
	// The spans still queued go now, for a few seconds at most: the summary counts what was lost.
	tracing.Finish(r.exporter, r.summary)
	rec := r.rec
	if recErr := r.pipe.RecordErr(); err == nil && recErr != nil {
		err = fmt.Errorf("writing the recording %s: %w", o.Record, recErr)
	}
	if rec != nil && err == nil {
		if cerr := rec.Close(); cerr != nil {
			err = fmt.Errorf("writing the recording %s: %w", o.Record, cerr)
		}
	}
	// A reader that went away (| head) ends the run quietly; a full disk does not.
	if err == nil && !r.stdoutGone.Load() {
		err = pipeline.StdoutError(writeErr)
	}
	if err == nil && writeErr == nil && !r.stdoutGone.Load() && !o.Display.NoSummary {
		_ = printer.WriteSummary(o.ErrOut, "summary after "+time.Since(r.start).Round(time.Millisecond).String(), r.summary)
	}
	if err == nil {
		err = pipeline.TemplateFailed(r.printer)
	}
	return err
}

// shownOf is the table of what p shows of the types given (--types; nil: every type).
func shownOf(p *printer.Printer, types map[watch.Type]bool) pipeline.Shown {
	omit, noFinalAPIStats := p.Omits()
	return pipeline.NewShown(types, omit, noFinalAPIStats)
}
