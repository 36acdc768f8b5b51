package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// approx compares floats that went through bucket interpolation.
var approx = cmpopts.EquateApprox(1e-9, 0)

// wantTestdata is what testdata/workqueue.txt (and workqueue.pb, generated from the same
// observations) holds, with quantiles computed by hand:
//
//	cronjob queue: 4 obs in (1e-5,1e-4], 4 in (1e-4,1e-3], 2 in (1e-3,1e-2]
//	  p50: rank 5 -> (1e-4,1e-3], 1 of 4  -> 1e-4 + 9e-4*1/4     = 3.25e-4
//	  p99: rank 9.9 -> (1e-3,1e-2], 1.9 of 2 -> 1e-3 + 9e-3*0.95 = 9.55e-3
//	cronjob work: 50 in (0.01,0.1], 45 in (0.1,1], 5 in (1,10]
//	  p50: rank 50 -> (0.01,0.1], 50 of 50 -> 0.1
//	  p99: rank 99 -> (1,10], 4 of 5       -> 1 + 9*0.8 = 8.2
//	deployment queue: 2 obs in (1e-6,1e-5], 1 above 1000
//	  p50: rank 1.5 -> (1e-6,1e-5], 1.5 of 2 -> 1e-6 + 9e-6*0.75 = 7.75e-6
//	  p99: rank 2.97 -> +Inf bucket -> highest finite bound, 1000
//	deployment work: no observations; depth is summed over priorities 0 and -100.
//	cronjob reconcile time: 1 obs in (0.025,0.05]
//	  p50: 0.025 + 0.025*0.5 = 0.0375; p99: 0.025 + 0.025*0.99 = 0.04975
var wantTestdata = []watch.QueueSample{
	{
		Name: "cronjob", Controller: "cronjob",
		Depth: 3, Adds: 120, Retries: 4, UnfinishedSeconds: 0.25, LongestRunningSeconds: 0.2,
		QueueP50: 3.25e-4, QueueP99: 9.55e-3, HasQueueLatency: true,
		WorkP50: 0.1, WorkP99: 8.2, HasWorkLatency: true,
		HasReconciles: true, Reconciles: watch.ReconcileResults{Success: 100},
		ReconcileP50: 0.0375, ReconcileP99: 0.04975, HasReconcileTime: true,
	},
	{
		Name: "deployment", Controller: "deployment",
		Depth: 7, Adds: 45, Retries: 0, UnfinishedSeconds: 12.5, LongestRunningSeconds: 12.5,
		QueueP50: 7.75e-6, QueueP99: 1000, HasQueueLatency: true,
	},
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []watch.QueueSample
	}{
		{
			name:  "controller-runtime exposition",
			input: string(readTestdata(t, "workqueue.txt")),
			want:  wantTestdata,
		},
		{
			name:  "empty input",
			input: "",
			want:  nil,
		},
		{
			name: "only unrelated metrics",
			input: `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 87
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="10.96.0.1:443",method="GET"} 412
`,
			want: nil,
		},
		{
			name: "client-go component-base queues have no controller label; sorted by controller then name",
			input: `# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="zeta",name="zeta"} 1
workqueue_adds_total{name="DynamicServingCertificateController"} 7
workqueue_adds_total{controller="alpha",name="b"} 2
workqueue_adds_total{controller="alpha",name="a"} 3
workqueue_adds_total{name="APIServiceRegistrationController"} 5
`,
			want: []watch.QueueSample{
				{Name: "APIServiceRegistrationController", Adds: 5},
				{Name: "DynamicServingCertificateController", Adds: 7},
				{Name: "a", Controller: "alpha", Adds: 3},
				{Name: "b", Controller: "alpha", Adds: 2},
				{Name: "zeta", Controller: "zeta", Adds: 1},
			},
		},
		{
			name: "names must match exactly",
			input: `# TYPE foo_workqueue_depth gauge
foo_workqueue_depth{name="x"} 3
# TYPE workqueue_depth_total counter
workqueue_depth_total{name="x"} 3
# TYPE controller_runtime_workqueue_adds_total counter
controller_runtime_workqueue_adds_total{name="x"} 3
`,
			want: nil,
		},
		{
			name: "untyped series (no TYPE lines) are read",
			input: `workqueue_depth{name="q"} 2
workqueue_adds_total{name="q"} 10
workqueue_retries_total{name="q"} 1
workqueue_unfinished_work_seconds{name="q"} 0.5
workqueue_longest_running_processor_seconds{name="q"} 0.4
`,
			want: []watch.QueueSample{{Name: "q", Depth: 2, Adds: 10, Retries: 1, UnfinishedSeconds: 0.5, LongestRunningSeconds: 0.4}},
		},
		{
			// Like sum by (le): (0,1] gets 2+0, (1,2] gets 2+4, +Inf gets 4+4 -> cumulative 2, 6, 8.
			// p50: rank 4 -> (1,2], 2 of 4 -> 1.5. p99: rank 7.92 -> +Inf bucket -> 2.
			// Longest running takes the maximum, everything else is summed.
			name: "series differing in other labels are merged",
			input: `# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{name="q",shard="0",le="1"} 2
workqueue_work_duration_seconds_bucket{name="q",shard="0",le="2"} 4
workqueue_work_duration_seconds_bucket{name="q",shard="0",le="+Inf"} 4
workqueue_work_duration_seconds_sum{name="q",shard="0"} 5
workqueue_work_duration_seconds_count{name="q",shard="0"} 4
workqueue_work_duration_seconds_bucket{name="q",shard="1",le="1"} 0
workqueue_work_duration_seconds_bucket{name="q",shard="1",le="2"} 2
workqueue_work_duration_seconds_bucket{name="q",shard="1",le="+Inf"} 4
workqueue_work_duration_seconds_sum{name="q",shard="1"} 20
workqueue_work_duration_seconds_count{name="q",shard="1"} 4
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{name="q",shard="0"} 3
workqueue_longest_running_processor_seconds{name="q",shard="1"} 9
workqueue_longest_running_processor_seconds{name="q",shard="2"} 1
# TYPE workqueue_depth gauge
workqueue_depth{name="q",shard="0"} 3
workqueue_depth{name="q",shard="1"} 9
`,
			want: []watch.QueueSample{{Name: "q", Depth: 12, LongestRunningSeconds: 9, WorkP50: 1.5, WorkP99: 2, HasWorkLatency: true}},
		},
		{
			// p50: rank 2 of 4 in (0,0.5] -> 0.25; p99: rank 3.96 -> 0.495.
			name: "lowest bucket interpolates from zero",
			input: `# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="q",le="0.5"} 4
workqueue_queue_duration_seconds_bucket{name="q",le="+Inf"} 4
workqueue_queue_duration_seconds_sum{name="q"} 1
workqueue_queue_duration_seconds_count{name="q"} 4
`,
			want: []watch.QueueSample{{Name: "q", QueueP50: 0.25, QueueP99: 0.495, HasQueueLatency: true}},
		},
		{
			name: "histogram series without buckets has no latency",
			input: `# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_sum{name="q"} 1
workqueue_queue_duration_seconds_count{name="q"} 4
`,
			want: []watch.QueueSample{{Name: "q"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.input))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{name: "prose", input: "hello world, this is not a metrics page\n", wantErr: "text format parsing error"},
		{name: "html", input: "<!DOCTYPE html>\n<html><body>login</body></html>\n", wantErr: "text format parsing error"},
		{name: "unterminated labels", input: `workqueue_depth{name="x" 3` + "\n", wantErr: "text format parsing error"},
		{name: "value not a number", input: "# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"x\"} three\n", wantErr: "expected float"},
		{name: "truncated mid-line", input: `workqueue_depth{name="x"`, wantErr: "text format parsing error"},
		{name: "binary", input: "\x00\x01\x02\xff\xfe\n\n\x1f\x8b\x08", wantErr: "text format parsing error"},
		// Panics inside expfmt v0.70.0's parser (found by FuzzParse).
		// Now refused before the parser sees it (a sample without a name).
		{name: "TYPE line then {}", input: "#TYPE A0000000000000000000000000000000 histogrAm\n{}", wantErr: "text format parsing error in line 2"},
		{name: "TYPE line then {} of a family read", input: "#TYPE workqueue_depth histogrAm\n{}", wantErr: "text format parsing error"},
		{name: "negative histogram count", input: "# TYPE workqueue_work_duration_seconds histogram\nworkqueue_work_duration_seconds_count{name=\"x\"} -1.5\n", wantErr: "negative count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.input))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error", got)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(+1)
	tests := []struct {
		name    string
		q       float64
		buckets []bucket
		want    float64
		wantOK  bool
	}{
		// Cumulative 2, 4, 8 over (0,1], (1,2], (2,4].
		{name: "lowest bucket from zero", q: 0.25, buckets: []bucket{{1, 2}, {2, 4}, {4, 8}, {inf, 8}}, want: 1, wantOK: true},
		{name: "upper edge of a bucket", q: 0.5, buckets: []bucket{{1, 2}, {2, 4}, {4, 8}, {inf, 8}}, want: 2, wantOK: true},
		{name: "mid bucket", q: 0.75, buckets: []bucket{{1, 2}, {2, 4}, {4, 8}, {inf, 8}}, want: 3, wantOK: true},
		{name: "in +Inf bucket returns highest finite bound", q: 0.5, buckets: []bucket{{1, 0}, {10, 1}, {inf, 5}}, want: 10, wantOK: true},
		{name: "non-positive lowest bound returned as is", q: 0.5, buckets: []bucket{{-1, 3}, {0, 5}, {inf, 5}}, want: -1, wantOK: true},
		// Forced to 4, 4, 6, 6. p50: rank 3 in (0,1], 3 of 4. p99: rank 5.94 in (2,3], 1.94 of 2.
		{name: "non-monotonic counts are forced up, p50", q: 0.5, buckets: []bucket{{1, 4}, {2, 2}, {3, 6}, {inf, 6}}, want: 0.75, wantOK: true},
		{name: "non-monotonic counts are forced up, p99", q: 0.99, buckets: []bucket{{1, 4}, {2, 2}, {3, 6}, {inf, 6}}, want: 2.97, wantOK: true},
		{name: "no observations", q: 0.5, buckets: []bucket{{1, 0}, {inf, 0}}, wantOK: false},
		{name: "only +Inf bucket", q: 0.5, buckets: []bucket{{inf, 3}}, wantOK: false},
		{name: "NaN count", q: 0.5, buckets: []bucket{{1, 1}, {inf, math.NaN()}}, wantOK: false},
		{name: "-Inf bound", q: 0.5, buckets: []bucket{{math.Inf(-1), 1}, {inf, 1}}, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := bucketQuantile(tt.q, tt.buckets)
			if ok != tt.wantOK {
				t.Fatalf("bucketQuantile ok = %v, want %v (value %v)", ok, tt.wantOK, got)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("bucketQuantile mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScrape(t *testing.T) {
	text := readTestdata(t, "workqueue.txt")
	pb := readTestdata(t, "workqueue.pb")
	const textType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
	const protoType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping=underscores"

	tests := []struct {
		name        string
		status      int
		contentType string
		body        []byte
		want        []watch.QueueSample
		wantErr     string // substring, after the "scrape URL: " prefix
	}{
		{name: "text", status: 200, contentType: textType, body: text, want: wantTestdata},
		{name: "text without version", status: 200, contentType: "text/plain", body: text, want: wantTestdata},
		{name: "no content type", status: 200, body: text, want: wantTestdata},
		{name: "delimited protobuf (implicit +Inf buckets)", status: 200, contentType: protoType, body: pb, want: wantTestdata},
		{name: "non-delimited protobuf", status: 200, contentType: "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=text", body: []byte("x"), wantErr: `unsupported content type`},
		{name: "OpenMetrics", status: 200, contentType: "application/openmetrics-text; version=1.0.0; charset=utf-8", body: []byte("# EOF\n"), wantErr: "unsupported content type \"application/openmetrics-text"},
		{name: "server error", status: 500, contentType: "text/plain", body: []byte("boom\nsecond line\n"), wantErr: "unexpected status 500 Internal Server Error: boom"},
		{name: "forbidden names the reason", status: 403, contentType: "text/plain", body: []byte("Authorization denied for user system:anonymous\n"), wantErr: "unexpected status 403 Forbidden: Authorization denied for user system:anonymous"},
		{name: "not found without body", status: 404, wantErr: "unexpected status 404 Not Found"},
		{name: "garbage", status: 200, contentType: "text/plain", body: []byte("<html>\n<body>hello</body>\n"), wantErr: "text format parsing error in line 1"},
		{name: "garbage protobuf", status: 200, contentType: protoType, body: []byte("\x05\xff\xff\xff\xff\xff"), wantErr: "protobuf exposition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if got, want := r.Header.Get("Accept"), "text/plain;version=0.0.4"; !strings.HasPrefix(got, want) {
					t.Errorf("Accept = %q, want prefix %q", got, want)
				}
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				} else {
					w.Header()["Content-Type"] = nil // keep net/http from sniffing one
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write(tt.body)
			}))
			defer srv.Close()
			url := srv.URL + "/metrics"

			got, err := (&Scraper{URL: url}).Scrape(context.Background())
			if tt.wantErr != "" {
				checkScrapeError(t, err, url, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("Scrape: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Scrape mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func checkScrapeError(t *testing.T, err error, url, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Scrape succeeded, want error containing %q", want)
	}
	msg := err.Error()
	if prefix := "scrape " + url + ": "; !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q does not start with %q", msg, prefix)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("error %q does not contain %q", msg, want)
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error is not one line: %q", msg)
	}
}

func TestScrapeConnectionErrors(t *testing.T) {
	// A server that is gone: connection refused.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/metrics"
	dead.Close()

	// A server that never answers: the scrape is bounded by Timeout.
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)

	tests := []struct {
		name    string
		scraper *Scraper
		wantURL string
		wantErr string
	}{
		{name: "connection refused", scraper: &Scraper{URL: deadURL}, wantURL: deadURL, wantErr: "connection refused"},
		{name: "timeout", scraper: &Scraper{URL: hang.URL, Timeout: 10 * time.Millisecond}, wantURL: hang.URL, wantErr: "no complete answer within 10ms: context deadline exceeded"},
		{
			name:    "credentials are redacted",
			scraper: &Scraper{URL: "http://user:secret@" + strings.TrimPrefix(deadURL, "http://")},
			wantURL: "http://user:xxxxx@" + strings.TrimPrefix(deadURL, "http://"),
			wantErr: "connection refused",
		},
		{name: "bad URL", scraper: &Scraper{URL: "://nope"}, wantURL: "://nope", wantErr: "missing protocol scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.scraper.Scrape(context.Background())
			checkScrapeError(t, err, tt.wantURL, tt.wantErr)
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks the password: %q", err)
			}
		})
	}
}

