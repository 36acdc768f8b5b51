package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// A controller's /metrics (controller-runtime's text format, histograms included) shows up as
// ControllerQueue lines next to the informer's own events; an unreachable URL is said once per
// failure streak and the watch goes on; a queue that does not change gets no new line, one that
// moves steadily its first line, one with its rate, then a line a minute; a page without workqueue metrics says so once; the summary counts
// scrape errors apart from the informer's.
func TestMetricsScrape(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(root + "/internal/scrape/testdata/workqueue.txt")
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	up.Store(true)
	var ticks atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
		// One queue that moves on every scrape.
		_, _ = fmt.Fprintf(w, "workqueue_adds_total{controller=\"ticking\",name=\"ticking\"} %d\n", 10*ticks.Add(1))
	}))
	defer srv.Close()
	noQueues := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("# TYPE go_goroutines gauge\ngo_goroutines 12\n"))
	}))
	defer noQueues.Close()
	dead := "http://127.0.0.1:" + closedPort(t) + "/metrics"

	ctx := context.Background()
	ns := newNamespace(t, cluster)
	began := time.Now() // a steady queue's lines are counted against it
	p := cluster.RunPlugin(t, ctx, "watch", "cm", "-n", ns, "-o", "json",
		"--metrics-url", srv.URL+"/metrics", "--metrics-url", dead, "--metrics-url", noQueues.URL+"/metrics", "--metrics-interval", "100ms")
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
	// The ticking queue moves steadily on every scrape (as requeue timers move a controller's
	// counters): its first line, then one with its rate, then none within the minute.
	ticking := func(m map[string]any) bool { return m["type"] == "ControllerQueue" && m["controller"] == "ticking" }
	from := ticks.Load()
	// 15 scrapes later (the server counts them), the dead URL was reported exactly once, the
	// unchanging queues had one line each, the steady one two.
	for deadline := time.Now().Add(await); ticks.Load() < from+15; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the metrics server was scraped %d times in %s, want 15", ticks.Load()-from, await)
		}
	}
	var deadErrors, cronjobLines, emptyLines, tickingLines int
	for _, m := range p.JSON() {
		msg, _ := m["message"].(string)
		switch {
		case m["verb"] == "scrape" && strings.Contains(msg, dead):
			deadErrors++
		case m["type"] == "ControllerQueue" && m["controller"] == "cronjob":
			cronjobLines++
		case ticking(m):
			if tickingLines++; tickingLines == 2 {
				if rate, _ := m["addsPerSecond"].(float64); rate <= 0 {
					t.Errorf("a moving queue's second line without a rate: %v", m)
				}
			}
		case m["type"] == "ControllerQueue" && m["url"] == noQueues.URL+"/metrics":
			emptyLines++
			if !strings.Contains(msg, "no workqueue metrics on this page (1 metric families") {
				t.Errorf("page without queues: %v", m)
			}
		}
	}
	if deadErrors != 1 {
		t.Errorf("the unreachable URL was reported %d times, want once per failure streak", deadErrors)
	}
	if cronjobLines != 1 {
		t.Errorf("the unchanging cronjob queue had %d lines, want 1 (repeats folded)", cronjobLines)
	}
	if elapsed := time.Since(began); elapsed < time.Minute && tickingLines != 2 {
		t.Errorf("the steadily moving queue had %d lines in %s, want 2 (its first, its rate; then a line a minute)", tickingLines, elapsed)
	}
	if emptyLines != 1 {
		t.Errorf("the page without workqueue metrics was reported %d times, want once", emptyLines)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = p.Wait()
	for _, want := range []string{"0 watch closes, 0 errors,", "from 3 URLs, 1 scrape errors"} {
		if !strings.Contains(p.Stderr(), want) {
			t.Errorf("summary lacks %q: %s", want, p.Stderr())
		}
	}
}
