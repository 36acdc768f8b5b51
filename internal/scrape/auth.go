package scrape

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/transport"
	"k8s.io/klog/v2"

	"github.com/kubectl-informer/kubectl-informer/pkg/shell"
)

// ClientOptions say how scrapes verify the server and authenticate. The kubeconfig's own
// credentials are never among them: a metrics URL gets only the token asked for.
type ClientOptions struct {
	// CAFile holds the certificates that may sign the metrics server's certificate (default:
	// the system's roots).
	CAFile string
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// TokenFile holds a bearer token, read again every minute (as client-go reads a kubeconfig's
	// tokenFile), so a rotated file is picked up.
	TokenFile string
	// Tokens mints bearer tokens (ServiceAccountTokens); each is used until its Expiry, and a
	// 401 answer makes the next scrape ask for a new one.
	Tokens oauth2.TokenSource
	// UserAgent of the scrapes.
	UserAgent string
}

// NewClient returns an HTTP client for scraping built with client-go's transport (TLS settings,
// token file rotation, masked Authorization headers in -v logs). It follows redirects only
// within the same host, so a token is never handed to another server.
func NewClient(o ClientOptions) (*http.Client, error) {
	cfg := &transport.Config{
		UserAgent:       o.UserAgent,
		TLS:             transport.TLSConfig{CAFile: o.CAFile, Insecure: o.Insecure},
		BearerTokenFile: o.TokenFile,
	}
	if o.Tokens != nil {
		cfg.Wrap(transport.ResettableTokenSourceWrapTransport(transport.NewCachedTokenSource(o.Tokens)))
	}
	rt, err := transport.New(cfg)
	if err != nil {
		return nil, oneLineError{err}
	}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
				return fmt.Errorf("redirected to %s: not followed (no credentials go to another server)", redactURL(req.URL.Scheme+"://"+req.URL.Host))
			}
			return nil
		},
	}, nil
}

// Identity is who the scrapes are made as, for messages and fixes.
type Identity struct {
	// Description names it: "service account demo/reader", "the token in FILE (user
	// system:serviceaccount:demo:reader)", "no credentials (anonymous)".
	Description string
	// Subject is the `kubectl create clusterrolebinding` flag naming it
	// ("--serviceaccount=demo:reader", "--user=NAME"); empty when unknown.
	Subject string
	// Anonymous is true when no token is sent.
	Anonymous bool
	// ServiceAccount is true for --metrics-serviceaccount (tokens minted by the plugin).
	ServiceAccount bool
}

// AnonymousIdentity is the identity of scrapes without a token.
func AnonymousIdentity() Identity {
	return Identity{Description: "no credentials (anonymous)", Anonymous: true}
}

// ServiceAccountIdentity is the identity of tokens minted for a service account.
func ServiceAccountIdentity(namespace, name string) Identity {
	return Identity{
		Description:    fmt.Sprintf("service account %s/%s", namespace, name),
		Subject:        fmt.Sprintf("--serviceaccount=%s:%s", namespace, name),
		ServiceAccount: true,
	}
}

// TokenFileIdentity names the token in path. A JSON Web Token (every service account token
// is one) names its subject in an unencrypted claim; it is read without verifying anything, for
// messages only. The token itself is never part of the result.
func TokenFileIdentity(path string, token string) Identity {
	id := Identity{Description: "the token in " + path}
	sub := jwtSubject(token)
	if sub == "" {
		return id
	}
	id.Description += " (user " + sub + ")"
	if rest, ok := strings.CutPrefix(sub, "system:serviceaccount:"); ok && strings.Count(rest, ":") == 1 {
		id.Subject = "--serviceaccount=" + rest
	} else {
		id.Subject = "--user=" + sub
	}
	return id
}

// jwtSubject returns the "sub" claim of a JWT, or "" when token is not one. Only printable
// subjects without spaces are returned.
func jwtSubject(token string) string {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(payload, &claims) != nil || len(claims.Sub) > 253 || !isPrintable(claims.Sub) || strings.ContainsRune(claims.Sub, ' ') {
		return ""
	}
	return claims.Sub
}

// TokenLifetime is what ServiceAccountTokens asks for: the shortest the API server allows.
const TokenLifetime = 10 * time.Minute

// renewAt is the share of a token's lifetime after which it is replaced (the kubelet renews
// projected service account tokens at 80% too).
const renewAt = 0.8

// ServiceAccountTokens mints tokens for a service account through the TokenRequest API, as
// `kubectl create token` does, with the caller's credentials. Each token is used for 80% of its
// lifetime, then replaced.
func ServiceAccountTokens(ctx context.Context, client corev1client.ServiceAccountsGetter, namespace, name string, lifetime time.Duration) oauth2.TokenSource {
	return &saTokenSource{ctx: ctx, client: client, namespace: namespace, name: name, lifetime: lifetime, now: time.Now}
}

