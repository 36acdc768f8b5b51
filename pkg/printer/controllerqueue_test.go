package printer

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// controllerRuntimeQueue is a controller-runtime queue with everything a scrape can add: reconcile
// counts by result, workers, reconcile time, rates, folded scrapes, an unverified certificate.
func controllerRuntimeQueue() watch.Event {
	return watch.Event{
		Type: watch.ControllerQueue,
		Time: t0.Add(2 * time.Second),
		Scrape: watch.ScrapeInfo{URL: "https://127.0.0.1:8443/metrics", Sample: &watch.QueueSample{
			Name: "widget", Controller: "widget", Depth: 1, Adds: 40, Retries: 12,
			HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 20, Error: 12, Requeue: 1, RequeueAfter: 2},
			ReconcileErrors: 12, TerminalReconcileErrors: 1,
			HasWorkers: true, ActiveWorkers: 1, MaxConcurrentReconciles: 2,
			HasReconcileTime: true, ReconcileP50: 0.004, ReconcileP99: 0.25,
			HasRates: true, AddsPerSecond: 2.5, RetriesPerSecond: 1, ReconcilesPerSecond: 2, ReconcileErrorsPerSecond: 1,
			Folded: 3, Steady: 11, Insecure: true,
		}},
	}
}

func TestControllerQueueHuman(t *testing.T) {
	tests := []struct {
		name string
		ev   watch.Event
		want string
	}{
		{
			name: "kube-controller-manager: name only, no reconcile metrics",
			ev: watch.Event{
				Type: watch.ControllerQueue,
				Time: t0,
				Scrape: watch.ScrapeInfo{URL: "https://127.0.0.1:10257/metrics", Sample: &watch.QueueSample{
					Name: "deployment", Depth: 0, Adds: 12, HasRates: true, AddsPerSecond: 0.4}},
			},
			want: "ControllerQueue deployment  depth=0 adds=12 (+0.4/s) retries=0  (https://127.0.0.1:10257/metrics)",
		},
		{
			name: "controller-runtime: reconciles, workers, rates, folded, insecure",
			ev:   controllerRuntimeQueue(),
			want: "ControllerQueue widget  depth=1 adds=40 (+2.5/s) retries=12 (+1/s) reconciles=35 (+2/s) (success=20 error=12 requeue=1 requeue_after=2) errors=12 terminal=1 workers=1/2 reconcile p50=4ms p99=250ms  (https://127.0.0.1:8443/metrics; certificate not verified; unchanged for 3 scrapes before; 11 scrapes before moved only steadily: a line a minute unless depth, adds or failures change)",
		},
		{
			name: "a page without workqueue metrics",
			ev:   watch.Event{Type: watch.ControllerQueue, Time: t0, Scrape: watch.ScrapeInfo{URL: "http://127.0.0.1:9090/metrics"}, Lifecycle: watch.LifecycleInfo{Message: "no workqueue metrics on this page (3 metric families, none named workqueue_*)"}},
			want: "ControllerQueue no workqueue metrics on this page (3 metric families, none named workqueue_*)  (http://127.0.0.1:9090/metrics)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, Options{Timestamps: "none", NoHeaders: true}, []watch.Event{tt.ev})
			if diff := cmp.Diff(tt.want+"\n", out); diff != "" {
				t.Errorf("line mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllerQueueJSON(t *testing.T) {
	lines := encodeLines(t, Options{Output: "json"}, []watch.Event{controllerRuntimeQueue()})
	var got map[string]any
	if err := json.Unmarshal(lines[0], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"reconciles":              map[string]any{"success": 20.0, "error": 12.0, "requeue": 1.0, "requeue_after": 2.0},
		"reconcileErrors":         12.0,
		"terminalReconcileErrors": 1.0,
		"activeWorkers":           1.0,
		"maxConcurrentReconciles": 2.0,
		"reconcileP50Seconds":     0.004,
		"addsPerSecond":           2.5,
		"reconcilesPerSecond":     2.0,
		"foldedScrapes":           3.0,
		"steadyScrapes":           11.0,
		"insecure":                true,
	}
	for k, v := range want {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", k, diff)
		}
	}
	// A kube-controller-manager queue has none of controller-runtime's fields.
	plain := encodeLines(t, Options{Output: "json"}, []watch.Event{{Type: watch.ControllerQueue, Time: t0, Scrape: watch.ScrapeInfo{URL: "u", Sample: &watch.QueueSample{Name: "deployment"}}}})[0]
	for _, absent := range []string{"reconciles", "activeWorkers", "addsPerSecond", "foldedScrapes", "steadyScrapes", "insecure"} {
		if bytes.Contains(plain, []byte(`"`+absent+`"`)) {
			t.Errorf("%s in a line without it: %s", absent, plain)
		}
	}
}

// Scrape errors are counted apart from the informer's errors.
func TestSummaryScrapes(t *testing.T) {
	s := summary.New()
	for _, ev := range []watch.Event{
		{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "watch", Reason: "Forbidden"}, Resource: deploy},
		{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Reason: "Forbidden"}, Scrape: watch.ScrapeInfo{URL: "https://a/metrics"}},
		{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Reason: "ScrapeFailed"}, Scrape: watch.ScrapeInfo{URL: "https://b/metrics"}},
		controllerRuntimeQueue(),
	} {
		s.Add(&ev)
	}
	var buf bytes.Buffer
	if err := writeSummary(&buf, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"0 watch closes, 1 errors,",
		"metrics: 1 ControllerQueue lines from 3 URLs, 2 scrape errors (one per failure streak)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
}
