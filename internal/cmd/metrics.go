package cmd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/internal/portforward"
	"github.com/kubectl-informer/kubectl-informer/internal/readonly"
	"github.com/kubectl-informer/kubectl-informer/internal/redact"
	"github.com/kubectl-informer/kubectl-informer/internal/scrape"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
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

// endpoint is one metrics page to scrape: a URL, or a port-forward's local URL.
type endpoint struct {
	url  string
	from string               // the --metrics-from value, if any
	fwd  *portforward.Forward // its forward
}

// scrapers are the running scrapes of one watch.
type scrapers struct {
	events chan watch.Event
	wg     sync.WaitGroup
	// mu guards counted: each controller's controller_runtime_reconcile_total at its last
	// scrape, also when its line was folded (the summary's coverage).
	mu      sync.Mutex
	counted map[string]float64
}

// Wait returns once every scrape loop has ended (after the context passed to start is done).
func (s *scrapers) Wait() { s.wg.Wait() }

// note keeps the reconcile totals of a scraped page's controllers.
func (s *scrapers) note(queues []watch.QueueSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range queues {
		if q.HasReconciles && q.Controller != "" {
			if s.counted == nil {
				s.counted = map[string]float64{}
			}
			s.counted[q.Controller] = q.Reconciles.Total()
		}
	}
}

// Counted returns each scraped controller's reconcile total at its last scrape.
func (s *scrapers) Counted() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.counted)
}

// start sets up the client (credentials, TLS), checks a service account's access, and polls each
// URL until ctx ends: pages become ControllerQueue events, a failure streak one Error event. It
// fails only for what the user must fix before anything can work (an unreadable token or CA
// file, a service account the API server will not mint tokens for). Warnings go to warn.
func (m *MetricsOptions) start(ctx context.Context, restCfg *rest.Config, getter genericclioptions.RESTClientGetter, namespace, userAgent string, warn func(string)) (*scrapers, error) {
	s := &scrapers{events: make(chan watch.Event, 64)}
	if !m.enabled() {
		return s, nil
	}
	send := func(ev watch.Event) {
		ev.Time = time.Now()
		select {
		case s.events <- ev:
		case <-ctx.Done():
		}
	}
	var endpoints []endpoint
	for _, u := range m.URLs {
		endpoints = append(endpoints, endpoint{url: u})
	}
	// The namespace of -n or the kubeconfig, also under -A (as kubectl port-forward takes it).
	if ns, _, err := getter.ToRawKubeConfigLoader().Namespace(); err == nil && len(m.from) > 0 {
		namespace = ns
	}
	for i, t := range m.from {
		ep, err := openForward(ctx, restCfg, getter, namespace, t, m.From[i], send)
		if err != nil {
			return nil, fmt.Errorf("--metrics-from %s: %w", m.From[i], err)
		}
		endpoints = append(endpoints, ep)
	}
	if m.CAFile != "" {
		// Read by client-go's transport after this check: a FIFO or a device is refused here.
		if _, err := readCredentialFile("--metrics-ca-file", m.CAFile); err != nil {
			return nil, err
		}
	}
	copts := scrape.ClientOptions{CAFile: m.CAFile, Insecure: m.InsecureSkipTLSVerify, UserAgent: userAgent}
	id, denied, err := m.credentials(ctx, restCfg, endpoints, &copts)
	if err != nil {
		return nil, err
	}
	client, err := scrape.NewClient(copts)
	if err != nil {
		return nil, fmt.Errorf("metrics client: %w", err)
	}
	if m.InsecureSkipTLSVerify {
		warn("Warning: --metrics-insecure-skip-tls-verify: the metrics server's certificate is not checked; its HTTPS connections are insecure")
	}
	for _, ep := range endpoints {
		// Through a port-forward the bytes travel encrypted to the API server and the node.
		if !id.Anonymous && ep.fwd == nil && strings.HasPrefix(ep.url, "http://") {
			warn(fmt.Sprintf("Warning: %s is plain HTTP: the bearer token of %s is sent unencrypted", redact.URL(ep.url), id.Description))
		}
	}
	for _, ep := range endpoints {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			m.poll(ctx, &scrape.Scraper{URL: ep.url, Client: client, Timeout: m.Interval}, ep, id, denied[ep.url], send, s.note)
		}()
	}
	return s, nil
}

