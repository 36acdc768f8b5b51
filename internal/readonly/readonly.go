// Package readonly guarantees that kubectl informer only reads from the cluster it debugs:
// every request made with a rest.Config it wraps goes through one check, which lets GET (get,
// list, watch, discovery, pod logs) pass and refuses anything else unless the running command
// asked for it by name:
//
//   - TokenRequest (POST .../serviceaccounts/NAME/token), for --metrics-serviceaccount;
//   - SubjectAccessReview (POST /apis/authorization.k8s.io/v1/subjectaccessreviews), for the
//     same flag's access check;
//   - a pod's portforward subresource (POST, the SPDY upgrade), for --metrics-from;
//   - writes of objects, for the one command that makes them (reenact), which must call
//     Permit(Allow{Writes: true}) itself, before its first request.
//
// A refused request never leaves the process: it fails with an error saying what was refused.
package readonly

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// Allow names the writes a command may make besides reads.
type Allow struct {
	TokenRequest        bool // create a service account's token (--metrics-serviceaccount)
	SubjectAccessReview bool // ask whether a service account may get /metrics (--metrics-serviceaccount)
	PortForward         bool // open a port-forward to a pod (--metrics-from)
	// Writes lets any request through: only for a command whose purpose is to write objects
	// (reenact), named as such in its help.
	Writes bool
}

var allowed atomic.Pointer[Allow]

// Permit adds to what the running command may write; nothing it permitted before is taken
// back (reenact's --follow runs a watch, whose own Permit must not revoke reenact's writes). A
// command calls it from its flags, before its first request.
func Permit(a Allow) {
	for {
		old := allowed.Load()
		merged := a
		if old != nil {
			merged = Allow{
				TokenRequest:        old.TokenRequest || a.TokenRequest,
				SubjectAccessReview: old.SubjectAccessReview || a.SubjectAccessReview,
				PortForward:         old.PortForward || a.PortForward,
				Writes:              old.Writes || a.Writes,
			}
		}
		if allowed.CompareAndSwap(old, &merged) {
			return
		}
	}
}

// Permitted returns what the running command may write.
func Permitted() Allow {
	if a := allowed.Load(); a != nil {
		return *a
	}
	return Allow{}
}

// Wrap makes every request of cfg (and of every client built from it) go through the check. It
// returns cfg, to be used as genericclioptions.ConfigFlags.WrapConfigFn.
func Wrap(cfg *rest.Config) *rest.Config {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &transport{next: rt} })
	return cfg
}

type transport struct{ next http.RoundTripper }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := Check(req.Method, req.URL.Path, Permitted()); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}

// Check is the one decision: nil when a request of method to path is allowed under a.
func Check(method, path string, a Allow) error {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil // get, list, watch, discovery, a port-forward's WebSocket upgrade
	}
	if a.Writes {
		return nil
	}
	if method == http.MethodPost {
		parts := strings.Split(strings.Trim(path, "/"), "/")
		n := len(parts)
		switch {
		case a.TokenRequest && n == 7 && parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "serviceaccounts" && parts[6] == "token":
			return nil
		case a.SubjectAccessReview && path == "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			return nil
		case a.PortForward && n == 7 && parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "pods" && parts[6] == "portforward":
			return nil
		}
	}
	return fmt.Errorf("kubectl informer is read-only: refused %s %s (it sends only get, list and watch requests, and the token, access review and port-forward requests of --metrics-serviceaccount and --metrics-from when given)", method, path)
}
