package top

import (
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// ranking is top's pipeline: the informers' lines go through internal/pipeline's stages as
// watch's do. Its analysis step reads each update of a metadata-only object from managedFields
// (its writers, the fields they moved, a heartbeat) and finds the hot loops, once; with --otlp
// its tracing stage exports them; its output (Emit) is the Ranker. Used from one goroutine.
type ranking struct {
	pipe   *pipeline.Pipeline
	ranker *Ranker
	lines  *summary.Summary // what went through, by type
}

func newRanking(cfg Config, start time.Time) *ranking {
	heartbeats := cfg.Heartbeats
	if heartbeats == nil {
		heartbeats = analysis.Heartbeats()
	}
	r := NewRanker(cfg.Window, start)
	lines := summary.New()
	pc := pipeline.Config{
		Analysis: analysis.Config{MetadataOnly: true, Heartbeats: heartbeats,
			HotLoopUpdates: cfg.HotLoopUpdates, HotLoopWindow: cfg.HotLoopWindow},
		Summary: lines,
		Emit: func(ev *watch.Event) error {
			r.Add(ev)
			return nil
		},
	}
	if cfg.Spans != nil {
		pc.Trace = cfg.Spans.Line
	}
	p := pipeline.New(pc)
	r.rediagnose = p.Step().Rediagnose
	return &ranking{pipe: p, ranker: r, lines: lines}
}

// process takes one informer line through the stages.
func (x *ranking) process(ev *watch.Event) { x.pipe.Process(ev) }

// rank ranks at now, once the hot loops that ended by now passed (their HotLoopEnded lines).
func (x *ranking) rank(now time.Time) Ranking {
	x.pipe.Ended(now)
	return x.ranker.Rank(now)
}
