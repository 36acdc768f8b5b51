package tracing

import (
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// reconcileContext is the span context of a reconcile of the object objectID: in the trace its
// traceparent annotation names, else in the object's own trace.
func (m *spanMaker) reconcileContext(controller, reconcileID, objectID string, start time.Time) trace.SpanContext {
	o := m.objects[objectID]
	key := objectID[strings.IndexByte(objectID, ' ')+1:]
	sid := ReconcileSpanID(controller, reconcileID, key, start)
	if tp := parseTraceparent(o.traceparent); tp.IsValid() {
		return remote(tp.TraceID(), sid)
	}
	return remote(ObjectTraceID(o.uid, objectID), sid)
}

// parentOf is the parent of a reconcile span: the traceparent's span when the object carries
// one, else the object's Added span.
func (m *spanMaker) parentOf(objectID string) trace.SpanContext {
	o := m.objects[objectID]
	if tp := parseTraceparent(o.traceparent); tp.IsValid() {
		return tp
	}
	return remote(ObjectTraceID(o.uid, objectID), AddedSpanID(o.uid, objectID))
}

// triggerLinks are the links of a reconcile to the spans of the object events that triggered
// it.
func (m *spanMaker) triggerLinks(ev *watch.Event) []trace.Link {
	links := make([]trace.Link, 0, len(ev.Queued.Triggers))
	for _, t := range ev.Queued.Triggers {
		res, key := ev.Resource.String(), ev.Key
		if t.Key != "" {
			res, key = t.Resource, t.Key
		}
		id := res + " " + key
		o := m.objects[id]
		sc := remote(ObjectTraceID(o.uid, id), DeltaSpanID(o.uid, id, t.Type, t.Delta, t.ResourceVersion, t.Time))
		links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{
			attribute.String("informer.link", "trigger"),
			attribute.String("informer.trigger.type", string(t.Type)),
			attribute.String("informer.resource_version", t.ResourceVersion),
		}})
	}
	return links
}

// reconcile makes the span of a reconcile read from a controller's log: from its start to its
// end, linked to its triggers and to the writes attributed to it so far.
func (m *spanMaker) reconcile(ev *watch.Event) {
	r := ev.Reconcile
	id := ev.ObjectID()
	sc := m.reconcileContext(r.Controller, r.ReconcileID, id, ev.Time)
	links := append(m.triggerLinks(ev), m.takeWrites(sc.SpanID())...)
	kind := r.Kind
	if kind == "" {
		kind = ev.Resource.Kind
	}
	attrs := append(objectAttrs(kind, ev.Namespace, ev.Name, m.objects[id].uid),
		attribute.String("informer.controller", r.Controller),
		attribute.String("informer.result", r.Result),
		attribute.Int("informer.trigger_count", ev.Queued.TriggerCount),
		attribute.String("informer.source", "log"))
	if r.ReconcileID != "" { // a klog controller's log has none
		attrs = append(attrs, attribute.String("informer.reconcile_id", r.ReconcileID))
	}
	if r.RequeueAfter > 0 {
		attrs = append(attrs, attribute.Float64("informer.requeue_after_seconds", r.RequeueAfter.Seconds()))
	}
	if r.Result == "requeue" || r.Result == "requeueAfter" {
		attrs = append(attrs, attribute.Bool("informer.requeue", true))
	}
	if ev.Lifecycle.Reason != "" {
		attrs = append(attrs, attribute.String("informer.reason", ev.Lifecycle.Reason))
	}
	span := m.start(r.Controller+".Reconcile", sc.TraceID(), sc.SpanID(), m.parentOf(id), ev.Time, trace.WithAttributes(attrs...), trace.WithLinks(links...))
	if r.Error != "" || r.Result == "error" {
		span.SetStatus(codes.Error, r.Error)
	}
	m.end(span, ev.Time.Add(r.Duration))
}

