package replayrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// replayState is one replay's moving parts.
type replayState struct {
	o        *Config
	first    *firstLine // read ahead by Run (the header, for the spans), not yet handled
	audit    *audit.Recorded
	ctx      context.Context
	name     string // the recording, as messages name it
	p        *printer.Printer
	pOpts    printer.Options    // PluginVersion and ShowSecrets set by setPrinter
	redacted bool               // the recording's Secret values were redacted when recorded
	pipe     *pipeline.Pipeline // analysis, summary, noise and folding, then the printer
	summary  *summary.Summary
	preds    *predicateCheck  // --predicate
	history  *printer.History // --history: one object's rows, printed at the end
	filter   *replay.Filter
	pacer    *replay.Pacer // --speed; nil: as fast as possible
	// exporter is --otlp's tracing stage; nil without it.
	exporter *tracing.Exporter

	span  replay.Span // the recording's first and last event times
	lines int         // lines read, damaged ones left out
	shown int

	warned       map[string]bool
	damaged      []int
	writeErr     error
	interrupted  bool
	secretWarned bool
}

func (o *Config) newReplayState(ctx context.Context, name string, exporter *tracing.Exporter) *replayState {
	summary := summary.New()
	summary.FromRecording = true
	s := &replayState{o: o, ctx: ctx, name: name, summary: summary, filter: &o.Filter, warned: map[string]bool{}, exporter: exporter}
	if len(o.Predicates) > 0 {
		s.preds = newPredicateCheck(o.Predicates)
	}
	if o.Speed > 0 {
		s.pacer = &replay.Pacer{Speed: o.Speed}
	}
	human := o.Printer.Output.IsHuman()
	s.summary.HidesNoise = human
	cfg := pipeline.Config{
		Analysis: analysis.Config{Filter: o.Noise, Changes: o.Changes || o.History != ""},
		Summary:  s.summary, Human: human, Fold: o.Fold,
		// Folded lines are due by the recording's clock, as the live run's were by its own.
		FoldByEventTime: true,
		Keep:            s.filter.Keep, Wait: s.wait, Observe: s.observe, Emit: s.emit,
		// Keep kept the lines of --types only: of the others, Folded lines stand for updates.
		Shown: pipeline.NewShown(s.filter.Types, nil, false),
	}
	if o.Redetect {
		// Detecting again replaces the recorded HotLoop lines.
		cfg.Analysis.HotLoopUpdates, cfg.Analysis.HotLoopWindow, cfg.Analysis.Redetect = o.HotLoopUpdates, o.HotLoopWindow, true
	}
	if o.History != "" {
		s.history = printer.NewHistory(printer.Options{Timestamps: o.Printer.Timestamps, ShowSecrets: o.ShowSecrets})
		s.history.Fold = o.Fold > 0                             // a hot loop's alike updates in one row, as human output folds them
		s.history.Wide = o.Printer.Output == printer.OutputWide // each STATE whole
		// One object's rows, at the end: nothing printed, paced or folded as it goes.
		cfg.Human, cfg.Wait, cfg.Emit = false, nil, nil
		cfg.Keep = func(ev *watch.Event) bool {
			_, _, ok := s.filter.ObjectOf(ev)
			return s.filter.Keep(ev) && ok && ev.Type != watch.KubeEvent
		}
	}
	if exporter != nil {
		cfg.Trace, cfg.Analysis.Changes = exporter.Line, true
	}
	s.pipe = pipeline.New(cfg)
	s.pOpts = o.Printer
	return s
}

// readAll reads the recording to its end, an interrupt, a closed stdout or a fatal error
// (returned; io.EOF at the end).
func (s *replayState) readAll(rd *replay.Reader) error {
	var fatal error
	for fatal == nil && s.writeErr == nil && !s.interrupted {
		if s.ctx.Err() != nil {
			s.interrupted = true
			break
		}
		line, err := s.next(rd)
		if err != nil {
			fatal = s.readError(err)
			continue
		}
		s.lines++
		if s.lines == 1 && line.Header == nil && rd.Headerless {
			s.warn("%s has no recording header (plain -o json output?): replaying it as format version %d", s.name, recording.FormatVersion)
		}
		fatal = s.line(line)
	}
	return fatal
}

