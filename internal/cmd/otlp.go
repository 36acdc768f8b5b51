package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-informer/kubectl-informer/internal/tracing"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
)

// otlpShutdown bounds how long a run's end waits for the collector to take the spans still
// queued; what it has not taken by then is dropped, counted.
const otlpShutdown = 5 * time.Second

// OTLPOptions is --otlp, shared by watch, replay and top: export the lines as OpenTelemetry spans
// over OTLP, configured by the standard OTEL_EXPORTER_OTLP_* variables.
type OTLPOptions struct {
	Enabled bool
}

// AddFlags registers --otlp.
func (o *OTLPOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.Enabled, "otlp", o.Enabled, "Export every line as OpenTelemetry spans over OTLP (docs/tracing.md): each object's history one trace, each reconcile a span linked to the events that triggered it. Where to is OpenTelemetry's standard environment: OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT), OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc), OTEL_EXPORTER_OTLP_INSECURE, OTEL_EXPORTER_OTLP_CERTIFICATE. A collector that is down or slow costs spans (counted in the summary), never the watch.")
}

// Validate checks the environment --otlp reads, so a typo fails before the watch starts.
func (o *OTLPOptions) Validate() error {
	if !o.Enabled {
		return nil
	}
	_, err := tracing.Protocol()
	return err
}

// start starts the exporter (nil without --otlp). The cluster's identity goes on every span.
func (o *OTLPOptions) start(ctx context.Context, cluster tracing.Config, errOut io.Writer) (*tracing.Exporter, error) {
	if !o.Enabled {
		return nil, nil
	}
	cluster.Version = Version
	cluster.Warn = func(s string) { fmt.Fprintln(errOut, s) }
	klog.V(2).Info(tracing.Describe())
	return tracing.New(ctx, cluster)
}

// finishOTLP sends the spans still queued (for at most otlpShutdown) and puts the figures in the
// summary.
func finishOTLP(x *tracing.Exporter, sum *summary.Summary) {
	if x == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), otlpShutdown)
	defer cancel()
	s := x.Shutdown(ctx)
	sum.Spans = &summary.SpanReport{Spans: s.Spans, Exported: s.Exported, Dropped: s.Dropped}
}

// clusterIdentity is the cluster's identity for the spans: k8s.cluster.uid, the kube-system
// namespace's uid (read once; empty when it cannot be read), and k8s.cluster.name, the
// kubeconfig context's cluster.
func clusterIdentity(ctx context.Context, cfg *rest.Config, flags *genericclioptions.ConfigFlags) tracing.Config {
	var id tracing.Config
	if raw, err := flags.ToRawKubeConfigLoader().RawConfig(); err == nil {
		name := raw.CurrentContext
		if flags.Context != nil && *flags.Context != "" {
			name = *flags.Context
		}
		if c := raw.Contexts[name]; c != nil {
			id.ClusterName = c.Cluster
		}
		if flags.ClusterName != nil && *flags.ClusterName != "" {
			id.ClusterName = *flags.ClusterName
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return id
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		klog.V(2).Infof("k8s.cluster.uid not known: reading the kube-system namespace: %v", err)
		return id
	}
	id.ClusterUID = string(ns.UID)
	return id
}