// simulated makes the span of a reconcile of the simulated workqueue (Reconciled): from when a
// worker took the key to when it was done.
func (m *spanMaker) simulated(ev *watch.Event) {
	id := ev.ObjectID()
	start := ev.Time.Add(-ev.Queued.Work)
	sc := m.reconcileContext("simulated", "", id, start)
	result := "ok"
	if ev.Queued.Failed {
		result = "error"
	}
	attrs := append(objectAttrs(ev.Resource.Kind, ev.Namespace, ev.Name, m.objects[id].uid),
		attribute.String("informer.controller", "simulated"),
		attribute.String("informer.result", result),
		attribute.Int("informer.trigger_count", ev.Queued.TriggerCount),
		attribute.Float64("informer.queue_wait_seconds", ev.Queued.Wait.Seconds()),
		attribute.Int("informer.requeues", ev.Queued.Requeues),
		attribute.String("informer.source", "simulated"))
	if ev.Queued.Requeue {
		attrs = append(attrs, attribute.Bool("informer.requeue", true))
	}
	span := m.start("simulated.Reconcile", sc.TraceID(), sc.SpanID(), m.parentOf(id), start, trace.WithAttributes(attrs...), trace.WithLinks(m.triggerLinks(ev)...))
	if ev.Queued.Failed {
		span.SetStatus(codes.Error, "simulated failure (--fail-rate)")
	}
	m.end(span, ev.Time)
}

// hotLoop makes a span in the object's trace for a hot loop found or ended, with the report as
// its span event.
func (m *spanMaker) hotLoop(ev *watch.Event) {
	id := ev.ObjectID()
	o := m.objects[id]
	h := ev.HotLoopInfo()
	tid := ObjectTraceID(o.uid, id)
	sid := spanIDOf("hotloop", o.uid, id, string(ev.Type), ev.Time.UTC().Format(time.RFC3339Nano))
	attrs := []attribute.KeyValue{
		attribute.String("informer.loop", h.Loop),
		attribute.StringSlice("informer.writers", h.Managers),
		attribute.StringSlice("informer.fields", h.Fields),
		attribute.Int("informer.updates", h.Updates),
	}
	if h.Reason != "" {
		attrs = append(attrs, attribute.String("informer.reason", h.Reason), attribute.String("informer.fix", h.Suggestion),
			attribute.Float64("informer.window_seconds", h.Window.Seconds()))
	}
	if ev.Type == watch.HotLoopEnded {
		attrs = append(attrs, attribute.Float64("informer.duration_seconds", h.Duration.Seconds()), attribute.Bool("informer.deleted", h.Deleted))
	}
	span := m.start(ev.Resource.Kind+"."+string(ev.Type), tid, sid, remote(tid, AddedSpanID(o.uid, id)), ev.Time,
		trace.WithAttributes(objectAttrs(ev.Resource.Kind, ev.Namespace, ev.Name, o.uid)...))
	span.AddEvent(string(ev.Type), trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	m.end(span, ev.Time)
}

// lifecycle makes a span in the resource's informer trace for a relist, a closed watch (the
// watch restarts), an error or a throttled request, with the line as its span event.
func (m *spanMaker) lifecycle(ev *watch.Event) {
	res := ev.Resource.String()
	tid, sid := lifecycleIDs(m.cluster, res, ev)
	attrs := []attribute.KeyValue{attribute.String("informer.resource", res)}
	if ev.Lifecycle.Reason != "" {
		attrs = append(attrs, attribute.String("informer.reason", ev.Lifecycle.Reason))
	}
	switch ev.Type {
	case watch.Relist:
		attrs = append(attrs, attribute.String("informer.from_resource_version", ev.Lifecycle.FromResourceVersion),
			attribute.Int("informer.added", ev.Lifecycle.Counts.Added), attribute.Int("informer.updated", ev.Lifecycle.Counts.Updated),
			attribute.Int("informer.deleted", ev.Lifecycle.Counts.Deleted), attribute.Int("informer.unchanged", ev.Lifecycle.Counts.Unchanged))
	case watch.Throttled:
		attrs = append(attrs, attribute.Float64("informer.delay_seconds", ev.Lifecycle.Duration.Seconds()),
			attribute.Float64("informer.retry_after_seconds", ev.Stats.RetryAfter.Seconds()))
	case watch.Error:
		attrs = append(attrs, attribute.String("informer.verb", ev.Lifecycle.Verb), attribute.String("informer.message", ev.Lifecycle.Message))
	}
	span := m.start("informer."+string(ev.Type), tid, sid, trace.SpanContext{}, ev.Time, trace.WithAttributes(attribute.String("informer.resource", res)))
	span.AddEvent(string(ev.Type), trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
	m.end(span, ev.Time)
}

// managerNames are the names of the managers that made an update.
func managerNames(ms []diff.Manager) []string {
	names := make([]string, len(ms))
	for i, mg := range ms {
		names[i] = mg.Manager
	}
	return names
}
