package watchrun

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/internal/podlogs"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// Logs are running controllers' logs read into ControllerReconcile lines (internal/ctrllog).
type Logs struct {
	// Files are --controller-logs' ("-": In).
	Files []string
	// Skew is how much later than a reconcile's start an event may be seen and still count.
	Skew time.Duration
	// From are --controller-logs-from's workloads, as given and parsed (FromTargets);
	// Container is the container of their pods to read ("" for the default).
	From        []string
	FromTargets []podlogs.Target
	Container   string
	// Keys are --controller-log-keys, parsed; nil to find them.
	Keys *ctrllog.Keys
}

// reads says whether start follows logs (files, or the pods of feeds).
func (c *Logs) reads(feeds []ctrllog.Feed) bool { return len(c.Files) > 0 || len(feeds) > 0 }

// start follows the logs (the files, and the pods of feeds) and joins their reconciles to the
// watch of t; nil without either. orderWindow is how long the watch holds its own lines.
func (c *Logs) start(ctx context.Context, t *watchTargets, feeds []ctrllog.Feed, namespace string, orderWindow time.Duration, stdin io.Reader, errOut io.Writer) *ctrllog.Runner {
	if !c.reads(feeds) {
		return nil
	}
	if stdin == nil {
		stdin = os.Stdin
	}
	cfg := ctrllog.Config{Sources: c.Files, Stdin: stdin, Feeds: feeds, Keys: c.Keys,
		Join:   ctrllog.JoinConfig{Resources: t.resources, Skew: c.Skew, Hold: ctrllog.DefaultHold + orderWindow + c.Skew, Began: time.Now(), Namespace: namespace},
		Notice: func(s string) { fmt.Fprintln(errOut, "kubectl informer: "+printer.Escape(s)) }}
	if t.owned != nil {
		cfg.Join.Owned = t.owned.Resources
	}
	return ctrllog.Start(ctx, cfg)
}

// feeds resolves each --controller-logs-from workload to its pods' selector, before the watch
// starts: a workload the server does not give ends the run with its error.
func (c *Logs) feeds(t *watchTargets, getter genericclioptions.RESTClientGetter) ([]ctrllog.Feed, error) {
	if len(c.FromTargets) == 0 {
		return nil, nil
	}
	// The namespace of -n or the kubeconfig, also under -A (as kubectl logs takes it).
	namespace, _, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(t.restCfg)
	if err != nil {
		return nil, err
	}
	var feeds []ctrllog.Feed
	for i, target := range c.FromTargets {
		w, err := podlogs.Resolve(getter, namespace, target)
		if err != nil {
			return nil, fmt.Errorf("--controller-logs-from %s: %w", c.From[i], err)
		}
		feeds = append(feeds, &podlogs.Follower{Client: cs, Workload: w, Container: c.Container, Flag: c.From[i]})
	}
	return feeds, nil
}

// joined is the run's joined sources: the audit log first (who wrote a line), then the
// controllers' logs (which reconcile); nil without either.
func joined(a *audit.Runner, logs *ctrllog.Runner) pipeline.Joined {
	var first, then pipeline.Joined
	if a != nil {
		first = a
	}
	if logs != nil {
		then = logs
	}
	return pipeline.Chain(first, then)
}
