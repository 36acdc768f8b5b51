package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// AuditOptions are the flags that read the API server's audit log (internal/audit).
type AuditOptions struct {
	File string
	Wait time.Duration
}

// AddFlags registers the flags watch takes; top takes only --audit-log (addFileFlag).
func (a *AuditOptions) AddFlags(f *pflag.FlagSet) {
	a.addFileFlag(f, "The API server's audit log (--audit-log-path: JSON lines of audit.k8s.io/v1 Events, level Metadata or above), followed as tail -F does: each created, changed or deleted object's line names the request that made it (user, service account, impersonated user, user agent, auditID; \"audit\" in -o json). See docs/audit.md to turn audit logging on.")
	f.DurationVar(&a.Wait, "audit-wait", audit.DefaultWait, "How long an object line waits for the audit event of its write before it goes out without one (with --audit-log).")
}

func (a *AuditOptions) addFileFlag(f *pflag.FlagSet, usage string) {
	f.StringVar(&a.File, "audit-log", a.File, usage)
}

// Validate checks the flags.
func (a *AuditOptions) Validate() error {
	if a.Wait < 0 || a.Wait > time.Minute {
		return fmt.Errorf("--audit-wait must be between 0s and 1m, got %s", a.Wait)
	}
	return nil
}

// check refuses an audit log that is not a regular file: a FIFO would block the run before
// --timeout or a signal could end it, a device (/dev/zero) is an endless line. A file not
// there yet is waited for, as tail -F does.
func (a *AuditOptions) check() error {
	if a.File == "" {
		return nil
	}
	fi, err := os.Stat(a.File)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--audit-log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("--audit-log %s is not a regular file (%s): give the file the API server writes its audit log to (--audit-log-path)", a.File, fileKind(fi.Mode()))
	}
	return nil
}

// start follows the audit log; nil without one.
func (a *AuditOptions) start(ctx context.Context, errOut io.Writer) *audit.Runner {
	return audit.Start(ctx, audit.Config{Path: a.File, Wait: a.Wait, Notice: notifier(errOut)})
}

func notifier(errOut io.Writer) func(string) {
	return func(s string) { fmt.Fprintln(errOut, "kubectl informer: "+printer.Escape(s)) }
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
