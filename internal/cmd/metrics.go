package cmd

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-informer/kubectl-informer/internal/portforward"
	"github.com/kubectl-informer/kubectl-informer/internal/readonly"
	"github.com/kubectl-informer/kubectl-informer/internal/watchrun"
)

// MetricsOptions are the flags that scrape running controllers' /metrics into ControllerQueue
// lines: where, how often, and as whom.
type MetricsOptions struct {
	URLs                  []string
	Interval              time.Duration
	CAFile                string
	InsecureSkipTLSVerify bool
	TokenFile             string
	ServiceAccount        string // NAMESPACE/NAME
	From                  []string

	saNamespace, saName string
	from                []portforward.Target
}

// NewMetricsOptions returns the defaults.
func NewMetricsOptions() MetricsOptions { return MetricsOptions{Interval: 5 * time.Second} }

// AddFlags registers the --metrics-* flags.
func (m *MetricsOptions) AddFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&m.URLs, "metrics-url", m.URLs, "A running controller's Prometheus endpoint (http or https, e.g. https://127.0.0.1:8443/metrics through kubectl port-forward); its workqueues and reconciles print as ControllerQueue lines. Repeatable.")
	f.DurationVar(&m.Interval, "metrics-interval", m.Interval, "How often to scrape the metrics endpoints; a queue whose figures did not change gets no new line.")
	f.StringArrayVar(&m.From, "metrics-from", m.From, "Scrape a controller in the cluster through a port-forward over the API server, as 'kubectl port-forward' does: [https://|http://][NAMESPACE/]TYPE/NAME:PORT[/PATH] (e.g. my-system/deploy/my-controller-manager:8443; NAMESPACE defaults to -n's; PATH to /metrics; without a scheme, https if the port speaks TLS). Repeatable.")
	f.StringVar(&m.CAFile, "metrics-ca-file", m.CAFile, "Path to the certificate(s) of the CA that signed the metrics server's certificate (default: the system's roots).")
	f.BoolVar(&m.InsecureSkipTLSVerify, "metrics-insecure-skip-tls-verify", m.InsecureSkipTLSVerify, "Do not check the metrics server's certificate. This will make your HTTPS connections insecure.")
	f.StringVar(&m.TokenFile, "metrics-token-file", m.TokenFile, "Send the bearer token in this file with each scrape (read again every minute). The kubeconfig's credentials are never sent to a metrics URL.")
	f.StringVar(&m.ServiceAccount, "metrics-serviceaccount", m.ServiceAccount, "Scrape as this service account (NAMESPACE/NAME): short-lived tokens are minted with the TokenRequest API using the kubeconfig's credentials (as 'kubectl create token' does) and renewed before they expire; its access to /metrics is checked first with a SubjectAccessReview.")
}

// Validate checks the flags without reading files or talking to the server.
func (m *MetricsOptions) Validate() error {
	if m.Interval <= 0 {
		return fmt.Errorf("--metrics-interval must be > 0, got %s", m.Interval)
	}
	for _, u := range m.URLs {
		if parsed, err := url.Parse(u); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return fmt.Errorf("--metrics-url %q must be an http(s) URL such as http://127.0.0.1:8080/metrics", u)
		}
	}
	m.from = nil
	for _, f := range m.From {
		t, err := portforward.ParseTarget(f)
		if err != nil {
			return fmt.Errorf("--metrics-from %w", err)
		}
		m.from = append(m.from, t)
	}
	if m.CAFile != "" && m.InsecureSkipTLSVerify {
		return errors.New("--metrics-ca-file and --metrics-insecure-skip-tls-verify cannot be used together")
	}
	if m.TokenFile != "" && m.ServiceAccount != "" {
		return errors.New("--metrics-token-file and --metrics-serviceaccount cannot be used together")
	}
	if m.ServiceAccount != "" {
		ns, name, ok := strings.Cut(m.ServiceAccount, "/")
		if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			return fmt.Errorf("--metrics-serviceaccount %q must be NAMESPACE/NAME, e.g. monitoring/metrics-reader", m.ServiceAccount)
		}
		m.saNamespace, m.saName = ns, name
	}
	if !m.enabled() {
		for _, f := range []struct {
			set  bool
			name string
		}{{m.CAFile != "", "--metrics-ca-file"}, {m.InsecureSkipTLSVerify, "--metrics-insecure-skip-tls-verify"}, {m.TokenFile != "", "--metrics-token-file"}, {m.ServiceAccount != "", "--metrics-serviceaccount"}} {
			if f.set {
				return fmt.Errorf("%s needs --metrics-url or --metrics-from", f.name)
			}
		}
	}
	return nil
}

func (m *MetricsOptions) enabled() bool { return len(m.URLs) > 0 || len(m.From) > 0 }

// permits are the writes to the cluster these flags need (internal/readonly): a service
// account's tokens and its access check, and port-forwards.
func (m *MetricsOptions) permits() readonly.Allow {
	return readonly.Allow{TokenRequest: m.ServiceAccount != "", SubjectAccessReview: m.ServiceAccount != "", PortForward: len(m.From) > 0}
}

// config is the scrapes' typed configuration.
func (m *MetricsOptions) config() watchrun.Metrics {
	return watchrun.Metrics{URLs: m.URLs, Interval: m.Interval, CAFile: m.CAFile, InsecureSkipTLSVerify: m.InsecureSkipTLSVerify,
		TokenFile: m.TokenFile, ServiceAccountNamespace: m.saNamespace, ServiceAccountName: m.saName, From: m.From, FromTargets: m.from}
}
