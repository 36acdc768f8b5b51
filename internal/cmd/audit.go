package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/input"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// AuditOptions are the flags that read the API server's audit log (internal/audit).
type AuditOptions struct {
	File string
	Wait time.Duration
	// WebhookListen is --audit-webhook-listen, HOST:PORT; WebhookDir where its certificate,
	// token and kubeconfig are kept.
	WebhookListen, WebhookDir string

	webhook *audit.Webhook
}

// AddFlags registers the flags watch takes; top takes --audit-log and the webhook's
// (addSourceFlags).
func (a *AuditOptions) AddFlags(f *pflag.FlagSet) {
	a.addSourceFlags(f, "The API server's audit log (--audit-log-path: JSON lines of audit.k8s.io/v1 Events, level Metadata or above), followed as tail -F does: each created, changed or deleted object's line names the request that made it (user, service account, impersonated user, user agent, auditID; \"audit\" in -o json). See docs/audit.md to turn audit logging on.")
	f.DurationVar(&a.Wait, "audit-wait", audit.DefaultWait, "How long an object line waits for the audit event of its write before it goes out without one (with --audit-log or --audit-webhook-listen).")
}

func (a *AuditOptions) addSourceFlags(f *pflag.FlagSet, usage string) {
	f.StringVar(&a.File, "audit-log", a.File, usage)
	f.StringVar(&a.WebhookListen, "audit-webhook-listen", a.WebhookListen, "Receive the API server's audit webhook backend directly, as --audit-log reads its log: HTTPS on HOST:PORT (127.0.0.1:8443; 0.0.0.0:8443 for a cluster in containers), with a self-signed certificate and a token kept in --audit-webhook-dir, which also holds the kubeconfig to start kube-apiserver with (--audit-webhook-config-file). See docs/audit.md.")
	f.StringVar(&a.WebhookDir, "audit-webhook-dir", a.WebhookDir, "Where --audit-webhook-listen keeps its certificate, token and webhook.kubeconfig, made once and reused (default: the user's config directory's kubectl-informer/audit-webhook).")
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
		return fmt.Errorf("--audit-log %s is not a regular file (%s): give the file the API server writes its audit log to (--audit-log-path)", a.File, input.FileKind(fi.Mode()))
	}
	return nil
}

// listen starts listening for the audit webhook, when asked, and says where the API server's
// kubeconfig for it is.
func (a *AuditOptions) listen(errOut io.Writer) error {
	if a.WebhookListen == "" {
		return nil
	}
	dir := a.WebhookDir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("--audit-webhook-dir: %w", err)
		}
		dir = filepath.Join(base, "kubectl-informer", "audit-webhook")
	}
	wh, err := audit.ListenWebhook(a.WebhookListen, dir)
	if err != nil {
		return err
	}
	a.webhook = wh
	fmt.Fprintf(errOut, "kubectl informer: receiving the API server's audit webhook on https://%s/audit: start kube-apiserver with --audit-webhook-config-file=%s (and --audit-policy-file)\n",
		wh.Addr, printer.Escape(wh.Kubeconfig))
	return nil
}

// prepare checks the audit log and starts listening for the webhook: before any request, so a
// bad file or a port in use end the run with one line.
func (a *AuditOptions) prepare(errOut io.Writer) error {
	if err := a.check(); err != nil {
		return err
	}
	return a.listen(errOut)
}

// holds is how long the audit log may hold a line: --audit-wait with a source, else 0.
func (a *AuditOptions) holds() time.Duration {
	if a.File == "" && a.WebhookListen == "" {
		return 0
	}
	return a.Wait
}

// config is the audit sources, for watch's and top's audit.Start.
func (a *AuditOptions) config(errOut io.Writer) audit.Config {
	return audit.Config{Path: a.File, Webhook: a.webhook, Wait: a.Wait, Notice: notifier(errOut)}
}

func notifier(errOut io.Writer) func(string) {
	return func(s string) { fmt.Fprintln(errOut, "kubectl informer: "+printer.Escape(s)) }
}
