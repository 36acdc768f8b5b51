// Package replayrun is the orchestrator of `kubectl informer replay`: from a typed Config it
// opens the recording (internal/input), reads it line by line (pkg/replay), hands each line
// through replay's filters to the pipeline's Process (internal/pipeline), paced by --speed,
// and prints what passes (pkg/printer), --history's table and the summary.
package replayrun

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/input"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Config is one replay, as the command's flags say it: validated and parsed.
type Config struct {
	// File is the recording ("-": In); Out gets the lines, ErrOut warnings and the summary.
	File        string
	In          io.Reader
	Out, ErrOut io.Writer
	// Version is the plugin's, for the spans.
	Version string

	// Filter is what is replayed: names, namespace, labels, resources, types, time.
	Filter replay.Filter
	// Printer is the printer's options (the recording's plugin version and redaction are set
	// as they are read); ShowSecrets is --show-secrets.
	Printer     printer.Options
	ShowSecrets bool
	// NoSummary and NoHeaders leave out the summary and the # header lines.
	NoSummary, NoHeaders bool
	// Changes computes each update's changes (--diff).
	Changes bool
	// Redetect detects hot loops again, with HotLoopUpdates and HotLoopWindow.
	Redetect       bool
	HotLoopUpdates int
	HotLoopWindow  time.Duration
	// Predicates mark the object lines they drop; PredicateList says them in the summary.
	Predicates    []watch.Predicate
	PredicateList string
	// Noise and Fold are the noise flags (--ignore-path, --only-path, --fold; 0: off).
	Noise *noise.Filter
	Fold  time.Duration
	// Speed paces the lines (0: as fast as possible); Strict stops at a damaged line.
	Speed  float64
	Strict bool
	// History is --history's object ("": none).
	History string
	// OTLP exports the lines as spans.
	OTLP bool
	// AuditLog is --audit-log: each object line gets the audit event of its write.
	AuditLog string
	// ErrorLine says a damaged line's error, as the command says errors.
	ErrorLine func(error) string
}

// Run replays the recording: every line goes through replay's filters, then the stages and
// printers watch's lines go through.
func Run(ctx context.Context, c Config) error {
	o := &c
	if ctx == nil {
		ctx = context.Background()
	}
	rd, name, closeIn, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer closeIn()
	auditLog, err := audit.OpenLog(o.AuditLog, o.ErrOut)
	if err != nil {
		return err
	}
	defer auditLog.Close()
	// A recording's spans carry its recorded times, the ids the live run's had, and the cluster's
	// identity its header names: its first line is read before the exporter starts.
	var exporter *tracing.Exporter
	var first *firstLine
	if o.OTLP {
		line, err := rd.Next()
		first = &firstLine{line, err}
		if exporter, err = tracing.Start(ctx, clusterOf(line.Header), o.Version, o.ErrOut); err != nil {
			return err
		}
	}
	s := o.newReplayState(ctx, name, exporter)
	s.first, s.audit = first, auditLog
	fatal := s.readAll(rd)
	return s.finish(fatal)
}

// firstLine is a recording's first line, read ahead (Run), and its error.
type firstLine struct {
	line replay.Line
	err  error
}

// clusterOf is the recorded cluster's identity for the spans; none from a recording that does
// not say it.
func clusterOf(h *recording.Header) tracing.Config {
	if h == nil || h.Cluster == nil {
		return tracing.Config{}
	}
	return tracing.Config{ClusterName: h.Cluster.Name, ClusterUID: h.Cluster.UID}
}

// open opens the recording (FILE, or standard input for "-").
func (o *Config) open(ctx context.Context) (rd *replay.Reader, name string, closeIn func(), err error) {
	in, name, closeIn, err := input.Open(ctx, o.File, o.In)
	if err != nil {
		return nil, "", nil, err
	}
	if rd, err = replay.NewReader(in); err != nil {
		closeIn()
		return nil, "", nil, fmt.Errorf("%s: %w", name, err)
	}
	return rd, name, closeIn, nil
}
