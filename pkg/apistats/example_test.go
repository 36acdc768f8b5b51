package apistats_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// server stands in for the API server: it answers a LIST with a page of two pods and refuses a
// WATCH with 429 Too Many Requests, as API Priority and Fairness does when the informer's flow
// is over its share.
type server struct{}

func (server) RoundTrip(req *http.Request) (*http.Response, error) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader(`{"kind":"PodList","items":[{},{}]}`))}
	if req.URL.Query().Get("watch") == "true" {
		resp.StatusCode = http.StatusTooManyRequests
		resp.Header.Set("Retry-After", "3")
		resp.Body = io.NopCloser(strings.NewReader(`{"kind":"Status","code":429}`))
	}
	return resp, nil
}

// What the informers cost the API server, resource by resource: the Recorder sits in the
// client's transport (rest.Config.WrapTransport), and each request is tagged with the resource
// and verb it is for (the tap of pkg/watch tags the informers'). Its Snapshot is what an
// ApiStats line says.
func Example() {
	rec := apistats.NewRecorder()
	client := &http.Client{Transport: rec.Wrap(server{}, true)}
	for _, r := range []struct{ verb, url string }{
		{apistats.VerbList, "https://apiserver/api/v1/pods?limit=500"},
		{apistats.VerbWatch, "https://apiserver/api/v1/pods?watch=true"},
	} {
		ctx := apistats.WithResource(context.Background(), "pods", r.verb)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s, _ := rec.Snapshot("pods")
	for _, r := range s.Requests {
		fmt.Printf("%s %d: %d\n", r.Verb, r.Code, r.Count)
	}
	fmt.Printf("list pages %d, bytes received %d, throttled %d (retry after %s)\n",
		s.ListPages, s.BytesReceived, s.Throttled, s.RetryAfter)
	// Output:
	// LIST 200: 1
	// WATCH 429: 1
	// list pages 1, bytes received 62, throttled 1 (retry after 3s)
}