// credentials sets up how the scrapes authenticate (a token file, or a service account's minted
// tokens) in copts, and returns who they scrape as. With a service account it also returns,
// per URL, the Error message of an access check that said no (denied).
func (m *MetricsOptions) credentials(ctx context.Context, restCfg *rest.Config, endpoints []endpoint, copts *scrape.ClientOptions) (id scrape.Identity, denied map[string]string, err error) {
	id = scrape.AnonymousIdentity()
	switch {
	case m.TokenFile != "":
		b, err := readCredentialFile("--metrics-token-file", m.TokenFile)
		if err != nil {
			return id, nil, err
		}
		if strings.TrimSpace(string(b)) == "" {
			return id, nil, fmt.Errorf("--metrics-token-file %s is empty", m.TokenFile)
		}
		copts.TokenFile = m.TokenFile
		id = scrape.TokenFileIdentity(m.TokenFile, string(b))
	case m.ServiceAccount != "":
		cs, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			return id, nil, err
		}
		copts.Tokens = scrape.ServiceAccountTokens(ctx, cs.CoreV1(), m.saNamespace, m.saName, scrape.TokenLifetime)
		// The first token now: a missing service account or a forbidden TokenRequest is the
		// user's to fix, said at once rather than on every scrape.
		if _, err := copts.Tokens.Token(); err != nil {
			return id, nil, fmt.Errorf("--metrics-serviceaccount: %w", err)
		}
		id = scrape.ServiceAccountIdentity(m.saNamespace, m.saName)
		denied = map[string]string{}
		for _, ep := range endpoints {
			u := ep.url
			check, err := scrape.CheckServiceAccountAccess(ctx, cs.AuthorizationV1(), m.saNamespace, m.saName, u)
			if err != nil || check.Allowed {
				// Not allowed to ask (or asked and allowed): the scrapes will tell.
				continue
			}
			msg := fmt.Sprintf("%s may not get %s (a SubjectAccessReview says so before the first scrape", id.Description, pathOf(u))
			if check.Reason != "" {
				msg += ": " + check.Reason
			}
			denied[u] = msg + "); grant it with " + scrape.GrantCommand(id, u)
		}
	}
	return id, denied, nil
}

// openForward starts the port-forward of one --metrics-from target and finds out, when the
// target does not say, whether its port speaks TLS.
func openForward(ctx context.Context, restCfg *rest.Config, getter genericclioptions.RESTClientGetter, namespace string, t portforward.Target, flag string, send func(watch.Event)) (endpoint, error) {
	fw := &portforward.Forwarder{Getter: getter, Config: restCfg, Namespace: namespace}
	var ep endpoint
	fw.OnLost = func(err error) {
		send(watch.Event{Type: watch.Error, Verb: "scrape", Reason: "PortForwardLost", Message: "--metrics-from " + flag + ": " + err.Error() + "; reconnecting", URL: ep.url})
	}
	fw.OnRestored = func(pod string) {
		send(watch.Event{Type: watch.Recovered, Verb: "scrape", Message: "--metrics-from " + flag + ": port-forward to pod " + pod + " works again", URL: ep.url})
	}
	fwd, err := fw.Open(ctx, t)
	if err != nil {
		return endpoint{}, err
	}
	scheme := t.Scheme
	if scheme == "" {
		scheme = "http"
		if speaksTLS(ctx, fwd.LocalPort) {
			scheme = "https"
		}
	}
	ep = endpoint{url: fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, fwd.LocalPort, t.Path), from: flag, fwd: fwd}
	return ep, nil
}

// speaksTLS reports whether a TLS handshake with the port gets a TLS answer (whatever the
// certificate: only the protocol is found out here, nothing is sent).
func speaksTLS(ctx context.Context, port int) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // protocol probe only, no data sent
	conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		_, notTLS := errors.AsType[tls.RecordHeaderError](err)
		return !notTLS
	}
	conn.Close()
	return true
}

// poll scrapes one URL until ctx ends. deniedMsg, when set, is said before the first scrape and
// stands for the 403 streak it predicts.
func (m *MetricsOptions) poll(ctx context.Context, sc *scrape.Scraper, ep endpoint, id scrape.Identity, deniedMsg string, send func(watch.Event), note func([]watch.QueueSample)) {
	// The URL as shown and recorded: a password or a token in it is masked.
	u := redact.URL(sc.URL)
	prefix := ""
	if ep.from != "" {
		prefix = "--metrics-from " + ep.from + ": "
	}
	if deniedMsg != "" {
		send(watch.Event{Type: watch.Error, Verb: "scrape", Reason: "Forbidden", Message: prefix + "scrape " + u + ": " + deniedMsg, URL: u})
	}
	tracker := scrape.NewTracker()
	emptyShown := false
	scrape.Poll(ctx, sc, m.Interval, scrape.Handlers{
		Page: func(page scrape.Page) {
			if len(page.Queues) == 0 {
				if !emptyShown {
					send(watch.Event{Type: watch.ControllerQueue, URL: u, Message: prefix + fmt.Sprintf(
						"no workqueue metrics on this page (%d metric families, none named workqueue_*): the scrape works, but is this a controller's /metrics?", page.Families)})
				}
				emptyShown = true
				return
			}
			emptyShown, deniedMsg = false, ""
			note(page.Queues)
			for _, q := range tracker.Next(time.Now(), page.Queues) {
				// Only an https scrape has a certificate to leave unverified.
				q.Insecure = m.InsecureSkipTLSVerify && strings.HasPrefix(sc.URL, "https://")
				if ep.fwd != nil {
					q.From = ep.from + " (pod " + ep.fwd.Pod() + ")"
				}
				send(watch.Event{Type: watch.ControllerQueue, URL: u, Sample: &q})
			}
		},
		Error: func(err error) {
			if deniedMsg != "" && scrape.StatusCode(err) == 403 {
				deniedMsg = "" // said already, before the first scrape
				return
			}
			deniedMsg = ""
			reason, msg := scrape.Explain(err, id, u)
			send(watch.Event{Type: watch.Error, Verb: "scrape", Reason: reason, Message: prefix + msg, URL: u})
		},
		Recovered: func() {
			send(watch.Event{Type: watch.Recovered, Verb: "scrape", Message: prefix + "scrape " + u + " works again", URL: u})
		},
	})
}

func pathOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Path != "" {
		return p.Path
	}
	return "/metrics"
}
