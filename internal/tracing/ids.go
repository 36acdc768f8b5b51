package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The ids of every span are derived from what the line says, never drawn at random, so a
// replay of a recording exports the spans the live run did, with the same ids (docs/tracing.md).

// hash is sha256 of the parts, each followed by a zero byte.
func hash(parts ...string) [sha256.Size]byte {
	h := sha256.New()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

func traceIDOf(parts ...string) trace.TraceID {
	var id trace.TraceID
	sum := hash(parts...)
	copy(id[:], sum[:])
	return id
}

func spanIDOf(parts ...string) trace.SpanID {
	var id trace.SpanID
	sum := hash(parts...)
	copy(id[:], sum[:])
	return id
}

// ObjectTraceID is the trace of one object's history: derived from its uid, or from its
// resource, namespace and name (objectID) when the uid is not known.
func ObjectTraceID(uid, objectID string) trace.TraceID {
	if uid == "" {
		return traceIDOf("object-key", objectID)
	}
	return traceIDOf("object", uid)
}

// AddedSpanID is the span of an object's Added line, the root of its trace: one per uid.
func AddedSpanID(uid, objectID string) trace.SpanID {
	return spanIDOf("added", uid, objectID)
}

// DeltaSpanID is the span of an object event: the Added one's for an Added line; else by its
// type, delta and resourceVersion (and its time for a resync, which redelivers a version).
func DeltaSpanID(uid, objectID string, t watch.Type, d watch.Delta, rv string, at time.Time) trace.SpanID {
	if t == watch.Added {
		return AddedSpanID(uid, objectID)
	}
	var when string
	if d == watch.DeltaSync {
		when = at.UTC().Format(time.RFC3339Nano)
	}
	return spanIDOf("delta", uid, objectID, string(t), string(d), rv, when)
}

// ReconcileSpanID is the span of a reconcile read from a controller's log: by its controller
// and reconcileID (by its object and start when the log has no reconcileID).
func ReconcileSpanID(controller, reconcileID, key string, start time.Time) trace.SpanID {
	if reconcileID != "" {
		return spanIDOf("reconcile", controller, reconcileID)
	}
	return spanIDOf("reconcile-at", controller, key, start.UTC().Format(time.RFC3339Nano))
}

// lifecycleIDs are the trace of one resource's informer (relists, watch restarts, throttling)
// and the span of one of its lines.
func lifecycleIDs(cluster, resource string, ev *watch.Event) (trace.TraceID, trace.SpanID) {
	return traceIDOf("informer", cluster, resource),
		spanIDOf("lifecycle", cluster, resource, string(ev.Type), ev.Time.UTC().Format(time.RFC3339Nano), ev.Lifecycle.Reason)
}

// idsKey carries the ids the next span must take through the context the tracer hands the
// IDGenerator.
type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, ids{t, s})
}

// idGenerator gives a span the ids withIDs put in its context: the SDK asks it for every span
// (NewIDs for a root, NewSpanID for a child), and derived ids make the export deterministic.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.trace, v.span
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.span
}

// parseTraceparent reads a W3C traceparent header value (version 00): the remote span context
// it names, invalid when it is not one.
func parseTraceparent(s string) trace.SpanContext {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) {
		return trace.SpanContext{}
	}
	tid, err := trace.TraceIDFromHex(parts[1])
	if err != nil {
		return trace.SpanContext{}
	}
	sid, err := trace.SpanIDFromHex(parts[2])
	if err != nil || len(parts[3]) != 2 {
		return trace.SpanContext{}
	}
	flags, err := hex.DecodeString(parts[3])
	if err != nil {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(flags[0]), Remote: true})
}
