package scrape

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const metricsPage = "# TYPE workqueue_adds_total counter\nworkqueue_adds_total{name=\"deployment\"} 3\n"

// tokenServer is an HTTPS metrics server that wants a bearer token from allowed and records
// the tokens it saw.
func tokenServer(t *testing.T, allowed func(token string) bool) (*httptest.Server, *[]string, *sync.Mutex) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		seen = append(seen, tok)
		mu.Unlock()
		switch {
		case !ok:
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		case !allowed(tok):
			http.Error(w, `Authorization denied for user "system:serviceaccount:mon:reader"`, http.StatusForbidden)
		default:
			_, _ = w.Write([]byte(metricsPage))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen, &mu
}

func caFileOf(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.crt")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestClientTLSAndTokenFile(t *testing.T) {
	const token = "s3cret-token-value"
	srv, seen, mu := tokenServer(t, func(tok string) bool { return tok == token })
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name    string
		opts    ClientOptions
		wantErr string
	}{
		{name: "unknown authority", opts: ClientOptions{TokenFile: tokenFile}, wantErr: "certificate signed by unknown authority"},
		{name: "CA file", opts: ClientOptions{CAFile: caFileOf(t, srv), TokenFile: tokenFile}},
		{name: "insecure", opts: ClientOptions{Insecure: true, TokenFile: tokenFile}},
		{name: "no token", opts: ClientOptions{Insecure: true}, wantErr: "unexpected status 401 Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, err := NewClient(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := (&Scraper{URL: srv.URL + "/metrics", Client: client}).Scrape(ctx)
			if tt.wantErr != "" {
				checkScrapeError(t, err, srv.URL+"/metrics", tt.wantErr)
				if strings.Contains(err.Error(), token) {
					t.Errorf("the token is in the error: %v", err)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0].Adds != 3 {
				t.Fatalf("Scrape = %v, %v", got, err)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*seen) == 0 {
		t.Fatal("the server saw no request")
	}
}

func TestNewClientErrors(t *testing.T) {
	if _, err := NewClient(ClientOptions{TokenFile: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing token file is not an error")
	}
	bad := filepath.Join(t.TempDir(), "ca.crt")
	_ = os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if _, err := NewClient(ClientOptions{CAFile: bad}); err == nil {
		t.Error("a CA file without certificates is not an error")
	}
}

// A token is never handed to another host by a redirect.
func TestClientRefusesRedirectToAnotherHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host was asked, Authorization %q", r.Header.Get("Authorization"))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/metrics", http.StatusFound)
	}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	_ = os.WriteFile(tokenFile, []byte("tok"), 0o600)
	client, err := NewClient(ClientOptions{TokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Scraper{URL: srv.URL + "/metrics", Client: client}).Scrape(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Errorf("err = %v, want a refused redirect", err)
	}
}

// fakeTokens is a clientset whose TokenRequests return numbered tokens living lifetime.
func fakeTokens(lifetime time.Duration, fail error) (*fake.Clientset, *int) {
	cs := fake.NewClientset()
	n := new(int)
	var mu sync.Mutex
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		if fail != nil {
			return true, nil, fail
		}
		mu.Lock()
		defer mu.Unlock()
		*n++
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		tr.Status.Token = "minted-" + strings.Repeat("x", *n)
		tr.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(lifetime))
		return true, tr, nil
	})
	return cs, n
}

// Minted tokens are renewed before they expire: at 80% of their life.
func TestServiceAccountTokensRenewed(t *testing.T) {
	cs, minted := fakeTokens(time.Second, nil)
	ts := ServiceAccountTokens(context.Background(), cs.CoreV1(), "mon", "reader", time.Second)
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if life := time.Until(tok.Expiry); life > 850*time.Millisecond || life < 600*time.Millisecond {
		t.Errorf("token used for %s of its 1s life, want ~800ms", life)
	}
	srv, seen, mu := tokenServer(t, func(tok string) bool { return strings.HasPrefix(tok, "minted-") })
	client, err := NewClient(ClientOptions{Insecure: true, Tokens: ts})
	if err != nil {
		t.Fatal(err)
	}
	s := &Scraper{URL: srv.URL, Client: client}
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if _, err := s.Scrape(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	distinct := map[string]bool{}
	for _, tok := range *seen {
		distinct[tok] = true
	}
	if len(distinct) < 3 || *minted < 3 {
		t.Errorf("%d tokens used (%d minted) over 2.5s of 1s tokens, want renewals", len(distinct), *minted)
	}
}

func TestServiceAccountTokensError(t *testing.T) {
	cs, _ := fakeTokens(time.Minute, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, "reader"))
	_, err := ServiceAccountTokens(context.Background(), cs.CoreV1(), "mon", "reader", TokenLifetime).Token()
	if err == nil || err.Error() != `create a token for service account mon/reader: serviceaccounts "reader" not found` {
		t.Errorf("err = %v", err)
	}
}

