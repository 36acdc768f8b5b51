package printer

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// apiStatsEvents are the lines of API accounting: a paginated list classified by APF, a
// fallback from a streaming list, a reflector's backoff, throttling and the ApiStats figures.
func apiStatsEvents() []watch.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	apf := &apistats.APF{FlowSchema: "global-default", PriorityLevel: "global-default", FlowSchemaUID: "fs-1", PriorityLevelUID: "pl-1"}
	hidden := &apistats.APF{FlowSchemaUID: "fs-2", PriorityLevelUID: "pl-2", Note: "names not shown: the user may not list flowschemas.flowcontrol.apiserver.k8s.io"}
	return []watch.Event{
		{Type: watch.Informer, Time: at(0), Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, ListMode: "list", PageSize: 2, QPS: 5, Burst: 10, Namespace: "demo", Resources: []discovery.Resource{deploy}}}},
		{Type: watch.Error, Time: at(0), Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "watch", Reason: "InternalError", Message: "the server cannot do streaming lists"}},
		{Type: watch.List, Time: at(1), Resource: deploy, ResourceVersion: "100", Lifecycle: watch.LifecycleInfo{Items: 5, Pages: 3, Duration: 12 * time.Millisecond, Initial: true}, Stats: watch.StatsInfo{APF: apf}},
		{Type: watch.Synced, Time: at(1), Resource: deploy, Lifecycle: watch.LifecycleInfo{Items: 5, Duration: 20 * time.Millisecond, ListMode: "list", FellBack: true}, ResourceVersion: "100"},
		{Type: watch.Watch, Time: at(1), Resource: deploy, ResourceVersion: "100", Lifecycle: watch.LifecycleInfo{TimeoutSeconds: 300}, Stats: watch.StatsInfo{APF: hidden}},
		{Type: watch.Error, Time: at(2), Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "list", Reason: "ConnectionRefused", Message: "connection refused", Backoff: 1600 * time.Millisecond}},
		{Type: watch.Recovered, Time: at(4), Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "list", Message: "list works again after 2 failed attempts", Backoff: 3200 * time.Millisecond}},
		{Type: watch.Throttled, Time: at(5), Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "LIST", Reason: string(apistats.NoticeTooManyRequests)}, Stats: watch.StatsInfo{RetryAfter: time.Second, APF: apf}},
		{Type: watch.Throttled, Time: at(5), Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "WATCH", Reason: string(apistats.NoticeClientThrottled), Duration: 180 * time.Millisecond}},
		{
			Type:     watch.ApiStats,
			Time:     at(60),
			Resource: deploy,
			Stats: watch.StatsInfo{Final: true, API: &apistats.Snapshot{
				Resource: "deployments.apps", Elapsed: time.Minute,
				Requests: []apistats.Request{{Verb: "LIST", Code: 200, Count: 3}, {Verb: "LIST", Code: 429, Count: 1}, {Verb: "WATCH", Code: 200, Count: 2}},
				Lists:    1, ListPages: 3, LastListPages: 3, BytesReceived: 2048, BytesDecoded: 9000, CompressedResponses: 1,
				Objects: 7, Bookmarks: 1, WatchStreams: 2, Reconnects: 1, WatchOpen: 1, WatchesClosed: 1, WatchLivedTotal: 40 * time.Second, WatchLivedMax: 40 * time.Second,
				Throttled: 1, RetryAfter: time.Second, ClientWaits: 1, ClientWait: 180 * time.Millisecond, ClientWaitMax: 180 * time.Millisecond, APF: *apf}},
		},
	}
}

func TestAPIStatsGolden(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	golden(t, "apistats.txt", render(t, Options{ShowAPIStats: true}, apiStatsEvents()))
	// Without ShowAPIStats (--api-stats), human output leaves out the ApiStats line at exit.
	if out := render(t, Options{}, apiStatsEvents()); strings.Contains(out, "ApiStats") {
		t.Errorf("the ApiStats line at exit printed without ShowAPIStats:\n%s", out)
	}
	golden(t, "apistats.ndjson", render(t, Options{Output: "json", PluginVersion: "v1.0.0"}, apiStatsEvents()))
}

// A name from the server never reaches a terminal raw.
func TestAPIStatsEscapesNames(t *testing.T) {
	ev := watch.Event{
		Type:      watch.Throttled,
		Time:      t0,
		Resource:  deploy,
		Lifecycle: watch.LifecycleInfo{Verb: "LIST", Reason: string(apistats.NoticeTooManyRequests)},
		Stats:     watch.StatsInfo{APF: &apistats.APF{FlowSchema: "evil\x1b[31m", PriorityLevel: "pl"}},
	}
	out := render(t, Options{}, []watch.Event{ev})
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape character printed raw: %q", out)
	}
}

// A 429 of a request API Priority and Fairness classified exempt is not blamed on it: the exempt
// level never rejects (issue #38: a proxy's 429 read "by APF ..., priority level exempt").
func TestThrottledExemptNotBlamedOnAPF(t *testing.T) {
	ev := watch.Event{
		Type:      watch.Throttled,
		Time:      t0,
		Resource:  deploy,
		Lifecycle: watch.LifecycleInfo{Verb: "LIST", Reason: string(apistats.NoticeTooManyRequests)},
		Stats:     watch.StatsInfo{APF: &apistats.APF{FlowSchema: "exempt", PriorityLevel: "exempt"}},
	}
	out := render(t, Options{}, []watch.Event{ev})
	if strings.Contains(out, " by APF") || !strings.Contains(out, "not by API Priority and Fairness") {
		t.Errorf("exempt 429: %q", out)
	}
	ev.Stats.APF = &apistats.APF{FlowSchema: "workload-low", PriorityLevel: "workload-low"}
	if out := render(t, Options{}, []watch.Event{ev}); !strings.Contains(out, ` by APF flow schema "workload-low", priority level "workload-low"`) {
		t.Errorf("APF 429: %q", out)
	}
}

func TestAPIFigures(t *testing.T) {
	s := &apistats.Snapshot{Requests: []apistats.Request{{Verb: "LIST", Code: 0, Count: 2}}, BytesReceived: 3 << 20, BytesDecoded: 3 << 20}
	got := APIFigures(s)
	for _, want := range []string{"LIST no response×2", "received 3.0 MiB;", "0 throttled"} {
		if !strings.Contains(got, want) {
			t.Errorf("APIFigures = %q, want %q in it", got, want)
		}
	}
	if strings.Contains(got, "decoded") {
		t.Errorf("APIFigures = %q: decoded bytes shown though equal to received", got)
	}
}

// The exit summary gives each resource's latest API figures.
func TestSummaryAPIStats(t *testing.T) {
	s := summary.New()
	for _, ev := range apiStatsEvents() {
		s.Add(&ev)
	}
	var b strings.Builder
	if err := writeSummary(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "api deployments.apps: requests LIST 200×3, LIST 429×1, WATCH 200×2; 1 lists (0 streaming), 3 pages (last list 3)"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}
