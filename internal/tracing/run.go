package tracing

import (
	"context"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
)

// shutdownWait bounds how long a run's end waits for the collector to take the spans still
// queued; what it has not taken by then is dropped, counted.
const shutdownWait = 5 * time.Second

// Start starts the exporter of a run (watch's, replay's) of the plugin at version; the cluster's
// identity goes on every span, warnings go to errOut.
func Start(ctx context.Context, cluster Config, version string, errOut io.Writer) (*Exporter, error) {
	cluster.Version = version
	cluster.Warn = func(s string) { fmt.Fprintln(errOut, s) }
	klog.V(2).Info(Describe())
	return New(ctx, cluster)
}

// Finish sends the spans still queued (for a few seconds at most) and puts the figures in the
// summary; nothing for a nil exporter.
func Finish(x *Exporter, sum *summary.Summary) {
	if x == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	s := x.Shutdown(ctx)
	sum.Spans = &summary.SpanReport{Spans: s.Spans, Exported: s.Exported, Dropped: s.Dropped}
}

// ClusterIdentity is the cluster's identity for the spans: k8s.cluster.uid, the kube-system
// namespace's uid (read once; empty when it cannot be read), and k8s.cluster.name, the
// kubeconfig context's cluster.
func ClusterIdentity(ctx context.Context, cfg *rest.Config, flags *genericclioptions.ConfigFlags) Config {
	var id Config
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
