// Package top answers "what is the whole cluster writing, and who": metadata-only informers over
// every resource that can be listed and watched (or the ones given), the writes of a sliding
// window ranked by object, by writer (field manager) and by resource, with the hot-loop
// diagnosis and its fix, heartbeats counted apart. The informers' lines go through
// internal/pipeline's stages, as watch's do (the analysis step reads each update's writers,
// fields and heartbeat and finds the hot loops, once; --otlp exports them); the ranking is the
// pipeline's output (pipe.go), written as tables or NDJSON (output.go, render.go) or shown live
// (Config.Screen).
package top

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/clients"
	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Config is a top run; internal/cmd builds it from flags.
type Config struct {
	// Watch is the informers' configuration (clients, namespace, accounting); Resources and
	// SkipForbidden are set by Run.
	Watch watch.Config
	// Resources, when given, are the only ones followed; otherwise Discover finds them.
	Resources []discovery.Resource
	// Discover returns every resource that can be listed and watched; it is asked again every
	// Rediscover (0: never), so that resources created later (CRDs) are followed too.
	Discover   func(context.Context) ([]discovery.Resource, error)
	Rediscover time.Duration
	// Window is the ranking's sliding window; Interval how often Report gets a ranking.
	Window, Interval time.Duration
	// Duration stops the run after this long (0: when ctx ends).
	Duration time.Duration
	// HotLoopUpdates and HotLoopWindow are watch's hot-loop detection (--hot-loop-*).
	HotLoopUpdates int
	HotLoopWindow  time.Duration
	// Follow is how many of the first objects get a full informer each, for the values their
	// newest update changed (ObjectRank.LastChanges); 0 none.
	Follow int
	// Heartbeats are the paths whose writes are counted apart; nil: analysis.Heartbeats().
	Heartbeats []diff.Pattern
	// Report gets the ranking every Interval, from Scan's goroutine; Run sets it to write the
	// rankings to Out.
	Report func(Ranking)
	// Warn gets what the user should know once (a discovery that failed).
	Warn func(string)
	// Audit, when it names a log or a webhook, is the API server's audit log: each ranking then
	// says who hits the API server how often, reads included (Ranking.API).
	Audit audit.Config
	// Spans, when set (--otlp), exports every line of top's pipeline as OpenTelemetry spans,
	// as watch --otlp does (internal/tracing).
	Spans *tracing.Exporter

	// Out gets the rankings (tables, or NDJSON lines with JSON), ErrOut what the user should
	// know (skipped resources, the scan's API cost, the spans exported).
	Out, ErrOut io.Writer
	JSON        bool
	// Limit is the rows of each table (0: all).
	Limit int
	// Stats is the scan's API accounting, summed up on ErrOut at the end; nil: not said.
	Stats *apistats.Recorder
	// Screen, when set, shows the rankings live instead of writing them (internal/toptui's
	// Screen): it runs Scan itself and returns the final ranking once the terminal is restored.
	Screen func(context.Context, Config) (Ranking, error)
}

// spansShutdown bounds how long the end of a run waits for the collector to take the spans
// still queued (as watch's); what it has not taken by then is dropped, counted.
const spansShutdown = 5 * time.Second

// Run is `kubectl informer top`: it follows the resources until ctx ends or Duration passes,
// writes a ranking every Interval (or shows them on Screen), then the final ranking, and says
// on ErrOut what the scan cost and, with Spans, what was exported.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	out := &output{cfg: cfg}
	var final Ranking
	var err error
	if cfg.Screen != nil {
		final, err = cfg.Screen(ctx, cfg)
	} else {
		cfg.Report = out.report
		final, err = Scan(ctx, cfg)
	}
	spans := finishSpans(cfg.Spans)
	if err != nil {
		return err
	}
	if err := out.final(final); err != nil {
		return err
	}
	if cfg.Stats != nil {
		total := TotalAPI(cfg.Stats.Snapshots())
		fmt.Fprintf(cfg.ErrOut, "API cost of the scan (%d resources): %s\n", len(cfg.Stats.Snapshots()), printer.APIFigures(&total))
	}
	if spans != nil {
		fmt.Fprintf(cfg.ErrOut, "otlp: %d spans, %d exported, %d spans dropped\n", spans.Spans, spans.Exported, spans.Dropped)
	}
	return out.err
}

// finishSpans sends the spans still queued (for at most spansShutdown); nil without --otlp.
func finishSpans(x *tracing.Exporter) *tracing.Stats {
	if x == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), spansShutdown)
	defer cancel()
	s := x.Shutdown(ctx)
	return &s
}

