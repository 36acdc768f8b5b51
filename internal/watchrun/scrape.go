package watchrun

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

	"github.com/kubectl-informer/kubectl-informer/internal/input"
	"github.com/kubectl-informer/kubectl-informer/internal/portforward"
	"github.com/kubectl-informer/kubectl-informer/internal/redact"
	"github.com/kubectl-informer/kubectl-informer/internal/scrape"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Metrics are the scrapes of running controllers' /metrics into ControllerQueue lines: where,
// how often, and as whom.
type Metrics struct {
	// URLs are --metrics-url's; From --metrics-from's, as given and parsed (FromTargets).
	URLs        []string
	From        []string
	FromTargets []portforward.Target
	// Interval is how often each is scraped.
	Interval time.Duration
	// CAFile, InsecureSkipTLSVerify and TokenFile are --metrics-ca-file's and so on.
	CAFile                string
	InsecureSkipTLSVerify bool
	TokenFile             string
	// ServiceAccountNamespace and ServiceAccountName: --metrics-serviceaccount, parsed.
	ServiceAccountNamespace, ServiceAccountName string
}

func (m *Metrics) enabled() bool { return len(m.URLs) > 0 || len(m.From) > 0 }

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
func (m *Metrics) start(ctx context.Context, restCfg *rest.Config, getter genericclioptions.RESTClientGetter, namespace, userAgent string, warn func(string)) (*scrapers, error) {
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
	if ns, _, err := getter.ToRawKubeConfigLoader().Namespace(); err == nil && len(m.FromTargets) > 0 {
		namespace = ns
	}
	for i, t := range m.FromTargets {
		ep, err := openForward(ctx, restCfg, getter, namespace, t, m.From[i], send)
		if err != nil {
			return nil, fmt.Errorf("--metrics-from %s: %w", m.From[i], err)
		}
		endpoints = append(endpoints, ep)
	}
	if m.CAFile != "" {
		// Read by client-go's transport after this check: a FIFO or a device is refused here.
		if _, err := input.ReadCredentialFile("--metrics-ca-file", m.CAFile); err != nil {
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
func (m *Metrics) credentials(ctx context.Context, restCfg *rest.Config, endpoints []endpoint, copts *scrape.ClientOptions) (id scrape.Identity, denied map[string]string, err error) {
	id = scrape.AnonymousIdentity()
	switch {
	case m.TokenFile != "":
		b, err := input.ReadCredentialFile("--metrics-token-file", m.TokenFile)
		if err != nil {
			return id, nil, err
		}
		if strings.TrimSpace(string(b)) == "" {
			return id, nil, fmt.Errorf("--metrics-token-file %s is empty", m.TokenFile)
		}
		copts.TokenFile = m.TokenFile
		id = scrape.TokenFileIdentity(m.TokenFile, string(b))
	case m.ServiceAccountName != "":
		cs, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			return id, nil, err
		}
		copts.Tokens = scrape.ServiceAccountTokens(ctx, cs.CoreV1(), m.ServiceAccountNamespace, m.ServiceAccountName, scrape.TokenLifetime)
		// The first token now: a missing service account or a forbidden TokenRequest is the
		// user's to fix, said at once rather than on every scrape.
		if _, err := copts.Tokens.Token(); err != nil {
			return id, nil, fmt.Errorf("--metrics-serviceaccount: %w", err)
		}
		id = scrape.ServiceAccountIdentity(m.ServiceAccountNamespace, m.ServiceAccountName)
		denied = map[string]string{}
		for _, ep := range endpoints {
			u := ep.url
			check, err := scrape.CheckServiceAccountAccess(ctx, cs.AuthorizationV1(), m.ServiceAccountNamespace, m.ServiceAccountName, u)
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
		send(watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Reason: "PortForwardLost", Message: "--metrics-from " + flag + ": " + err.Error() + "; reconnecting"}, Scrape: watch.ScrapeInfo{URL: ep.url}})
	}
	fw.OnRestored = func(pod string) {
		send(watch.Event{Type: watch.Recovered, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Message: "--metrics-from " + flag + ": port-forward to pod " + pod + " works again"}, Scrape: watch.ScrapeInfo{URL: ep.url}})
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
func (m *Metrics) poll(ctx context.Context, sc *scrape.Scraper, ep endpoint, id scrape.Identity, deniedMsg string, send func(watch.Event), note func([]watch.QueueSample)) {
	// The URL as shown and recorded: a password or a token in it is masked.
	u := redact.URL(sc.URL)
	prefix := ""
	if ep.from != "" {
		prefix = "--metrics-from " + ep.from + ": "
	}
	if deniedMsg != "" {
		send(watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Reason: "Forbidden", Message: prefix + "scrape " + u + ": " + deniedMsg}, Scrape: watch.ScrapeInfo{URL: u}})
	}
	tracker := scrape.NewTracker()
	emptyShown := false
	scrape.Poll(ctx, sc, m.Interval, scrape.Handlers{
		Page: func(page scrape.Page) {
			if len(page.Queues) == 0 {
				if !emptyShown {
					send(watch.Event{
						Type:   watch.ControllerQueue,
						Scrape: watch.ScrapeInfo{URL: u},
						Lifecycle: watch.LifecycleInfo{Message: prefix + fmt.Sprintf(
							"no workqueue metrics on this page (%d metric families, none named workqueue_*): the scrape works, but is this a controller's /metrics?", page.Families)},
					})
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
				send(watch.Event{Type: watch.ControllerQueue, Scrape: watch.ScrapeInfo{URL: u, Sample: &q}})
			}
		},
		Error: func(err error) {
			if deniedMsg != "" && scrape.StatusCode(err) == 403 {
				deniedMsg = "" // said already, before the first scrape
				return
			}
			deniedMsg = ""
			reason, msg := scrape.Explain(err, id, u)
			send(watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Reason: reason, Message: prefix + msg}, Scrape: watch.ScrapeInfo{URL: u}})
		},
		Recovered: func() {
			send(watch.Event{Type: watch.Recovered, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Message: prefix + "scrape " + u + " works again"}, Scrape: watch.ScrapeInfo{URL: u}})
		},
	})
}

func pathOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Path != "" {
		return p.Path
	}
	return "/metrics"
}
