package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/input"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// Sources are the audit sources a command's flags name, before they are opened.
type Sources struct {
	// File is --audit-log; WebhookListen --audit-webhook-listen (HOST:PORT), WebhookDir where
	// its certificate, token and kubeconfig are kept ("": the user's config directory's
	// kubectl-informer/audit-webhook).
	File, WebhookListen, WebhookDir string
	// Wait is --audit-wait.
	Wait time.Duration
}

// Open checks the audit log and starts listening for the webhook: before any request, so a bad
// file or a port in use end the run with one line. It says on errOut where the API server's
// kubeconfig for the webhook is; the Config's notices go to errOut too.
func (s Sources) Open(errOut io.Writer) (Config, error) {
	cfg := Config{Path: s.File, Wait: s.Wait, Notice: func(m string) { fmt.Fprintln(errOut, "kubectl informer: "+printer.Escape(m)) }}
	if err := s.check(); err != nil {
		return cfg, err
	}
	wh, err := s.listen(errOut)
	cfg.Webhook = wh
	return cfg, err
}

// Holds is how long the audit log may hold a line: Wait with a source, else 0.
func (s Sources) Holds() time.Duration {
	if s.File == "" && s.WebhookListen == "" {
		return 0
	}
	return s.Wait
}

// check refuses an audit log that is not a regular file: a FIFO would block the run before
// --timeout or a signal could end it, a device (/dev/zero) is an endless line. A file not
// there yet is waited for, as tail -F does.
func (s Sources) check() error {
	if s.File == "" {
		return nil
	}
	fi, err := os.Stat(s.File)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--audit-log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("--audit-log %s is not a regular file (%s): give the file the API server writes its audit log to (--audit-log-path)", s.File, input.FileKind(fi.Mode()))
	}
	return nil
}

// listen starts listening for the audit webhook, when asked, and says where the API server's
// kubeconfig for it is; nil when not asked.
func (s Sources) listen(errOut io.Writer) (*Webhook, error) {
	if s.WebhookListen == "" {
		return nil, nil
	}
	dir := s.WebhookDir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("--audit-webhook-dir: %w", err)
		}
		dir = filepath.Join(base, "kubectl-informer", "audit-webhook")
	}
	wh, err := ListenWebhook(s.WebhookListen, dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(errOut, "kubectl informer: receiving the API server's audit webhook on https://%s/audit: start kube-apiserver with --audit-webhook-config-file=%s (and --audit-policy-file)\n",
		wh.Addr, printer.Escape(wh.Kubeconfig))
	return wh, nil
}
