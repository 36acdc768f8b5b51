package readonly

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

const (
	token  = "/api/v1/namespaces/demo/serviceaccounts/scraper/token"
	sar    = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	pf     = "/api/v1/namespaces/demo/pods/web-0/portforward"
	create = "/api/v1/namespaces/demo/configmaps"
)

// Issue 38, item 9: only reads pass, and each write only when the flag that needs it was given.
func TestCheck(t *testing.T) {
	all := Allow{TokenRequest: true, SubjectAccessReview: true, PortForward: true}
	tests := []struct {
		method, path string
		allow        Allow
		ok           bool
	}{
		{"GET", "/api/v1/namespaces/demo/configmaps?watch=true", Allow{}, true},
		{"GET", "/apis", Allow{}, true},
		// --controller-logs-from: a pod's log, followed, is a GET with no permit.
		{"GET", "/api/v1/namespaces/demo/pods/web-0/log?container=manager&follow=true&timestamps=true", Allow{}, true},
		{"POST", "/api/v1/namespaces/demo/pods/web-0/log", all, false},
		{"POST", token, Allow{}, false},
		{"POST", token, Allow{TokenRequest: true}, true},
		{"POST", sar, Allow{TokenRequest: true}, false},
		{"POST", sar, Allow{SubjectAccessReview: true}, true},
		{"POST", pf, Allow{}, false},
		{"POST", pf, Allow{PortForward: true}, true},
		{"POST", create, all, false},
		{"PUT", create + "/x", all, false},
		{"PATCH", create + "/x", all, false},
		{"DELETE", create + "/x", all, false},
		{"POST", "/api/v1/namespaces/demo/serviceaccounts/scraper/token/x", all, false},
		{"POST", "/api/v1/namespaces/demo/secrets/scraper/token", all, false},
		{"DELETE", create + "/x", Allow{Writes: true}, true},
		{"POST", create, Allow{Writes: true}, true},
	}
	for _, tt := range tests {
		err := Check(tt.method, tt.path, tt.allow)
		if (err == nil) != tt.ok {
			t.Errorf("%s %s with %+v: %v, want allowed=%v", tt.method, tt.path, tt.allow, err, tt.ok)
		}
	}
}

// A refused request never reaches the server; an allowed one does.
func TestWrapRefusesBeforeTheServer(t *testing.T) {
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer srv.Close()
	defer allowed.Store(nil)
	allowed.Store(nil)
	cfg := Wrap(&rest.Config{Host: srv.URL})
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	do := func(method, path string) error {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := do("DELETE", create+"/x"); err == nil || !strings.Contains(err.Error(), "kubectl informer is read-only: refused DELETE") {
		t.Errorf("DELETE: %v", err)
	}
	if err := do("POST", token); err == nil {
		t.Error("a TokenRequest passed without --metrics-serviceaccount")
	}
	if reached.Load() != 0 {
		t.Errorf("%d refused requests reached the server", reached.Load())
	}
	Permit(Allow{TokenRequest: true})
	if err := do("POST", token); err != nil {
		t.Errorf("a permitted TokenRequest: %v", err)
	}
	if err := do("GET", create); err != nil || reached.Load() != 2 {
		t.Errorf("GET: %v, %d requests reached the server", err, reached.Load())
	}
}

// A later Permit (a watch inside reenact --follow) adds to what was permitted, never takes back.
func TestPermitAdds(t *testing.T) {
	defer allowed.Store(nil)
	allowed.Store(nil)
	Permit(Allow{Writes: true})
	Permit(Allow{TokenRequest: true})
	if p := Permitted(); !p.Writes || !p.TokenRequest || p.PortForward {
		t.Errorf("permitted %+v", p)
	}
}
