package pipeline

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// An update's way through a live run's pipeline, default flags: analysis (changes, noise
// marks, hot loops), the summary, hide and fold (human), the outbox, the writer (io.Discard).
func BenchmarkUpdateLineHuman(b *testing.B) { benchmarkUpdateLine(b, printer.Options{}) }
func BenchmarkUpdateLineJSON(b *testing.B)  { benchmarkUpdateLine(b, printer.Options{Output: "json"}) }

func benchmarkUpdateLine(b *testing.B, opts printer.Options) {
	var updates []watch.Event
	for _, ev := range outputEvents(0) {
		if ev.Type == watch.Updated {
			updates = append(updates, ev)
		}
	}
	filter, err := noise.NewFilter(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := printer.New(io.Discard, opts)
	human := opts.Output.IsHuman()
	out := StartOutput(NewOutbox(1024, human, nil), p, func() {})
	pipe := New(Config{
		Analysis: analysis.Config{Filter: filter, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second},
		Summary:  summary.New(), Human: human, Fold: time.Second,
		Shown: shownOf(p), Emit: out.Emit,
	})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ev := updates[i%len(updates)]
		ev.Time = ev.Time.Add(time.Duration(i) * time.Minute) // no hot loop
		pipe.Process(&ev)
	}
	if err := out.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// shownOf is what p shows.
func shownOf(p *printer.Printer) Shown {
	omit, noFinal := p.Omits()
	return NewShown(nil, omit, noFinal)
}