func TestScrapeUsesClient(t *testing.T) {
	text := readTestdata(t, "workqueue.txt")
	var sawHeader atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawHeader.Store(r.Header.Get("Authorization") == "Bearer token")
		_, _ = w.Write(text)
	}))
	defer srv.Close()
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer token")
		return http.DefaultTransport.RoundTrip(r)
	})}
	if _, err := (&Scraper{URL: srv.URL, Client: client}).Scrape(context.Background()); err != nil {
		t.Fatalf("Scrape: %v", err)
	}
	if !sawHeader.Load() {
		t.Error("Scrape did not go through Scraper.Client")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestLimitedReader(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		limit   int64
		wantErr error
	}{
		{name: "under", size: 9, limit: 10},
		{name: "exactly", size: 10, limit: 10},
		{name: "over", size: 11, limit: 10, wantErr: errBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := io.ReadAll(&limitedReader{r: bytes.NewReader(make([]byte, tt.size)), n: tt.limit})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadAll error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && len(got) != tt.size {
				t.Errorf("read %d bytes, want %d", len(got), tt.size)
			}
		})
	}
}

// pollLog records Poll's callbacks and the server's answers in order, and wakes waiters.
type pollLog struct {
	mu      sync.Mutex
	events  []string
	changed chan struct{}
}

