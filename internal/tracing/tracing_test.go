package tracing

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apitypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var widgets = discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}

func widget(name, uid, rv string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}
	u.SetNamespace("demo")
	u.SetName(name)
	u.SetUID(apitypes.UID(uid))
	u.SetResourceVersion(rv)
	u.SetAnnotations(annotations)
	return u
}

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC)

// story is a Widget added, updated by its operator within a reconcile that the update
// triggered, and the reconcile's line.
func story(annotations map[string]string) []watch.Event {
	added := watch.Event{
		Type:            watch.Added,
		Obj:             watch.ObjectInfo{Delta: watch.DeltaAdded, Object: widget("w", "uid-w", "10", annotations)},
		Time:            t0,
		Resource:        widgets,
		Namespace:       "demo",
		Name:            "w",
		ResourceVersion: "10",
	}
	upd := watch.Event{
		Type: watch.Updated,
		Obj: watch.ObjectInfo{
			Delta:              watch.DeltaUpdated,
			OldResourceVersion: "10",
			Object:             widget("w", "uid-w", "11", annotations),
			OldObject:          widget("w", "uid-w", "10", annotations),
			Attribution:        &diff.Attribution{Managers: []diff.Manager{{Manager: "widget-operator", Operation: "Update"}}, Rule: diff.RuleEntry},
			Changes:            []diff.Change{{Path: "spec.size", Old: int64(1), New: int64(2), HasOld: true, HasNew: true}},
		},
		Time:            t0.Add(time.Second),
		Resource:        widgets,
		Namespace:       "demo",
		Name:            "w",
		ResourceVersion: "11",
	}
	write := watch.Event{
		Type: watch.Updated,
		Obj: watch.ObjectInfo{
			Delta:              watch.DeltaUpdated,
			OldResourceVersion: "11",
			Object:             widget("w", "uid-w", "12", annotations),
			OldObject:          widget("w", "uid-w", "11", annotations),
			Attribution: &diff.Attribution{Managers: []diff.Manager{{Manager: "widget", Operation: "Reconcile"}}, Rule: diff.RuleReconcile,
				Reconcile: &diff.ReconcileRef{Controller: "widget", ReconcileID: "r-1"}},
		},
		Time:            t0.Add(1500 * time.Millisecond),
		Resource:        widgets,
		Namespace:       "demo",
		Name:            "w",
		ResourceVersion: "12",
	}
	rec := watch.Event{
		Type:      watch.ControllerReconcile,
		Time:      t0.Add(1200 * time.Millisecond),
		Resource:  widgets,
		Namespace: "demo",
		Name:      "w",
		Key:       "demo/w",
		Queued: watch.QueuedInfo{TriggerCount: 2, Triggers: []watch.Trigger{
			{Type: watch.Added, Delta: watch.DeltaAdded, ResourceVersion: "10", Time: t0},
			{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "11", Time: t0.Add(time.Second), Managers: []string{"widget-operator"}}}},
		Reconcile: &watch.ReconcileInfo{Controller: "widget", ReconcileID: "r-1", Kind: "Widget", Result: "error", Error: "boom", Duration: 400 * time.Millisecond, DurationKnown: true},
	}
	return []watch.Event{added, upd, write, rec}
}

