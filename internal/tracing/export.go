// Package tracing exports the pipeline's lines as OpenTelemetry spans over OTLP: each object's
// history one trace (its deltas), each reconcile a span linked to the deltas that triggered it
// and to the writes it made, relists, watch restarts, hot loops and throttling as span events
// (docs/tracing.md). It is an output stage beside the printer and the recorder: the pipeline
// hands it every kept line, it makes the spans on the pipeline's goroutine and a batch span
// processor with a bounded queue sends them; a collector that is down or slow loses spans
// (counted), never holds the watch.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// QueueSize bounds the spans waiting to be sent; beyond it new spans are dropped (counted).
// BatchSize is the most spans one export request carries.
const (
	QueueSize = 4096
	BatchSize = 512
)

// How a batch the collector did not take is retried.
const (
	retryFirst = 500 * time.Millisecond
	retryMax   = 2 * time.Second
	retryFor   = 5 * time.Second
)

// ServiceName is the service every span is exported under (OTEL_SERVICE_NAME replaces it).
const ServiceName = "kubectl-informer"

// Config says where the spans go and who made them.
type Config struct {
	// ClusterUID is the kube-system namespace's uid (k8s.cluster.uid), ClusterName the
	// kubeconfig context's cluster (k8s.cluster.name); either may be empty (a replay).
	ClusterUID, ClusterName string
	// Version is the plugin's (service.version).
	Version string
	// Warn says a failure once, on stderr; the next ones are only counted.
	Warn func(string)
	// Exporter replaces the OTLP exporter the environment configures (tests).
	Exporter sdktrace.SpanExporter
}

// Exporter is the pipeline's tracing stage: Line makes a line's spans, Shutdown sends what
// is left and says how many spans were lost.
type Exporter struct {
	tp    *sdktrace.TracerProvider
	spans *spanMaker
	out   *countingExporter
}

// Protocol is the OTLP protocol the environment asks for: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
// else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the specification's default).
func Protocol() (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p {
	case "":
		return "http/protobuf", nil
	case "grpc", "http/protobuf":
		return p, nil
	}
	return "", fmt.Errorf("unsupported OTLP protocol %q (OTEL_EXPORTER_OTLP_PROTOCOL): use grpc or http/protobuf", p)
}

// Describe says where the spans go, for -v: the endpoint variables and the names of the
// headers, never their values (they hold tokens).
func Describe() string {
	p, _ := Protocol()
	var parts []string
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := os.Getenv(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if v := os.Getenv(k); v != "" {
			parts = append(parts, k+" names "+strings.Join(headerNames(v), ","))
		}
	}
	return fmt.Sprintf("exporting spans over OTLP (%s) %s", p, strings.Join(parts, " "))
}

// headerNames are the names of the headers of an OTEL_EXPORTER_OTLP_HEADERS value
// ("k1=v1,k2=v2"), sorted.
func headerNames(v string) []string {
	var names []string
	for _, kv := range strings.Split(v, ",") {
		if k, _, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) != "" {
			names = append(names, strings.TrimSpace(k))
		}
	}
	sort.Strings(names)
	return names
}

// New starts an exporter: the OTLP exporter the environment configures (the SDK reads
// OTEL_EXPORTER_OTLP_* itself: endpoint, headers, TLS, insecure, timeout, compression), behind
// a batch span processor with a bounded queue that never blocks.
func New(ctx context.Context, cfg Config) (*Exporter, error) {
	exp := cfg.Exporter
	if exp == nil {
		p, err := Protocol()
		if err != nil {
			return nil, err
		}
		// A collector that is down is said within seconds, not after the SDK's minute of
		// retries: a batch is retried for at most retryFor, then dropped (counted).
		if p == "grpc" {
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: retryFirst, MaxInterval: retryMax, MaxElapsedTime: retryFor}))
		} else {
			exp, err = otlptracehttp.New(ctx, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: retryFirst, MaxInterval: retryMax, MaxElapsedTime: retryFor}))
		}
		if err != nil {
			return nil, fmt.Errorf("configuring the OTLP exporter: %w", err)
		}
	}
	warn := cfg.Warn
	if warn == nil {
		warn = func(string) {}
	}
	out := &countingExporter{next: exp, warn: warn}
	// The SDK's own diagnostics would go to stderr as log lines, once per failed batch: one line
	// is said (countingExporter), the rest counted.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { out.fail(err) }))
	otel.SetLogger(logr.Discard())
	attrs := []attribute.KeyValue{attribute.String("service.name", ServiceName)}
	if cfg.Version != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.Version))
	}
	if cfg.ClusterUID != "" {
		attrs = append(attrs, attribute.String("k8s.cluster.uid", cfg.ClusterUID))
	}
	if cfg.ClusterName != "" {
		attrs = append(attrs, attribute.String("k8s.cluster.name", cfg.ClusterName))
	}
	res, err := resource.Merge(resource.NewSchemaless(attrs...), resource.Environment())
	if err != nil {
		res = resource.NewSchemaless(attrs...)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(out, sdktrace.WithMaxQueueSize(QueueSize), sdktrace.WithMaxExportBatchSize(BatchSize)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithResource(res),
	)
	return &Exporter{tp: tp, out: out, spans: newSpanMaker(tp.Tracer("github.com/kubectl-informer/kubectl-informer"), cfg.ClusterUID)}, nil
}

// Line makes the spans of one line of the pipeline; it never waits for the collector.
func (x *Exporter) Line(ev *watch.Event) { x.spans.line(ev) }

// Stats are what an export did: spans made, spans the collector took, spans lost (the queue
// full, the collector down or refusing, or not sent by the end).
type Stats struct {
	Spans, Exported, Dropped int64
}

// Shutdown sends the spans still queued, until ctx ends, and says how many were lost.
func (x *Exporter) Shutdown(ctx context.Context) Stats {
	err := x.tp.Shutdown(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		x.out.fail(err)
	}
	s := Stats{Spans: x.spans.ended, Exported: x.out.exported.Load()}
	s.Dropped = s.Spans - s.Exported
	return s
}

// countingExporter counts the spans the collector took, and says the first failure.
type countingExporter struct {
	next     sdktrace.SpanExporter
	warn     func(string)
	exported atomic.Int64
	once     sync.Once
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.next.ExportSpans(ctx, spans)
	if err != nil {
		c.fail(err)
		return err
	}
	c.exported.Add(int64(len(spans)))
	return nil
}

func (c *countingExporter) Shutdown(ctx context.Context) error { return c.next.Shutdown(ctx) }

// fail says the first failure on stderr; spans lost after it are counted in the exit summary.
func (c *countingExporter) fail(err error) {
	c.once.Do(func() {
		c.warn(fmt.Sprintf("kubectl informer: exporting spans over OTLP failed: %v; spans are dropped while it fails (counted in the exit summary)", err))
	})
}