func newPollLog() *pollLog { return &pollLog{changed: make(chan struct{}, 1)} }

func (l *pollLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *pollLog) count(e string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, got := range l.events {
		if got == e {
			n++
		}
	}
	return n
}

// await blocks until cond holds. The deadline only keeps a broken Poll from hanging the test.
func (l *pollLog) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-l.changed:
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("timed out waiting for %s; events: %v", what, l.events)
		}
	}
}

// callbacks returns the callback events with runs of "samples" collapsed.
func (l *pollLog) callbacks() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if strings.HasPrefix(e, "hit ") || (e == "samples" && len(out) > 0 && out[len(out)-1] == "samples") {
			continue
		}
		out = append(out, e)
	}
	return out
}

func TestPoll(t *testing.T) {
	text := readTestdata(t, "workqueue.txt")
	log := newPollLog()
	var mu sync.Mutex
	healthy := false
	setHealthy := func(h bool) { mu.Lock(); healthy = h; mu.Unlock() }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := healthy
		mu.Unlock()
		if !h {
			log.add("hit fail")
			http.Error(w, "not ready", http.StatusInternalServerError)
			return
		}
		log.add("hit ok")
		_, _ = w.Write(text)
	}))
	defer srv.Close()
	url := srv.URL + "/metrics"

	var errs []error
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Poll(ctx, &Scraper{URL: url}, 10*time.Millisecond, Handlers{
			Page: func(page Page) {
				if diff := cmp.Diff(wantTestdata, page.Queues, approx); diff != "" {
					t.Errorf("onSamples mismatch (-want +got):\n%s", diff)
				}
				log.add("samples")
			},
			Error: func(err error) {
				errs = append(errs, err)
				log.add("error")
			},
			Recovered: func() { log.add("recovered") },
		})
	}()

	// Poll finishes the callbacks for scrape n before it starts scrape n+1, so once the server has
	// seen k more requests, k-1 more scrapes have been fully reported.
	awaitHits := func(what, kind string, more int) {
		t.Helper()
		start := log.count(kind)
		log.await(t, what, func() bool { return log.count(kind) >= start+more })
	}

	// Failing from the start: one error, however many failed scrapes follow.
	log.await(t, "first error", func() bool { return log.count("error") == 1 })
	awaitHits("more failed scrapes", "hit fail", 3)

	// Recovery: one onRecovered, then samples on every scrape.
	setHealthy(true)
	log.await(t, "recovery", func() bool { return log.count("recovered") == 1 })
	awaitHits("more good scrapes", "hit ok", 3)

	// Failing again: a new streak, a new error.
	setHealthy(false)
	log.await(t, "second error", func() bool { return log.count("error") == 2 })
	awaitHits("more failed scrapes", "hit fail", 3)

	cancel()
	<-done

	if diff := cmp.Diff([]string{"error", "recovered", "samples", "error"}, log.callbacks()); diff != "" {
		t.Errorf("callback sequence mismatch (-want +got):\n%s", diff)
	}
	for _, err := range errs {
		checkScrapeError(t, err, url, "unexpected status 500 Internal Server Error: not ready")
	}
}

