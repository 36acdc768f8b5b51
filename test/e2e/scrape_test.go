package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// A controller's /metrics (controller-runtime's text format, histograms included) shows up as
// ControllerQueue lines next to the informer's own events; an unreachable URL is said once per
// failure streak and the watch goes on.
func TestMetricsScrape(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(root + "/pkg/scrape/testdata/workqueue.txt")
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	up.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	dead := "http://127.0.0.1:" + closedPort(t) + "/metrics"

	ctx := context.Background()
	ns := newNamespace(t, cluster)
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json",
		"--metrics-url", srv.URL+"/metrics", "--metrics-url", dead, "--metrics-interval", "100ms")
	q := p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "ControllerQueue" && m["controller"] == "deployment"
	})
	wantField(t, q, "name", "deployment")
	wantField(t, q, "depth", float64(7)) // two priority series, summed
	if _, ok := q["queueP99Seconds"].(float64); !ok {
		t.Errorf("no queue latency quantile: %v", q)
	}
	for _, f := range []string{"adds", "retries", "unfinishedSeconds", "longestRunningSeconds"} {
		if _, ok := q[f].(float64); !ok {
			t.Errorf("%s is not a number: %v", f, q)
		}
	}
	// The watch goes on while one URL fails.
	createConfigMaps(t, cluster.Clientset, ns, "after")
	p.AwaitJSON(t, await, is("Added", "after"))
	// Several scrape rounds later, the dead URL was reported exactly once.
	for range 3 {
		p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "ControllerQueue" && m["controller"] == "cronjob" })
	}
	var deadErrors int
	for _, l := range p.All() {
		if strings.Contains(string(l), `"verb":"scrape"`) && strings.Contains(string(l), "127.0.0.1") && !strings.Contains(string(l), srv.URL) {
			deadErrors++
		}
	}
	if deadErrors != 1 {
		t.Errorf("the unreachable URL was reported %d times, want once per failure streak", deadErrors)
	}
}
