package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
)

// AuditOptions are the flags that read the API server's audit log (internal/audit).
type AuditOptions struct {
	File string
	Wait time.Duration
	// WebhookListen is --audit-webhook-listen, HOST:PORT; WebhookDir where its certificate,
	// token and kubeconfig are kept.
	WebhookListen, WebhookDir string

	cfg audit.Config // set by prepare
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

// sources are the audit sources the flags name.
func (a *AuditOptions) sources() audit.Sources {
	return audit.Sources{File: a.File, WebhookListen: a.WebhookListen, WebhookDir: a.WebhookDir, Wait: a.Wait}
}

// prepare opens the audit sources (audit.Sources.Open), for top.
func (a *AuditOptions) prepare(errOut io.Writer) error {
	cfg, err := a.sources().Open(errOut)
	a.cfg = cfg
	return err
}

// config is the audit sources prepare opened, for top's audit.Start.
func (a *AuditOptions) config(io.Writer) audit.Config { return a.cfg }
