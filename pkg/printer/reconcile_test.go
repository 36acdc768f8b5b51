package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var widgetRes = discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}

// controllerReconcileEvents are reconciles read from a controller's log: one with triggers (one
// of an owned object), a failed one with a reason, one of an object not watched.
func controllerReconcileEvents() []watch.Event {
	return []watch.Event{
		{
			Type:      watch.ControllerReconcile,
			Time:      t0,
			Resource:  widgetRes,
			Namespace: "demo",
			Name:      "shop",
			Key:       "demo/shop",
			Reconcile: &watch.ReconcileInfo{Controller: "widget", ReconcileID: "ed542d03-7d7b-4ae5-8a93-4f9b4987d3ea", Kind: "Widget", Result: "ok",
				Duration: 3200 * time.Microsecond, DurationKnown: true, Source: "mgr.log", Format: "zap-json", Lines: 2, FilteredTriggers: 2},
			Queued: watch.QueuedInfo{TriggerCount: 2, Triggers: []watch.Trigger{
				{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "12", Managers: []string{"widget-operator"}, Attribution: "entry", Time: t0.Add(-time.Millisecond)},
				{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "13", Time: t0, Resource: "deployments.apps", Key: "demo/shop"},
			}},
		},
		{
			Type:      watch.ControllerReconcile,
			Time:      t0.Add(time.Second),
			Resource:  widgetRes,
			Namespace: "demo",
			Name:      "shop",
			Key:       "demo/shop",
			Lifecycle: watch.LifecycleInfo{Reason: "retry"},
			Reconcile: &watch.ReconcileInfo{Controller: "widget", ReconcileID: "a1", Kind: "Widget", Result: "error", Error: "forbidden", RequeueAfter: 0,
				Source: "mgr.log", Format: "zap-console", Lines: 2, ReasonMessage: "a retry: its previous reconcile of it failed"},
		},
		{
			Type:      watch.ControllerReconcile,
			Time:      t0.Add(2 * time.Second),
			Namespace: "demo",
			Name:      "web",
			Key:       "demo/web",
			Lifecycle: watch.LifecycleInfo{Reason: "notWatched"},
			Reconcile: &watch.ReconcileInfo{Controller: "deployment", Kind: "deployment", Result: "requeueAfter", RequeueAfter: 5 * time.Second,
				Source: "-", Format: "klog-text", Lines: 1, ReasonMessage: "deployment demo/web is not watched"},
		},
	}
}

// A reconcile from a controller's log reads as one line: the object, the controller and its
// reconcile, the result (an error in red), how long, and its triggers or why it had none.
func TestControllerReconcileHuman(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, Options{Color: true, Timestamps: "none"})
	for _, ev := range controllerReconcileEvents() {
		if err := p.Print(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{
		"demo/shop  by widget (reconcile ed542d03): " + colorGreen + "ok" + colorReset + " in 3.2ms; 2 events coalesced: Updated rv=12 (by widget-operator), Updated of deployments.apps demo/shop rv=13",
		"demo/shop  by widget (reconcile a1): " + colorRed + "error: forbidden" + colorReset + "; no trigger: a retry: its previous reconcile of it failed",
		"demo/web  by deployment: requeue after 5s; no trigger: deployment demo/web is not watched",
	} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "ControllerReconcile") {
			t.Errorf("line %d:\n%q\nwant it to contain\n%q", i, lines[i], want)
		}
	}
}

// ControllerReconcileText is the human line's words without color, for pages that color
// them their own way.
func TestControllerReconcileText(t *testing.T) {
	evs := controllerReconcileEvents()
	for i, want := range []string{
		"demo/shop  by widget (reconcile ed542d03): ok in 3.2ms; 2 events coalesced: Updated rv=12 (by widget-operator), Updated of deployments.apps demo/shop rv=13",
		"demo/shop  by widget (reconcile a1): error: forbidden; no trigger: a retry: its previous reconcile of it failed",
	} {
		if got := ControllerReconcileText(&evs[i]); got != want {
			t.Errorf("event %d:\n%q\nwant\n%q", i, got, want)
		}
	}
}

// The exit summary says, per controller, its reconciles by result, events per reconcile and the
// objects it reconciled most.
func TestSummaryControllerReconciles(t *testing.T) {
	s := summary.New()
	for _, ev := range controllerReconcileEvents() {
		s.Add(&ev)
	}
	s.Predicates = &summary.PredicateReport{Predicates: "generation"}
	// The widget controller's metrics, scraped: more reconciles than its log showed.
	s.Add(&watch.Event{Type: watch.ControllerQueue, Scrape: watch.ScrapeInfo{Sample: &watch.QueueSample{Name: "widget", Controller: "widget", HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 5, Error: 1}}}})
	var b strings.Builder
	if err := WriteSummary(&b, "summary", s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"controller widget (from its log): 2 reconciles (1 error, 1 ok), 1.00 events per reconcile, 1 with no trigger; most reconciled: demo/shop (2)",
		"  --predicate generation would have saved 1 of them: every event that triggered them is one it drops",
		"  its log shows 2 of 6 reconciles its metrics count since it started (33%): to see every one, run it at --zap-log-level=5 (controller-runtime) or -v=4 (klog)",
		"controller deployment (from its log): 1 reconciles (1 requeueAfter), 0.00 events per reconcile, 1 with no trigger; most reconciled: demo/web (1)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary:\n%s\nwant it to contain %q", b.String(), want)
		}
	}
}

