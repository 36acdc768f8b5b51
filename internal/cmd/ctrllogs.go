package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/internal/podlogs"
	"github.com/kubectl-informer/kubectl-informer/internal/watchrun"
)

// ControllerLogsOptions are the flags that read running controllers' logs into
// ControllerReconcile lines (internal/ctrllog).
type ControllerLogsOptions struct {
	Files []string
	Skew  time.Duration
	// From are --controller-logs-from values, [NAMESPACE/]TYPE/NAME; Container is -c.
	From      []string
	Container string
	// Keys is --controller-log-keys, PART=KEY,...
	Keys string

	from []podlogs.Target
	keys *ctrllog.Keys
}

// AddFlags registers the flags.
func (c *ControllerLogsOptions) AddFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&c.Files, "controller-logs", c.Files, "A running controller's log file, followed as tail -F does (- reads standard input): each reconcile it shows (controller-runtime's zap JSON or console lines, klog text or JSON) prints as a ControllerReconcile line with the watched events that caused it. Repeatable. Every reconcile needs --zap-log-level=5 (controller-runtime) or -v=4 (kube-controller-manager).")
	f.StringArrayVar(&c.From, "controller-logs-from", c.From, "Read the logs of a controller's pods through the API server, as 'kubectl logs -f' does, into ControllerReconcile lines like --controller-logs: [NAMESPACE/]TYPE/NAME (deploy/, sts/, ds/, rs/, pod/...; NAMESPACE defaults to -n's). Every pod its selector matches is read, new pods of a rollout too; a broken stream is reopened. Needs get on pods/log and list, watch on pods. Repeatable.")
	f.StringVarP(&c.Container, "controller-logs-container", "c", c.Container, "The container of --controller-logs-from's pods to read (default: the pod's kubectl.kubernetes.io/default-container, else every container).")
	f.StringVar(&c.Keys, "controller-log-keys", c.Keys, "The keys a controller's structured log (JSON or logfmt) keeps the parts of a line under, for a log whose keys are not found by themselves: PART=KEY,... with PART one of "+strings.Join(ctrllog.KeyRoles(), ", ")+" (e.g. message=msg,time=@timestamp,level=severity,reconcileID=rid). Without it each part is looked for under the keys of zap (msg or message), klog, logrus, slog, zerolog and ECS.")
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
	c.from = nil
	for _, v := range c.From {
		t, err := podlogs.ParseTarget(v)
		if err != nil {
			return fmt.Errorf("--controller-logs-from %w", err)
		}
		c.from = append(c.from, t)
	}
	if c.Container != "" && len(c.From) == 0 {
		return fmt.Errorf("--controller-logs-container needs --controller-logs-from")
	}
	if errs := validation.IsDNS1123Label(c.Container); c.Container != "" && len(errs) > 0 {
		return fmt.Errorf("--controller-logs-container %q is not a container name: %s", c.Container, strings.Join(errs, "; "))
	}
	c.keys = nil
	if c.Keys != "" {
		if len(c.Files) == 0 && len(c.From) == 0 {
			return fmt.Errorf("--controller-log-keys needs --controller-logs or --controller-logs-from")
		}
		k, err := ctrllog.ParseKeys(c.Keys)
		if err != nil {
			return fmt.Errorf("--controller-log-keys %q: %w", c.Keys, err)
		}
		c.keys = &k
	}
	return nil
}

// config is the controllers' logs' typed configuration.
func (c *ControllerLogsOptions) config() watchrun.Logs {
	return watchrun.Logs{Files: c.Files, Skew: c.Skew, From: c.From, FromTargets: c.from, Container: c.Container, Keys: c.keys}
}
