package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// ControllerLogsOptions are the flags that read running controllers' logs into
// ControllerReconcile lines (internal/ctrllog).
type ControllerLogsOptions struct {
	Files []string
	Skew  time.Duration
}

// AddFlags registers the flags.
func (c *ControllerLogsOptions) AddFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&c.Files, "controller-logs", c.Files, "A running controller's log file, followed as tail -F does (- reads standard input): each reconcile it shows (controller-runtime's zap JSON or console lines, klog text or JSON) prints as a ControllerReconcile line with the watched events that caused it. Repeatable. Every reconcile needs --zap-log-level=5 (controller-runtime) or -v=4 (kube-controller-manager).")
	f.DurationVar(&c.Skew, "controller-logs-skew", ctrllog.DefaultSkew, "How much later than a reconcile's start (by the log's clock) this machine may see an event and still count it as that reconcile's trigger: the controller's informer and the plugin's hear of a write at slightly different times, and a pod's clock may differ.")
}

// Validate checks the flags.
func (c *ControllerLogsOptions) Validate() error {
	if c.Skew < 0 {
		return fmt.Errorf("--controller-logs-skew must be >= 0, got %s", c.Skew)
	}
	stdin := 0
	for _, f := range c.Files {
		if f == "" {
			return fmt.Errorf("--controller-logs needs a file name (or - for standard input)")
		}
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return fmt.Errorf("--controller-logs - may be given once")
	}
	return nil
}

// start follows the logs and joins their reconciles to the watch of t; nil without
// --controller-logs. orderWindow is how long the watch holds its own lines.
func (c *ControllerLogsOptions) start(ctx context.Context, t *watchTargets, namespace string, orderWindow time.Duration, stdin io.Reader, errOut io.Writer) *ctrllog.Runner {
	if len(c.Files) == 0 {
		return nil
	}
	if stdin == nil {
		stdin = os.Stdin
	}
	cfg := ctrllog.Config{Sources: c.Files, Stdin: stdin,
		Join:   ctrllog.JoinConfig{Resources: t.resources, Skew: c.Skew, Hold: ctrllog.DefaultHold + orderWindow + c.Skew, Began: time.Now(), Namespace: namespace},
		Notice: func(s string) { fmt.Fprintln(errOut, "kubectl informer: "+printer.Escape(s)) }}
	if t.owned != nil {
		cfg.Join.Owned = t.owned.Resources
	}
	return ctrllog.Start(ctx, cfg)
}