// Errors reading pod logs (--controller-logs-from) are counted apart from the informer's.
func TestSummaryPodLogErrors(t *testing.T) {
	s := summary.New()
	s.Add(&watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "logs", Reason: "Forbidden"}})
	s.Add(&watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "list", Reason: "Forbidden"}})
	var b strings.Builder
	if err := WriteSummary(&b, "summary", s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" 1 errors, ", "controller logs: 1 errors reading the logs (pod logs that failed, a reading that fell behind; one per streak)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary:\n%s\nwant it to contain %q", b.String(), want)
		}
	}
}

// A controller logging at info: its reconciles' lines say their start and end are not logged,
// and with its metrics scraped the summary states how many of its reconciles the log shows and
// why not the rest; a log read that shows none of a counted controller's reconciles is said.
func TestSummaryCoverageAtInfo(t *testing.T) {
	ev := watch.Event{Type: watch.ControllerReconcile, Time: t0, Resource: widgetRes, Namespace: "demo", Name: "shop", Key: "demo/shop",
		Reconcile: &watch.ReconcileInfo{Controller: "widget", ReconcileID: "a2", Kind: "Widget", Result: "unknown", Bounds: "lines", Source: "mgr.log", Format: "json", Lines: 3}}
	if got, want := ControllerReconcileText(&ev), "demo/shop  by widget (reconcile a2): unknown (from 3 lines of it; its start and end not logged)"; !strings.HasPrefix(got, want) {
		t.Errorf("line %q, want it to start %q", got, want)
	}
	s := summary.New()
	s.LogsRead = true
	for range 69 {
		s.Add(&ev)
	}
	queue := watch.Event{Type: watch.ControllerQueue, Time: t0, Scrape: watch.ScrapeInfo{URL: "http://127.0.0.1:8080/metrics", Sample: &watch.QueueSample{Name: "widget", Controller: "widget", HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 1900, Error: 55}}}}
	s.Add(&queue)
	s.Add(&watch.Event{Type: watch.ControllerQueue, Scrape: watch.ScrapeInfo{Sample: &watch.QueueSample{Name: "nodeclaim", Controller: "nodeclaim", HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 12}}}})
	// Each ControllerQueue line of a controller whose log is read says how many it showed so far.
	if out := render(t, Options{Timestamps: "none", NoHeaders: true}, []watch.Event{queue}); !strings.Contains(out, "reconciles=1955 (success=1900 error=55 requeue=0 requeue_after=0) errors=0 (its log shows 69 of them so far)") {
		t.Errorf("queue line %q", out)
	}
	var b strings.Builder
	if err := WriteSummary(&b, "summary", s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  its log shows 69 of 1,955 reconciles its metrics count since it started (4%): it logs at info, so a reconcile shows only when it logs a line; for every reconcile run it at --zap-log-level=5 (controller-runtime) or -v=4 (klog)",
		"controller nodeclaim: its log shows 0 of 12 reconciles its metrics count",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary:\n%s\nwant it to contain %q", b.String(), want)
		}
	}
	// Logs read, none of which shows a reconcile: the counted controller is still said.
	s = summary.New()
	s.LogsRead = true
	s.Add(&watch.Event{Type: watch.ControllerQueue, Scrape: watch.ScrapeInfo{Sample: &watch.QueueSample{Name: "widget", Controller: "widget", HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 1955}}}})
	b.Reset()
	if err := WriteSummary(&b, "summary", s); err != nil {
		t.Fatal(err)
	}
	if want := "controller widget: its log shows 0 of 1,955 reconciles its metrics count"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant it to contain %q", b.String(), want)
	}
	// Karpenter's provisioner, a singleton: its log shows a reconcile of it that names no object
	// (counted, not printed); a controller its metrics count no reconcile of is not said at all.
	s = summary.New()
	s.LogsRead = true
	s.Add(&ev)
	s.SetCounted("provisioner", 4)
	s.SetNoObject("provisioner", 1)
	s.SetCounted("eviction-queue", 0)
	b.Reset()
	if err := WriteSummary(&b, "summary", s); err != nil {
		t.Fatal(err)
	}
	if want := "controller provisioner: its log shows 1 of 4 reconciles its metrics count since it started (25%), none of which names an object (a singleton controller's): counted, never a ControllerReconcile line"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant it to contain %q", b.String(), want)
	}
	if strings.Contains(b.String(), "no line read names a reconcile of it") || strings.Contains(b.String(), "eviction-queue") {
		t.Errorf("summary:\n%s\nwant neither the singleton said unread nor a controller of no reconcile", b.String())
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands: %s", got)
	}
}