// export runs lines through an exporter into memory and returns the spans by name.
func export(t *testing.T, lines []watch.Event) map[string][]tracetest.SpanStub {
	t.Helper()
	mem := tracetest.NewInMemoryExporter()
	x, err := New(context.Background(), Config{ClusterUID: "cluster-1", ClusterName: "kind", Exporter: keep{mem}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range lines {
		x.Line(&lines[i])
	}
	if s := x.Shutdown(context.Background()); s.Dropped != 0 || s.Exported != s.Spans {
		t.Fatalf("stats %+v: nothing may be lost into memory", s)
	}
	by := map[string][]tracetest.SpanStub{}
	for _, s := range mem.GetSpans() {
		by[s.Name] = append(by[s.Name], s)
	}
	return by
}

func attr(s tracetest.SpanStub, k string) attribute.Value {
	for _, a := range s.Attributes {
		if string(a.Key) == k {
			return a.Value
		}
	}
	return attribute.Value{}
}

func TestDeltasAreOneTracePerObject(t *testing.T) {
	by := export(t, story(nil))
	added, updates := by["Widget.Added"], by["Widget.Updated"]
	if len(added) != 1 || len(updates) != 2 {
		t.Fatalf("spans %v", by)
	}
	tid := ObjectTraceID("uid-w", "widgets.example.com demo/w")
	a := added[0]
	if a.SpanContext.TraceID() != tid || a.Parent.IsValid() || a.SpanContext.SpanID() != AddedSpanID("uid-w", "widgets.example.com demo/w") {
		t.Errorf("Added span %v in trace %v, parent %v: want the root of the object's trace %v", a.SpanContext.SpanID(), a.SpanContext.TraceID(), a.Parent, tid)
	}
	u := updates[0]
	if u.SpanContext.TraceID() != tid || u.Parent.SpanID() != a.SpanContext.SpanID() {
		t.Errorf("Updated span not a child of the Added one in the object's trace: %+v", u)
	}
	if !u.StartTime.Equal(t0.Add(time.Second)) || !u.EndTime.Equal(u.StartTime) {
		t.Errorf("Updated span from %v to %v, want the line's time", u.StartTime, u.EndTime)
	}
	for k, want := range map[string]string{"informer.resource_version": "11", "informer.old_resource_version": "10", "informer.source": "watch",
		"k8s.namespace.name": "demo", "k8s.widget.name": "w", "k8s.widget.uid": "uid-w"} {
		if got := attr(u, k).AsString(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := attr(u, "informer.writers").AsStringSlice(); len(got) != 1 || got[0] != "widget-operator" {
		t.Errorf("writers %v", got)
	}
	if got := attr(u, "informer.changed_paths").AsStringSlice(); len(got) != 1 || got[0] != "spec.size" {
		t.Errorf("changed paths %v", got)
	}
	if string(attr(a, "informer.source").AsString()) != "watch" {
		t.Errorf("Added source %q", attr(a, "informer.source").AsString())
	}
}

func TestReconcileSpanLinksTriggersAndWrites(t *testing.T) {
	by := export(t, story(nil))
	recs := by["widget.Reconcile"]
	if len(recs) != 1 {
		t.Fatalf("reconcile spans %v", by)
	}
	r := recs[0]
	id := "widgets.example.com demo/w"
	if r.SpanContext.TraceID() != ObjectTraceID("uid-w", id) || r.Parent.SpanID() != AddedSpanID("uid-w", id) {
		t.Errorf("reconcile not under its object's Added span: %v parent %v", r.SpanContext, r.Parent)
	}
	if !r.StartTime.Equal(t0.Add(1200*time.Millisecond)) || r.EndTime.Sub(r.StartTime) != 400*time.Millisecond {
		t.Errorf("reconcile from %v for %v", r.StartTime, r.EndTime.Sub(r.StartTime))
	}
	if r.Status.Description != "boom" || attr(r, "informer.result").AsString() != "error" || attr(r, "informer.reconcile_id").AsString() != "r-1" {
		t.Errorf("status %+v, result %q", r.Status, attr(r, "informer.result").AsString())
	}
	deltas := map[trace.SpanID]string{}
	for _, s := range append(by["Widget.Added"], by["Widget.Updated"]...) {
		deltas[s.SpanContext.SpanID()] = attr(s, "informer.resource_version").AsString()
	}
	var triggers, writes []string
	for _, l := range r.Links {
		kind := ""
		for _, a := range l.Attributes {
			if a.Key == "informer.link" {
				kind = a.Value.AsString()
			}
		}
		rv, ok := deltas[l.SpanContext.SpanID()]
		if !ok {
			t.Errorf("link %v names no delta span", l.SpanContext)
		}
		if kind == "trigger" {
			triggers = append(triggers, rv)
		} else {
			writes = append(writes, rv)
		}
	}
	if fmt.Sprint(triggers) != "[10 11]" || fmt.Sprint(writes) != "[12]" {
		t.Errorf("links: triggers %v, writes %v; want [10 11] and [12]", triggers, writes)
	}
	// The write links back to its reconcile.
	w := by["Widget.Updated"][1]
	if len(w.Links) != 1 || w.Links[0].SpanContext.SpanID() != r.SpanContext.SpanID() {
		t.Errorf("write's links %v, want its reconcile %v", w.Links, r.SpanContext.SpanID())
	}
}

func TestReconcileJoinsTraceparent(t *testing.T) {
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
	by := export(t, story(map[string]string{TraceparentAnnotation: tp}))
	r := by["widget.Reconcile"][0]
	if r.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || r.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("reconcile in %v under %v, want the annotation's trace and span", r.SpanContext.TraceID(), r.Parent.SpanID())
	}
	// The write attributed to it links to it in that trace.
	w := by["Widget.Updated"][1]
	if w.Links[0].SpanContext.TraceID() != r.SpanContext.TraceID() {
		t.Errorf("write links to trace %v", w.Links[0].SpanContext.TraceID())
	}
	for _, bad := range []string{"", "00-zz-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		if parseTraceparent(bad).IsValid() {
			t.Errorf("traceparent %q accepted", bad)
		}
	}
}

// A replay of the same lines (a recording of them) gives the same spans: same ids, same times.
func TestExportIsDeterministic(t *testing.T) {
	key := func(by map[string][]tracetest.SpanStub) []string {
		var out []string
		for name, ss := range by {
			for _, s := range ss {
				out = append(out, fmt.Sprint(name, s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.Parent.SpanID(), s.StartTime.UnixNano(), s.EndTime.UnixNano(), len(s.Links)))
			}
		}
		return out
	}
	a, b := key(export(t, story(nil))), key(export(t, story(nil)))
	if len(a) != 4 || strings.Join(sortStrings(a), "\n") != strings.Join(sortStrings(b), "\n") {
		t.Errorf("two exports differ:\n%v\n%v", a, b)
	}
}

func TestSecretValuesNeverExported(t *testing.T) {
	secrets := discovery.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	ev := watch.Event{
		Type: watch.Updated,
		Obj: watch.ObjectInfo{
			Delta:              watch.DeltaUpdated,
			OldResourceVersion: "1",
			Changes:            []diff.Change{{Path: "data.password", Old: "aHVudGVyMg==", New: "czNjcjN0", HasOld: true, HasNew: true, Sensitive: true}},
		},
		Time:            t0,
		Resource:        secrets,
		Namespace:       "demo",
		Name:            "s",
		ResourceVersion: "2",
	}
	by := export(t, []watch.Event{ev})
	s := by["Secret.Updated"][0]
	text := fmt.Sprint(s.Attributes, s.Events, s.Links, s.Resource)
	if strings.Contains(text, "czNjcjN0") || strings.Contains(text, "aHVudGVyMg==") || !strings.Contains(text, "data.password") {
		t.Errorf("a Secret's span: %s", text)
	}
}

// failing refuses every batch; blocked never answers until released.
type failing struct{ calls int }

func (f *failing) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	f.calls++
	return errors.New("connection refused")
}
func (f *failing) Shutdown(context.Context) error { return nil }

type blocked struct{ release chan struct{} }

func (b blocked) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return errors.New("collector stalled")
}
func (b blocked) Shutdown(context.Context) error { return nil }