type saTokenSource struct {
	ctx             context.Context
	client          corev1client.ServiceAccountsGetter
	namespace, name string
	lifetime        time.Duration
	now             func() time.Time
}

func (s *saTokenSource) Token() (*oauth2.Token, error) {
	secs := int64(s.lifetime.Seconds())
	start := s.now()
	// client-go logs response bodies at -v 8 and more, through the context's logger: this
	// response is the token, so this request logs nothing at any -v.
	ctx := klog.NewContext(s.ctx, logr.Discard())
	tr, err := s.client.ServiceAccounts(s.namespace).CreateToken(ctx, s.name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return nil, oneLineError{fmt.Errorf("create a token for service account %s/%s: %w", s.namespace, s.name, err)}
	}
	if tr.Status.Token == "" {
		return nil, fmt.Errorf("create a token for service account %s/%s: the server returned no token", s.namespace, s.name)
	}
	expires := tr.Status.ExpirationTimestamp.Time
	if expires.IsZero() || !expires.After(start) {
		expires = start.Add(s.lifetime)
	}
	return &oauth2.Token{
		AccessToken: tr.Status.Token,
		TokenType:   "Bearer",
		Expiry:      start.Add(time.Duration(float64(expires.Sub(start)) * renewAt)),
	}, nil
}

// AccessCheck is the answer of a SubjectAccessReview.
type AccessCheck struct {
	Allowed bool
	// Reason is the authorizer's explanation, if it gave one.
	Reason string
}

// CheckServiceAccountAccess asks the API server, with a SubjectAccessReview, whether the service
// account may `get` the non-resource path of metricsURL, as a metrics server with delegated
// authorization (kube-controller-manager, controller-runtime's filter) will ask.
func CheckServiceAccountAccess(ctx context.Context, client authorizationv1client.SubjectAccessReviewsGetter, namespace, name, metricsURL string) (AccessCheck, error) {
	path := nonResourcePath(metricsURL)
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:                  fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name),
		Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"},
	}}
	got, err := client.SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return AccessCheck{}, oneLineError{err}
	}
	return AccessCheck{Allowed: got.Status.Allowed && !got.Status.Denied, Reason: oneLine(got.Status.Reason)}, nil
}

func nonResourcePath(metricsURL string) string {
	u, err := url.Parse(metricsURL)
	if err != nil || u.Path == "" {
		return "/metrics"
	}
	return u.Path
}

// GrantCommand is the fix for a 403: a ClusterRole allowed to get the URL's path and a binding
// for id, as kubectl commands on one line.
func GrantCommand(id Identity, metricsURL string) string {
	subject := id.Subject
	if subject == "" {
		subject = "--user=USER"
	}
	bindingName := "metrics-reader"
	if _, who, ok := strings.Cut(subject, "="); ok {
		bindingName += "-" + strings.NewReplacer(":", "-", "/", "-").Replace(who)
	}
	return fmt.Sprintf("kubectl create clusterrole metrics-reader --verb=get --non-resource-url=%s && kubectl create clusterrolebinding %s --clusterrole=metrics-reader %s",
		shell.Quote(nonResourcePath(metricsURL)), shell.Quote(bindingName), shell.Quote(subject))
}

// Explain turns a failed scrape into an Error line's reason and message, naming the identity
// used and what to do for the failures a user can fix: 401, 403 and certificates.
func Explain(err error, id Identity, metricsURL string) (reason, message string) {
	msg := err.Error()
	switch code := StatusCode(err); {
	case code == http.StatusUnauthorized && id.Anonymous:
		return "Unauthorized", msg + "; the metrics server wants a bearer token: pass --metrics-serviceaccount NAMESPACE/NAME (a token is minted for it) or --metrics-token-file FILE"
	case code == http.StatusUnauthorized:
		return "Unauthorized", fmt.Sprintf("%s; %s was not accepted (expired, or not issued by the API server the metrics server asks)", msg, id.Description)
	case code == http.StatusForbidden && id.Anonymous:
		return "Forbidden", msg + "; anonymous scrapes are not allowed: pass --metrics-serviceaccount NAMESPACE/NAME or --metrics-token-file FILE for an identity allowed to get " + nonResourcePath(metricsURL) + " (" + GrantCommand(id, metricsURL) + ")"
	case code == http.StatusForbidden:
		return "Forbidden", fmt.Sprintf("%s; %s may not get %s: grant it with %s", msg, id.Description, nonResourcePath(metricsURL), GrantCommand(id, metricsURL))
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return "ScrapeFailed", msg + "; pass --metrics-ca-file FILE with the CA that signed the metrics server's certificate, or --metrics-insecure-skip-tls-verify"
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return "ScrapeFailed", msg + "; the certificate is not for this host: --metrics-insecure-skip-tls-verify skips the check"
	}
	return "ScrapeFailed", msg
}
