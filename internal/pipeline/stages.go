// Package pipeline is the one path every line takes, whatever its source (the informers, the
// scrapers, the API accounting, a recording) and whatever the command (watch, replay, report, top):
//
//	source → order → analysis → summary and recording → noise (hide, fold) → output
//
// Commands build a Config from their flags and hand the pipeline their events; nothing else
// assembles these steps. The analysis step (internal/analysis) computes what a line needs once;
// the stages after it only read it.
package pipeline

import (
	"slices"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Config says what the stages do with each line. Only Summary is required; a nil hook is
// skipped.
type Config struct {
	// Analysis configures the analysis step (changes, noise marks, hot loops).
	Analysis analysis.Config
	// Summary counts every kept line (and every Folded line human output shows).
	Summary *summary.Summary
	// Human output hides noise and, with Fold > 0, folds the updates of objects in a hot loop
	// into Folded lines; other outputs get every line.
	Human bool
	Fold  time.Duration
	// FoldByEventTime makes Folded lines due by the lines' own times (a recording's clock)
	// instead of the wall clock's ticks.
	FoldByEventTime bool

	// Keep filters an analyzed line before anything counts it (replay's filters).
	Keep func(*watch.Event) bool
	// Wait runs before a kept line is counted (replay --speed); an error stops the pipeline.
	Wait func(*watch.Event) error
	// Observe sees every kept line once it is counted; with Observed, only the lines of
	// those types (nil: every line).
	Observe  func(*watch.Event)
	Observed []watch.Type
	// Record writes a kept line to the recording; after its first error the recording stops
	// and RecordFailed is told.
	Record       func(*watch.Event) error
	RecordFailed func(error)
	// Trace hands a kept line to the tracing stage (--otlp: internal/tracing), which never
	// waits for its collector.
	Trace func(*watch.Event)
	// Shown is what the output shows at all (its types, --types). An update the output would
	// not show is not folded either.
	Shown Shown
	// Emit hands a shown line to the output; an error stops the pipeline.
	Emit func(*watch.Event) error
}

// Pipeline runs lines through the stages, one at a time (it is not safe for concurrent use).
type Pipeline struct {
	cfg    Config
	step   *analysis.Step
	hides  bool          // human output: noise hidden, hot objects folded
	folder *noise.Folder // human output with --fold; nil otherwise
	// passed holds the Folded lines pass found due before a line, reused from line to line.
	passed []watch.Event
	// one is the slot of an informer line that needs no ordering (Live without a window).
	one    [1]watch.Event
	recErr error
	err    error
}

// New returns the stages of cfg.
func New(cfg Config) *Pipeline {
	p := &Pipeline{cfg: cfg, hides: cfg.Human}
	if p.hides && cfg.Fold > 0 {
		p.folder = noise.NewFolder(cfg.Fold)
		// Folding reads an update's changes.
		cfg.Analysis.Changes = true
	}
	p.step = analysis.New(cfg.Analysis)
	return p
}

// Step is the analysis step, for what it knows at the end (ongoing hot loops).
func (p *Pipeline) Step() *analysis.Step { return p.step }

// Err is the error that stopped the pipeline (Wait's or Emit's), nil while it runs.
func (p *Pipeline) Err() error { return p.err }

// RecordErr is the recording's first write error.
func (p *Pipeline) RecordErr() error { return p.recErr }

// Process analyzes a line as it came from its source and passes on what the analysis hands
// on (the line, and the hot-loop lines it starts).
// ev is marked and passed on in place, not copied.
func (p *Pipeline) Process(ev *watch.Event) {
	if p.err != nil {
		return
	}
	keep, started := p.step.Mark(ev)
	if keep {
		p.handle(ev)
	}
	if started != nil {
		p.handle(started)
	}
}

// Handle passes a line that needs no analysis (the scrapers', the API accounting's, a hot
// loop's end) through the stages after the analysis.
func (p *Pipeline) Handle(ev watch.Event) { p.handle(&ev) }

// handle is Handle on the line in place (the hooks may mark it, as Handle's copy): an
// analyzed line is not copied once more, nor moved to the heap, on its way.
func (p *Pipeline) handle(ev *watch.Event) {
	if p.err != nil {
		return
	}
	c := p.cfg
	if c.Keep != nil && !c.Keep(ev) {
		return
	}
	if c.Wait != nil {
		if p.err = c.Wait(ev); p.err != nil {
			return
		}
	}
	c.Summary.Add(ev)
	if c.Observe != nil && (c.Observed == nil || slices.Contains(c.Observed, ev.Type)) {
		c.Observe(ev)
	}
	if c.Record != nil && p.recErr == nil {
		if p.recErr = c.Record(ev); p.recErr != nil && c.RecordFailed != nil {
			c.RecordFailed(p.recErr)
		}
	}
	if c.Trace != nil {
		c.Trace(ev)
	}
	if c.FoldByEventTime {
		p.emit(p.foldDue(ev.Time))
	}
	before, show := p.pass(ev)
	p.emit(before)
	clear(p.passed) // the buffer keeps no object alive
	p.passed = p.passed[:0]
	if show {
		p.emitOne(ev)
	}
}

// Ended passes the hot-loop ends that are due by now (a window passed without an update).
func (p *Pipeline) Ended(now time.Time) {
	for _, ev := range p.step.Ended(now) {
		p.Handle(ev)
	}
}

// FoldDue emits the Folded lines whose interval is over by now.
func (p *Pipeline) FoldDue(now time.Time) { p.emit(p.foldDue(now)) }

// Close passes what the stages still hold: the hot loops that ended by now, every pending
// Folded line.
func (p *Pipeline) Close(now time.Time) {
	p.Ended(now)
	p.Flush()
}

// Flush emits every pending Folded line.
func (p *Pipeline) Flush() {
	if p.folder != nil {
		p.emit(p.folder.Flush())
	}
}

// Folds reports whether the stages fold hot objects' updates.
func (p *Pipeline) Folds() bool { return p.folder != nil }

func (p *Pipeline) foldDue(now time.Time) []watch.Event {
	if p.folder == nil {
		return nil
	}
	return p.folder.Due(now)
}

// shows says whether the output shows ev.
func (p *Pipeline) shows(ev *watch.Event) bool {
	return p.cfg.Shown.shows(ev)
}

// pass says what the output shows for ev, in order: the Folded lines due before it (before),
// then ev itself (show) unless human output hides it as noise or folds it.
func (p *Pipeline) pass(ev *watch.Event) (before []watch.Event, show bool) {
	if !p.hides {
		return nil, p.shows(ev)
	}
	if p.folder == nil {
		return nil, !noise.Hidden(ev) && p.shows(ev)
	}
	// The folder reads the noise marks itself (noise.Folder.Pass).
	p.passed, show = p.folder.Pass(p.passed[:0], ev, p.shows(ev))
	return p.passed, show
}

// emit hands shown lines to the output.
func (p *Pipeline) emit(evs []watch.Event) {
	for i := range evs {
		p.emitOne(&evs[i])
	}
}

// emitOne hands a shown line to the output; a Folded line is also counted, once, here.
func (p *Pipeline) emitOne(ev *watch.Event) {
	if p.err != nil {
		return
	}
	if ev.Type == watch.Folded {
		p.cfg.Summary.Add(ev)
	}
	if p.cfg.Emit != nil {
		p.err = p.cfg.Emit(ev)
	}
}