func TestCollectorDownIsOneLineAndACount(t *testing.T) {
	var mu sync.Mutex
	var warned []string
	x, err := New(context.Background(), Config{Exporter: &failing{}, Warn: func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	lines := story(nil)
	for range 300 {
		for i := range lines {
			x.Line(&lines[i])
		}
	}
	s := x.Shutdown(context.Background())
	if s.Spans != 1200 || s.Exported != 0 || s.Dropped != 1200 {
		t.Errorf("stats %+v, want 1200 spans all dropped", s)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "connection refused") {
		t.Errorf("said %q, want one line", warned)
	}
}

// A collector that never answers: the lines go on at once (never a blocked watch), at most the
// queue and a batch wait, and the rest are dropped and counted.
func TestStalledCollectorNeverBlocks(t *testing.T) {
	b := blocked{release: make(chan struct{})}
	x, err := New(context.Background(), Config{Exporter: b})
	if err != nil {
		t.Fatal(err)
	}
	lines := story(nil)
	n := 4 * QueueSize
	for range n / len(lines) {
		for i := range lines {
			x.Line(&lines[i])
		}
	}
	close(b.release)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no time to send what is queued: it is lost, counted
	s := x.Shutdown(ctx)
	if s.Spans != int64(n) || s.Dropped < int64(n-QueueSize-BatchSize) || s.Exported != 0 {
		t.Errorf("stats %+v: want %d spans, at least %d dropped", s, n, n-QueueSize-BatchSize)
	}
}

func TestDescribeNamesHeadersNotValues(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer s3cr3t-t0ken,x-tenant=acme")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	d := Describe()
	if strings.Contains(d, "s3cr3t") || strings.Contains(d, "acme") || !strings.Contains(d, "authorization,x-tenant") {
		t.Errorf("Describe() = %q", d)
	}
}

func TestProtocol(t *testing.T) {
	tests := []struct{ all, traces, want, wantErr string }{
		{want: "http/protobuf"},
		{all: "grpc", want: "grpc"},
		{all: "grpc", traces: "http/protobuf", want: "http/protobuf"},
		{all: "http/json", wantErr: `unsupported OTLP protocol "http/json"`},
	}
	for _, tt := range tests {
		t.Run(tt.all+"/"+tt.traces, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tt.all)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", tt.traces)
			got, err := Protocol()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Protocol() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// keep keeps what an in-memory exporter holds past its Shutdown (which resets it).
type keep struct{ *tracetest.InMemoryExporter }

func (keep) Shutdown(context.Context) error { return nil }

// A simulated worker's reconcile is a span from a worker taking the key to its Done, linked to
// its triggers; relists and hot loops are span events.
func TestSimulatedReconcileAndSpanEvents(t *testing.T) {
	lines := story(nil)[:2]
	lines = append(lines,
		watch.Event{
			Type:      watch.Reconciled,
			Time:      t0.Add(2 * time.Second),
			Resource:  widgets,
			Namespace: "demo",
			Name:      "w",
			Key:       "demo/w",
			Queued: watch.QueuedInfo{
				Work:         200 * time.Millisecond,
				Wait:         time.Millisecond,
				TriggerCount: 1,
				Triggers:     []watch.Trigger{{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "11", Time: t0.Add(time.Second)}},
			},
		},
		watch.Event{
			Type:     watch.Relist,
			Time:     t0.Add(3 * time.Second),
			Resource: widgets,
			Lifecycle: watch.LifecycleInfo{
				Reason:              "Expired",
				FromResourceVersion: "9",
				Counts:              watch.RelistCounts{Updated: 1, Unchanged: 4},
			},
		},
		watch.Event{Type: watch.HotLoop, Time: t0.Add(4 * time.Second), Resource: widgets, Namespace: "demo", Name: "w",
			HotLoop: &watch.HotLoopInfo{Reason: "updates", Loop: "self", Managers: []string{"widget-operator"}, Fields: []string{"status.seen"}, Updates: 30, Window: 10 * time.Second}})
	by := export(t, lines)
	s := by["simulated.Reconcile"]
	if len(s) != 1 || !s[0].StartTime.Equal(t0.Add(1800*time.Millisecond)) || !s[0].EndTime.Equal(t0.Add(2*time.Second)) ||
		len(s[0].Links) != 1 || s[0].Links[0].SpanContext.SpanID() != by["Widget.Updated"][0].SpanContext.SpanID() {
		t.Errorf("simulated reconcile %+v", s)
	}
	r := by["informer.Relist"]
	if len(r) != 1 || len(r[0].Events) != 1 || r[0].Events[0].Name != "Relist" || fmt.Sprint(r[0].Events[0].Attributes) == "" {
		t.Fatalf("relist %+v", r)
	}
	h := by["Widget.HotLoop"]
	if len(h) != 1 || h[0].SpanContext.TraceID() != ObjectTraceID("uid-w", "widgets.example.com demo/w") || len(h[0].Events) != 1 {
		t.Fatalf("hot loop %+v", h)
	}
	var loop string
	for _, a := range h[0].Events[0].Attributes {
		if a.Key == "informer.loop" {
			loop = a.Value.AsString()
		}
	}
	if loop != "self" {
		t.Errorf("hot loop event says loop %q", loop)
	}
}