func TestCheckServiceAccountAccess(t *testing.T) {
	cs := fake.NewClientset()
	var got *authorizationv1.SubjectAccessReview
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got = a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		r := got.DeepCopy()
		r.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: false, Reason: "no RBAC policy matched"}
		return true, r, nil
	})
	check, err := CheckServiceAccountAccess(context.Background(), cs.AuthorizationV1(), "mon", "reader", "https://127.0.0.1:10257/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if check.Allowed || check.Reason != "no RBAC policy matched" {
		t.Errorf("check = %+v", check)
	}
	spec := got.Spec
	if spec.User != "system:serviceaccount:mon:reader" || spec.NonResourceAttributes == nil ||
		spec.NonResourceAttributes.Path != "/metrics" || spec.NonResourceAttributes.Verb != "get" ||
		strings.Join(spec.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:mon,system:authenticated" {
		t.Errorf("SubjectAccessReview spec = %+v", spec)
	}
}

func jwtWith(payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(payload)) + ".c2lnbmF0dXJl"
}

func TestIdentityAndExplain(t *testing.T) {
	const url = "https://127.0.0.1:10257/metrics"
	forbidden := &scrapeError{url: url, err: &StatusError{Code: 403, msg: "unexpected status 403 Forbidden: forbidden"}}
	unauthorized := &scrapeError{url: url, err: &StatusError{Code: 401, msg: "unexpected status 401 Unauthorized"}}
	saToken := jwtWith(`{"sub":"system:serviceaccount:mon:reader","iss":"x"}`)
	tests := []struct {
		name       string
		err        error
		id         Identity
		wantReason string
		want       []string
	}{
		{"403 for a service account", forbidden, ServiceAccountIdentity("mon", "reader"), "Forbidden",
			[]string{"service account mon/reader may not get /metrics", "kubectl create clusterrole metrics-reader --verb=get --non-resource-url=/metrics && kubectl create clusterrolebinding metrics-reader-mon-reader --clusterrole=metrics-reader --serviceaccount=mon:reader"}},
		{"403 for a token file of a service account", forbidden, TokenFileIdentity("/tmp/t", saToken), "Forbidden",
			[]string{"the token in /tmp/t (user system:serviceaccount:mon:reader) may not get /metrics", "--serviceaccount=mon:reader"}},
		{"403 for a token file of a user", forbidden, TokenFileIdentity("/tmp/t", jwtWith(`{"sub":"alice"}`)), "Forbidden",
			[]string{"(user alice)", "--user=alice"}},
		{"403 for an opaque token", forbidden, TokenFileIdentity("/tmp/t", "opaque"), "Forbidden",
			[]string{"the token in /tmp/t may not get /metrics", "--user=USER"}},
		{"403 anonymous", forbidden, AnonymousIdentity(), "Forbidden", []string{"anonymous scrapes are not allowed: pass --metrics-serviceaccount"}},
		{"401 anonymous", unauthorized, AnonymousIdentity(), "Unauthorized", []string{"wants a bearer token: pass --metrics-serviceaccount NAMESPACE/NAME"}},
		{"401 with a token", unauthorized, ServiceAccountIdentity("mon", "reader"), "Unauthorized", []string{"service account mon/reader was not accepted"}},
		{"other", &scrapeError{url: url, err: errors.New("connection refused")}, AnonymousIdentity(), "ScrapeFailed", []string{"connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, msg := Explain(tt.err, tt.id, url)
			if reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", reason, tt.wantReason)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, saToken) || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("message has the token or several lines: %q", msg)
			}
		})
	}
}