// Scan follows the resources until ctx ends and returns the final ranking. Every informer line
// goes through top's pipeline (newRanking). A resource the user may not list or watch is
// skipped and named in the ranking's Skipped, never fatal.
func Scan(ctx context.Context, cfg Config) (Ranking, error) {
	if cfg.Warn == nil {
		cfg.Warn = func(string) {}
	}
	r := newRanking(cfg, time.Now())
	events := make(chan watch.Event, 4096)
	s := &scope{cfg: cfg, out: events, started: map[string]bool{}}
	resources := cfg.Resources
	if resources == nil {
		var err error
		if resources, err = cfg.Discover(ctx); err != nil {
			return Ranking{}, err
		}
	}
	if err := s.start(ctx, resources); err != nil {
		return Ranking{}, err
	}
	defer s.wait()
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	follow := newFollower(cfg.Follow, cfg.Watch, cfg.HotLoopUpdates, cfg.HotLoopWindow)
	defer follow.stop()
	load := startLoad(ctx, cfg)
	defer load.stop()
	rank := func() Ranking {
		rk := r.rank(time.Now())
		follow.update(ctx, &rk)
		rk.API = load.rank()
		return rk
	}
	var rediscover <-chan time.Time
	if cfg.Resources == nil && cfg.Rediscover > 0 {
		t := time.NewTicker(cfg.Rediscover)
		defer t.Stop()
		rediscover = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return rank(), nil
		case ev := <-events:
			r.process(&ev)
		case <-tick.C:
			if cfg.Report != nil {
				cfg.Report(rank())
			}
		case <-rediscover:
			if more, err := cfg.Discover(ctx); err != nil {
				cfg.Warn(fmt.Sprintf("discovery failed, new resources are not followed yet: %v", err))
			} else if err := s.start(ctx, more); err != nil {
				cfg.Warn(err.Error())
			}
		}
	}
}

// scope starts informers for resources not followed yet, one watch.Run per batch, all sending
// to one channel.
type scope struct {
	cfg     Config
	out     chan<- watch.Event
	started map[string]bool
	wg      sync.WaitGroup
}

func (s *scope) start(ctx context.Context, resources []discovery.Resource) error {
	var batch []discovery.Resource
	for _, res := range resources {
		if !s.started[res.String()] {
			s.started[res.String()] = true
			batch = append(batch, res)
		}
	}
	if len(batch) == 0 {
		return nil
	}
	cfg := s.cfg.Watch
	cfg.Resources = slices.Clone(batch)
	cfg.SkipForbidden = true
	in := make(chan watch.Event, 1024)
	errc := make(chan error, 1)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		errc <- watch.Run(ctx, cfg, in)
	}()
	go func() {
		defer s.wg.Done()
		for ev := range in {
			select {
			case s.out <- ev:
			case <-ctx.Done():
			}
		}
	}()
	// An error that stops the batch at once (a bad configuration) is the run's.
	select {
	case err := <-errc:
		if err != nil {
			return err
		}
	case <-time.After(50 * time.Millisecond):
	}
	return nil
}

// wait returns once every batch's informers stopped (after ctx ended).
func (s *scope) wait() { s.wg.Wait() }

// loadRun counts the audit log's requests beside the informers; a nil one counts nothing.
type loadRun struct {
	mu     sync.Mutex
	load   *audit.Load
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startLoad(ctx context.Context, cfg Config) *loadRun {
	if cfg.Audit.Path == "" && cfg.Audit.Webhook == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &loadRun{load: audit.NewLoad(cfg.Window), cancel: cancel}
	ac := cfg.Audit
	if ac.Notice == nil {
		ac.Notice = cfg.Warn
	}
	l.load.Flows = readFlowSchemas(ctx, cfg.Watch.Client, ac.Notice)
	audit.Read(ctx, &l.wg, ac, func(e *audit.Event) {
		l.mu.Lock()
		l.load.Add(e)
		l.mu.Unlock()
	})
	return l
}

func (l *loadRun) rank() *audit.LoadRanking {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.load.Rank()
	return &r
}

func (l *loadRun) stop() {
	if l != nil {
		l.cancel()
		l.wg.Wait()
	}
}

// readFlowSchemas reads the cluster's FlowSchemas once, for the priority level of the 429s the
// audit log counts; nil (and a notice) when they cannot be read.
func readFlowSchemas(ctx context.Context, client dynamic.Interface, notice func(string)) *audit.FlowSchemas {
	if client == nil {
		return nil
	}
	list, err := clients.FlowSchemas(ctx, client)
	if err == nil {
		return audit.NewFlowSchemas(list)
	}
	if notice != nil {
		notice("the cluster's FlowSchemas could not be read (" + printer.Escape(err.Error()) + "): the priority level of a 429 is not said")
	}
	return nil
}
