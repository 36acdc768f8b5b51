package top

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Drill follows one object with a full informer (objects, not metadata: the changed values)
// and keeps its history as `replay --history` shows it: one row per add, update (who made it,
// what it changed) and delete, and the hot-loop diagnoses, growing as updates come.
type Drill struct {
	mu      sync.Mutex
	history *printer.History
	rows    int
	err     string
	done    chan struct{}
}

// drillRows is how many rows a drill keeps: a screen's worth many times over, and a bound on
// what following a loop for hours costs.
const drillRows = 1000

// StartDrill starts following name (in namespace ns, "" for a cluster-scoped object) of res
// with base's clients, until ctx ends; changed is called (from another goroutine) after each
// row added.
func StartDrill(ctx context.Context, base watch.Config, res discovery.Resource, ns, name string, hotLoopUpdates int, hotLoopWindow time.Duration, changed func()) *Drill {
	d := &Drill{history: printer.NewHistory(printer.Options{Timestamps: "absolute"}), done: make(chan struct{})}
	d.history.Fold = true
	d.history.NoState = true // the changes matter here, and a terminal is narrow
	d.history.MaxRows = drillRows
	cfg := base
	cfg.Metadata = nil
	cfg.Resources = []discovery.Resource{res}
	cfg.Namespace = ns
	cfg.FieldSelector = "metadata.name=" + name
	cfg.Name = name
	cfg.SkipForbidden = true
	cfg.Stats = nil // the scan's accounting is the scan's
	filter, _ := noise.NewFilter(nil, nil)
	step := analysis.New(analysis.Config{Filter: filter, Changes: true, HotLoopUpdates: hotLoopUpdates, HotLoopWindow: hotLoopWindow})
	events := make(chan watch.Event, 256)
	go func() { _ = watch.Run(ctx, cfg, events) }()
	go func() {
		defer close(d.done)
		var out []watch.Event
		for ev := range events {
			out = step.Analyze(out[:0], &ev)
			for i := range out {
				d.add(&out[i])
			}
			changed()
		}
	}()
	return d
}

func (d *Drill) add(ev *watch.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case ev.Type.IsObject(), ev.Type == watch.HotLoop, ev.Type == watch.HotLoopEnded:
		d.history.Add(ev)
		d.rows++
	case ev.Type == watch.Error:
		d.err = ev.Lifecycle.Reason + ": " + ev.Lifecycle.Message
	}
}

// Table is the history so far, as lines; the last error the informer met, if any, is the last.
func (d *Drill) Table() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	_ = d.history.Write(&b)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if d.rows == 0 {
		lines = append(lines, "(waiting for the object's first event)")
	}
	if d.err != "" {
		lines = append(lines, printer.Escape(d.err))
	}
	return lines
}

// Last is the newest update's writers and changes with their values (redacted for Secrets), ""
// before the drill saw one.
func (d *Drill) Last() (by, changes string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.history.Last()
}

// Done is closed once the drill's informer stopped (its context ended).
func (d *Drill) Done() <-chan struct{} { return d.done }
