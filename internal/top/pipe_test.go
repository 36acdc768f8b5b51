package top

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The ranking's loop is the analysis step's: the fight found once (one HotLoop line through the
// pipeline), said on its row; the Lease renewals the step marked heartbeats are counted apart.
func TestRankFromTheAnalysisStep(t *testing.T) {
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second}, t0)
	evs := append(fight(20, t0), renewals("kube-scheduler", 5, t0)...)
	slices.SortStableFunc(evs, func(a, b *watch.Event) int { return a.Time.Compare(b.Time) })
	for _, ev := range evs {
		r.process(ev)
	}
	got := r.rank(t0.Add(21 * time.Second))
	if n := r.lines.ByType[watch.HotLoop]; n != 1 {
		t.Errorf("%d HotLoop lines through top's pipeline, want the fight's one", n)
	}
	if o := got.Objects[0]; o.Name != "web-1" || o.Writes != 20 || o.Loop != diff.LoopFight {
		t.Errorf("first: %+v, want the fight's 20 writes and its loop", o)
	}
	if got.Writes != 20 || got.Heartbeats != 5 || r.lines.Ignored != 5 {
		t.Errorf("writes %d, heartbeats %d (%d lines ignored); want 20, 5 and 5", got.Writes, got.Heartbeats, r.lines.Ignored)
	}
}

// --otlp: every update top ranks is an Updated span naming its writer and the fields it moved,
// and the fight a HotLoop span, made by internal/tracing as watch's are.
func TestRankingExportsSpans(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	x, err := tracing.New(context.Background(), tracing.Config{Exporter: keep{mem}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second, Spans: x}, t0)
	for _, ev := range fight(12, t0) {
		r.process(ev)
	}
	r.rank(t0.Add(13 * time.Second))
	if s := finishSpans(x); s.Spans != s.Exported || s.Dropped != 0 {
		t.Fatalf("spans %+v, want all exported", *s)
	}
	updates, loops, writers := 0, 0, map[string]bool{}
	for _, s := range mem.GetSpans() {
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range s.Attributes {
			attrs[a.Key] = a.Value
		}
		switch s.Name {
		case "ReplicaSet.Updated":
			updates++
			for _, w := range attrs["informer.writers"].AsStringSlice() {
				writers[w] = true
			}
			if p := attrs["informer.changed_paths"].AsStringSlice(); !slices.Equal(p, []string{"spec.replicas"}) {
				t.Errorf("an update's changed paths %v, want spec.replicas", p)
			}
		case "ReplicaSet.HotLoop":
			loops++
			if len(s.Events) != 1 || !strings.Contains(s.Events[0].Name, "HotLoop") {
				t.Errorf("the HotLoop span's events: %+v", s.Events)
			}
		}
	}
	if updates != 12 || loops != 1 || !writers["widget-operator"] || !writers["kube-controller-manager"] {
		t.Errorf("%d Updated spans by %v, %d HotLoop spans; want 12 by both fighters, 1", updates, writers, loops)
	}
}

// keep is an in-memory exporter whose spans outlive its shutdown.
type keep struct{ *tracetest.InMemoryExporter }

func (keep) Shutdown(context.Context) error { return nil }