// next is the recording's next line: the one Run read ahead first, when it did.
func (s *replayState) next(rd *replay.Reader) (replay.Line, error) {
	if f := s.first; f != nil {
		s.first = nil
		return f.line, f.err
	}
	return rd.Next()
}

// readError handles what the reader could not decode: a line of an unknown type is skipped
// (said once per type), a damaged line reported and skipped (fatal with --strict).
func (s *replayState) readError(err error) error {
	var lerr *replay.LineError
	var unknown *recording.UnknownTypeError
	switch {
	case errors.Is(err, io.EOF):
		return io.EOF
	case errors.As(err, &lerr) && errors.As(err, &unknown):
		if !s.warned[unknown.Type] {
			s.warned[unknown.Type] = true
			s.warn("line %d: unknown line type %q (written by a newer kubectl informer?); lines of this type are skipped", lerr.Line, unknown.Type)
		}
		return nil
	case errors.As(err, &lerr):
		if s.o.Strict {
			return fmt.Errorf("%s: %w (--strict: stopped there)", s.name, lerr)
		}
		s.damaged = append(s.damaged, lerr.Line)
		fmt.Fprintln(s.o.ErrOut, s.o.ErrorLine(lerr))
		return nil
	}
	return fmt.Errorf("%s: %w", s.name, err)
}

// line takes in one decoded line: a header, or an event for the analysis stages and the
// filters.
func (s *replayState) line(line replay.Line) error {
	if line.Header != nil {
		if err := s.learnResources(headerResources(line.Header)); err != nil {
			return err
		}
		s.header(line.Header)
		return nil
	}
	ev := line.Event
	if ev.Type == watch.Informer && ev.Lifecycle.Info != nil {
		if err := s.learnResources(append(append([]discovery.Resource{}, ev.Lifecycle.Info.Resources...), ev.Lifecycle.Info.OwnedResources...)); err != nil {
			return err
		}
	}
	if ev.Type == watch.Informer {
		s.redacted = line.SecretsRedacted
		s.setPrinter(line.PluginVersion)
	}
	if s.preds != nil {
		s.preds.observe(&ev)
	}
	s.audit.Join(&ev)
	s.seen(&ev)
	s.pipe.Process(&ev)
	if !ev.Time.IsZero() { // detecting again: the loops that ended by the recording's time
		s.pipe.Ended(ev.Time)
	}
	return nil
}

// finish flushes what is held, prints --history's table and the summary, and returns the
// replay's error.
func (s *replayState) finish(fatal error) error {
	o, name := s.o, s.name
	s.pipe.Flush()
	tracing.Finish(s.exporter, s.summary)
	if s.p != nil && s.writeErr == nil {
		s.writeErr = s.p.Flush()
	}
	if fatal != nil && !errors.Is(fatal, io.EOF) {
		return fatal
	}
	if s.history != nil && s.writeErr == nil && !s.interrupted {
		if s.history.Len() == 0 {
			return fmt.Errorf("%s has no events of %q", name, o.History)
		}
		s.writeErr = s.history.Write(o.Out)
	}
	if s.lines == 0 && !s.interrupted {
		if len(s.damaged) > 0 {
			// Nothing replayed: no summary of nothing, the same verdict report gives.
			return fmt.Errorf("%s is not a recording: every line is damaged (%s)", name, lineList(s.damaged))
		}
		return fmt.Errorf("%s is empty: not a recording", name)
	}
	if s.filter.Resources != nil && !s.interrupted && s.writeErr == nil {
		if err := s.filter.Resources.Check(); err != nil {
			return err
		}
	}
	if s.writeErr != nil {
		// stdout went away (| head): stop quietly, as watch does; a full disk is an error.
		return pipeline.StdoutError(s.writeErr)
	}
	if !o.NoSummary {
		if s.preds != nil {
			s.summary.Predicates = s.preds.report(o.PredicateList)
		}
		s.writeSummary()
	}
	if n := len(s.damaged); n > 0 {
		return fmt.Errorf("%s: %d damaged %s not replayed (%s)", name, n, plural(n, "line", "lines"), lineList(s.damaged))
	}
	if s.p != nil {
		return pipeline.TemplateFailed(s.p)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func lineList(nums []int) string {
	var parts []string
	for i, n := range nums {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(nums)-10))
			break
		}
		parts = append(parts, fmt.Sprint(n))
	}
	return "line " + strings.Join(parts, ", ")
}

