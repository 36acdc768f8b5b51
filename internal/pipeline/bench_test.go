package pipeline

import (
	"io"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// An update's way through a live run's stages, default flags, on one goroutine: analysis
// (changes, noise marks, hot loops), the summary, hide and fold (human), what the output does
// as the line goes in (Lighten) and what the writer does (WriteOut, to io.Discard), without the
// outbox between them (whose lossy human form drops lines when the writer lags: no fixed work).
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
	pipe := New(Config{
		Analysis: analysis.Config{Filter: filter, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second},
		Summary:  summary.New(), Human: human, Fold: time.Second,
		Shown: shownOf(p), Emit: func(ev *watch.Event) error { return writeBench(p, ev) },
	})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ev := updates[i%len(updates)]
		ev.Time = ev.Time.Add(time.Duration(i) * time.Minute) // no hot loop
		pipe.Process(&ev)
	}
}

// shownOf is what p shows.
func shownOf(p *printer.Printer) Shown {
	omit, noFinal := p.Omits()
	return NewShown(nil, omit, noFinal)
}

// writeBench is what the output and its writer do with a line.
func writeBench(p *printer.Printer, ev *watch.Event) error {
	return p.WriteOut(nil, ev, p.Lighten(ev), true)
}