func TestPollScrapesImmediately(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintln(w, `workqueue_depth{name="q"} 1`)
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []watch.QueueSample, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// With an hour between scrapes, only an immediate first scrape can report anything.
		Poll(ctx, &Scraper{URL: srv.URL}, time.Hour, Handlers{Page: func(p Page) { got <- p.Queues }})
	}()
	select {
	case s := <-got:
		if diff := cmp.Diff([]watch.QueueSample{{Name: "q", Depth: 1}}, s); diff != "" {
			t.Errorf("samples mismatch (-want +got):\n%s", diff)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Poll did not scrape immediately")
	}
	cancel()
	<-done
}

func TestPollReturnsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	// The URL is never reachable; a cancelled context must not be reported as a failure.
	Poll(ctx, &Scraper{URL: "http://127.0.0.1:1/metrics"}, 10*time.Millisecond, Handlers{
		Page:      func(Page) { called = true },
		Error:     func(error) { called = true },
		Recovered: func() { called = true },
	})
	if called {
		t.Error("Poll called back after its context was done")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(readTestdata(f, "workqueue.txt"))
	f.Add([]byte("workqueue_depth{name=\"q\"} 1\n"))
	f.Add([]byte("# TYPE workqueue_queue_duration_seconds histogram\n" +
		"workqueue_queue_duration_seconds_bucket{name=\"q\",le=\"-Inf\"} 1\n" +
		"workqueue_queue_duration_seconds_bucket{name=\"q\",le=\"1e308\"} 2\n" +
		"workqueue_queue_duration_seconds_bucket{name=\"q\",le=\"NaN\"} 3\n" +
		"workqueue_queue_duration_seconds_count{name=\"q\"} 1e300\n"))
	f.Add([]byte("# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"q\",controller=\"c\"} NaN\n"))
	// The bounds lowered, so that fuzzed pages reach them (a line, the series, the bytes parsed).
	defer func(l, n, b int) { maxLine, maxSeries, maxParsed = l, n, b }(maxLine, maxSeries, maxParsed)
	maxLine, maxSeries, maxParsed = 512, 40, 8<<10
	f.Add([]byte(strings.Repeat("workqueue_depth{name=\"q\"} 1\n", 50)))
	f.Add([]byte("workqueue_depth{name=\"" + strings.Repeat("x", 600) + "\"} 1\n"))
	f.Add([]byte(strings.Repeat("other_metric{a=\"b\"} 1\n", 200)))
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := Parse(bytes.NewReader(data))
		if len(samples) > maxSeries {
			t.Errorf("%d queues from one page, past the bound of %d series", len(samples), maxSeries)
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		for i, s := range samples {
			if i > 0 {
				prev := samples[i-1]
				if prev.Controller > s.Controller || (prev.Controller == s.Controller && prev.Name >= s.Name) {
					t.Errorf("samples not sorted or not unique at %d: %q/%q then %q/%q", i, prev.Controller, prev.Name, s.Controller, s.Name)
				}
			}
			for _, q := range []struct {
				has  bool
				vals [2]float64
			}{{s.HasQueueLatency, [2]float64{s.QueueP50, s.QueueP99}}, {s.HasWorkLatency, [2]float64{s.WorkP50, s.WorkP99}}} {
				for _, v := range q.vals {
					if math.IsNaN(v) || math.IsInf(v, 0) || (!q.has && v != 0) {
						t.Errorf("sample %q/%q: quantile %v with has=%v", s.Controller, s.Name, v, q.has)
					}
				}
			}
		}
	})
}
