package tracing

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// TraceparentAnnotation is the annotation (KEP-5915's proposal) whose W3C traceparent a
// reconcile of the object joins.
const TraceparentAnnotation = "traceparent"

// Limits of what the span maker keeps between lines.
const (
	// maxObjects bounds the objects whose uid and traceparent are kept for the reconciles and
	// triggers that name them by key; beyond it the index starts again.
	maxObjects = 1 << 17
	// maxPendingWrites bounds the reconciles whose writes, seen before their reconcile line,
	// wait to be linked to it.
	maxPendingWrites = 4096
	// maxChangedPaths bounds the changed field paths on one span.
	maxChangedPaths = 64
)

// object is what the index keeps of one object.
type object struct {
	uid, traceparent string
}

// spanMaker turns the pipeline's lines into spans; it is not safe for concurrent use (the
// pipeline's goroutine calls it).
type spanMaker struct {
	tracer  trace.Tracer
	cluster string // the cluster's uid, for the informers' traces
	objects map[string]object
	// writes are the write spans attributed to a reconcile (by its span id) before its line.
	writes     map[trace.SpanID][]trace.Link
	writeOrder []trace.SpanID
	ended      int64
}

func newSpanMaker(t trace.Tracer, clusterUID string) *spanMaker {
	return &spanMaker{tracer: t, cluster: clusterUID, objects: map[string]object{}, writes: map[trace.SpanID][]trace.Link{}}
}

// line makes the spans of one line.
func (m *spanMaker) line(ev *watch.Event) {
	switch {
	case ev.Type.IsObject():
		m.delta(ev)
	case ev.Type == watch.ControllerReconcile && ev.Reconcile != nil:
		m.reconcile(ev)
	case ev.Type == watch.Reconciled:
		m.simulated(ev)
	case ev.Type == watch.HotLoop || ev.Type == watch.HotLoopEnded:
		m.hotLoop(ev)
	case ev.Type == watch.Relist || ev.Type == watch.WatchClosed || ev.Type == watch.Throttled || ev.Type == watch.Error:
		m.lifecycle(ev)
	}
}

// start starts a span with the given ids (parent: a remote parent, or none for a root).
func (m *spanMaker) start(name string, tid trace.TraceID, sid trace.SpanID, parent trace.SpanContext, at time.Time, opts ...trace.SpanStartOption) trace.Span {
	ctx := withIDs(context.Background(), tid, sid)
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	opts = append(opts, trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindInternal))
	_, span := m.tracer.Start(ctx, name, opts...)
	return span
}

func (m *spanMaker) end(span trace.Span, at time.Time) {
	span.End(trace.WithTimestamp(at))
	m.ended++
}

// accessor is the metadata of the line's object, without decoding it when it is cached.
func accessor(ev *watch.Event) metav1.Object {
	if ev.Obj.Object != nil {
		return ev.Obj.Object
	}
	for _, o := range []runtime.Object{ev.Obj.Typed, ev.Obj.Cached} {
		if o == nil {
			continue
		}
		if a, err := meta.Accessor(o); err == nil {
			return a
		}
	}
	return nil
}

// note keeps the object's uid and traceparent from its line, and returns what is known of it.
func (m *spanMaker) note(ev *watch.Event) object {
	id := ev.ObjectID()
	if a := accessor(ev); a != nil {
		o := object{uid: string(a.GetUID()), traceparent: a.GetAnnotations()[TraceparentAnnotation]}
		if len(m.objects) >= maxObjects {
			clear(m.objects)
		}
		m.objects[id] = o
		return o
	}
	return m.objects[id]
}

// objectAttrs are the semantic conventions' attributes of an object: k8s.namespace.name,
// k8s.<kind>.name and k8s.<kind>.uid.
func objectAttrs(kind, namespace, name, uid string) []attribute.KeyValue {
	k := strings.ToLower(kind)
	if k == "" {
		k = "object"
	}
	attrs := []attribute.KeyValue{attribute.String("k8s."+k+".name", name)}
	if namespace != "" {
		attrs = append(attrs, attribute.String("k8s.namespace.name", namespace))
	}
	if uid != "" {
		attrs = append(attrs, attribute.String("k8s."+k+".uid", uid))
	}
	return attrs
}

