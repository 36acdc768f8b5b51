package watchrun

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/scrape"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// B2: a password or a token in a --metrics-url is masked in every line the scrape makes (the
// ControllerQueue line's url, an Error's message), so in the recording and the report too.
func TestPollShowsNoURLCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/err" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, `workqueue_depth{name="q"} 3`)
		fmt.Fprintln(w, `workqueue_adds_total{name="q"} 10`)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	m := &Metrics{Interval: time.Hour}
	m.InsecureSkipTLSVerify = true // L4: no certificate to leave unverified over http
	for _, u := range []string{
		"http://scrapeuser:PASSWORD123@" + host + "/ok",
		"http://scrapeuser:PASSWORD123@" + host + "/err",
		"http://" + host + "/ok?access_token=QUERYSECRET",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		events := make(chan watch.Event, 4)
		go m.poll(ctx, &scrape.Scraper{URL: u}, endpoint{url: u}, scrape.AnonymousIdentity(), "", func(ev watch.Event) { events <- ev }, func([]watch.QueueSample) {})
		ev := <-events
		cancel()
		if ev.Type != watch.ControllerQueue && ev.Type != watch.Error {
			t.Errorf("%s: got a %s event", u, ev.Type)
		}
		shown := fmt.Sprintf("%+v %+v", ev, ev.Scrape.Sample)
		if strings.Contains(shown, "PASSWORD123") || strings.Contains(shown, "QUERYSECRET") {
			t.Errorf("%s: a credential is in the event: %s", u, shown)
		}
		if ev.Scrape.Sample != nil && ev.Scrape.Sample.Insecure {
			t.Errorf("%s: an http:// scrape is marked as certificate not verified", u)
		}
		if !strings.Contains(ev.Scrape.URL, host) {
			t.Errorf("%s: url %q does not name the server", u, ev.Scrape.URL)
		}
	}
}