func (s *replayState) warn(format string, args ...any) {
	fmt.Fprintln(s.o.ErrOut, "warning: "+printer.Escape(fmt.Sprintf(format, args...)))
}

// header takes in a recording header: the printer's plugin version and redaction, and, in
// human output, a comment line saying what is replayed.
func (s *replayState) header(h *recording.Header) {
	s.redacted = h.SecretsRedacted
	s.setPrinter(h.PluginVersion)
	if !s.pOpts.Output.IsHuman() || s.o.NoHeaders || s.writeErr != nil {
		return
	}
	s.writeErr = s.p.PrintComment(fmt.Sprintf("# replay of %s: recorded %s by kubectl informer %s against Kubernetes %s", s.name, h.Time, h.PluginVersion, h.ServerVersion))
}

// setPrinter (re)makes the printer when the recording's plugin version or redaction changes
// (a recording of several runs): the Informer line carries both.
func (s *replayState) setPrinter(pluginVersion string) {
	opts := s.pOpts
	opts.PluginVersion = pluginVersion
	// Values redacted at recording time cannot be shown; ones recorded with --show-secrets are
	// redacted now unless --show-secrets.
	showSecrets := s.o.ShowSecrets
	opts.ShowSecrets = showSecrets && !s.redacted
	if showSecrets && s.redacted && !s.secretWarned {
		s.secretWarned = true
		s.warn("the recording's Secret values were redacted when it was made (record with --show-secrets to keep them)")
	}
	if s.p != nil && opts.PluginVersion == s.pOpts.PluginVersion && opts.ShowSecrets == s.pOpts.ShowSecrets {
		return
	}
	if s.p != nil {
		if s.writeErr = s.p.Flush(); s.writeErr != nil {
			return
		}
	}
	s.pOpts = opts
	s.p = printer.New(s.o.Out, opts)
}

// flush writes out what the printer holds.
func (s *replayState) flush() error {
	if s.p == nil {
		return nil
	}
	return s.p.Flush()
}

// seen notes a recorded line, shown or not: the recording's span and the objects' labels.
func (s *replayState) seen(ev *watch.Event) {
	s.span.Observe(ev.Time)
	s.filter.Observe(ev)
}

// wait paces a kept line (--speed); an interrupt or a failed flush stops the replay.
func (s *replayState) wait(ev *watch.Event) error {
	if s.pacer == nil {
		return nil
	}
	err := s.pacer.Wait(s.ctx, ev.Time, s.flush)
	if err != nil {
		if s.ctx.Err() == nil {
			s.writeErr = err
		}
		s.interrupted = true
	}
	return err
}

// observe counts a kept line as replayed; --history takes it into its table.
func (s *replayState) observe(ev *watch.Event) {
	s.shown++
	if s.history != nil {
		s.history.Add(ev)
	}
}

// emit prints what the pipeline passed.
func (s *replayState) emit(ev *watch.Event) error {
	if s.p == nil {
		s.setPrinter("")
	}
	if s.writeErr == nil {
		s.writeErr = s.p.PrintRecorded(ev, s.redacted)
	}
	return s.writeErr
}

// learnResources hands a run's whole resource list (a header, an Informer line) to --resource.
func (s *replayState) learnResources(rs []discovery.Resource) error {
	if s.filter.Resources == nil {
		return nil
	}
	return s.filter.Resources.Learn(rs, true)
}

func headerResources(h *recording.Header) []discovery.Resource {
	var out []discovery.Resource
	for _, r := range h.Resources {
		out = append(out, discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced})
	}
	return out
}

// writeSummary prints the exit summary of what was shown, headed by the recording's span
// rather than the replay's duration.
func (s *replayState) writeSummary() {
	span := s.span.Last.Sub(s.span.First).Round(time.Millisecond)
	title := fmt.Sprintf("summary of %s (%s recorded, %d %s replayed)", printer.Escape(s.name), span, s.shown, plural(s.shown, "event", "events"))
	_ = printer.WriteSummary(s.o.ErrOut, title, s.summary)
}