// Source says where an object event came from: list (the initial list), relist, resync or
// watch.
func Source(ev *watch.Event) string {
	switch {
	case ev.Obj.Delta == watch.DeltaSync:
		return "resync"
	case ev.Obj.Delta == watch.DeltaReplaced && ev.Obj.InitialList:
		return "list"
	case ev.Obj.Delta == watch.DeltaReplaced:
		return "relist"
	}
	return "watch"
}

// delta makes an object event's span in its object's trace: an Added line is the root, the
// others its children.
func (m *spanMaker) delta(ev *watch.Event) {
	o := m.note(ev)
	id := ev.ObjectID()
	tid := ObjectTraceID(o.uid, id)
	sid := DeltaSpanID(o.uid, id, ev.Type, ev.Obj.Delta, ev.ResourceVersion, ev.Time)
	var parent trace.SpanContext
	if ev.Type != watch.Added {
		parent = remote(tid, AddedSpanID(o.uid, id))
	}
	attrs := append(objectAttrs(ev.Resource.Kind, ev.Namespace, ev.Name, o.uid),
		attribute.String("informer.resource", ev.Resource.String()),
		attribute.String("informer.delta", string(ev.Obj.Delta)),
		attribute.String("informer.source", Source(ev)),
		attribute.String("informer.resource_version", ev.ResourceVersion))
	if ev.Obj.OldResourceVersion != "" {
		attrs = append(attrs, attribute.String("informer.old_resource_version", ev.Obj.OldResourceVersion))
	}
	if ev.Obj.Tombstone {
		attrs = append(attrs, attribute.Bool("informer.tombstone", true))
	}
	var links []trace.Link
	if a := ev.Obj.Attribution; a != nil {
		attrs = append(attrs, attribute.StringSlice("informer.writers", managerNames(a.Managers)), attribute.String("informer.attribution", a.Rule))
		if a.Reconcile != nil {
			rsc := m.reconcileContext(a.Reconcile.Controller, a.Reconcile.ReconcileID, id, time.Time{})
			links = append(links, trace.Link{SpanContext: rsc, Attributes: []attribute.KeyValue{attribute.String("informer.link", "written_by")}})
			m.noteWrite(rsc.SpanID(), trace.Link{SpanContext: remote(tid, sid), Attributes: []attribute.KeyValue{attribute.String("informer.link", "write")}})
		}
	}
	if paths := changedPaths(ev); paths != nil {
		attrs = append(attrs, attribute.StringSlice("informer.changed_paths", paths))
	}
	span := m.start(ev.Resource.Kind+"."+string(ev.Type), tid, sid, parent, ev.Time, trace.WithAttributes(attrs...), trace.WithLinks(links...))
	m.end(span, ev.Time)
}

// changedPaths are the paths an update changed (never their values: a Secret's data stays
// out), nil when not computed.
func changedPaths(ev *watch.Event) []string {
	if ev.Obj.Changes == nil {
		return nil
	}
	paths := make([]string, 0, min(len(ev.Obj.Changes), maxChangedPaths))
	for _, c := range ev.Obj.Changes {
		if len(paths) == maxChangedPaths {
			break
		}
		paths = append(paths, c.Path)
	}
	return paths
}

func remote(tid trace.TraceID, sid trace.SpanID) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

// noteWrite keeps a write attributed to a reconcile whose line has not come yet.
func (m *spanMaker) noteWrite(reconcile trace.SpanID, l trace.Link) {
	if _, ok := m.writes[reconcile]; !ok {
		if len(m.writeOrder) >= maxPendingWrites {
			delete(m.writes, m.writeOrder[0])
			m.writeOrder = m.writeOrder[1:]
		}
		m.writeOrder = append(m.writeOrder, reconcile)
	}
	m.writes[reconcile] = append(m.writes[reconcile], l)
}

// takeWrites returns the writes noted for a reconcile and forgets them.
func (m *spanMaker) takeWrites(reconcile trace.SpanID) []trace.Link {
	l, ok := m.writes[reconcile]
	if !ok {
		return nil
	}
	delete(m.writes, reconcile)
	for i, s := range m.writeOrder {
		if s == reconcile {
			m.writeOrder = append(m.writeOrder[:i], m.writeOrder[i+1:]...)
			break
		}
	}
	return l
}
