package apistats

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/util/flowcontrol"
)

// server answers /list with body (gzip-compressed when the client accepts it and zip is set),
// /busy with a 429, and /watch with a stream of lines it ends when told.
func server(t *testing.T, body string, zip bool) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderFlowSchemaUID, "fs-uid")
		w.Header().Set(HeaderPriorityLevelUID, "pl-uid")
		switch r.URL.Path {
		case "/busy":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, "too many requests")
		case "/list":
			if r.Header.Get("Authorization") == "" {
				t.Error("the request lost its headers")
			}
			if zip && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				_, _ = io.WriteString(zw, body)
				_ = zw.Close()
				return
			}
			_, _ = io.WriteString(w, body)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func get(ctx context.Context, t *testing.T, c *http.Client, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTransportCounts(t *testing.T) {
	body := strings.Repeat(`{"kind":"ConfigMap"}`, 500)
	tests := []struct {
		name                 string
		zip, disable         bool
		wantCompressed       int
		wantWireLessThanBody bool
	}{
		{name: "plain", zip: false},
		{name: "gzip", zip: true, wantCompressed: 1, wantWireLessThanBody: true},
		{name: "compression disabled", zip: true, disable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server(t, body, tt.zip)
			rec := NewRecorder()
			tr := &http.Transport{DisableCompression: tt.disable}
			c := &http.Client{Transport: rec.Wrap(tr, tt.disable)}
			ctx := WithResource(context.Background(), "configmaps", VerbList)
			if got := get(ctx, t, c, s.URL+"/list"); got != body {
				t.Fatalf("body = %d bytes, want the %d the server sent", len(got), len(body))
			}
			_ = get(context.Background(), t, c, s.URL+"/list") // untagged: not counted
			snap, ok := rec.Snapshot("configmaps")
			if !ok {
				t.Fatal("no figures for configmaps")
			}
			if diff := cmp.Diff([]Request{{Verb: VerbList, Code: 200, Count: 1}}, snap.Requests); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if snap.ListPages != 1 || snap.BytesDecoded != int64(len(body)) || snap.CompressedResponses != tt.wantCompressed {
				t.Errorf("pages %d, decoded %d (want %d), compressed %d (want %d)", snap.ListPages, snap.BytesDecoded, len(body), snap.CompressedResponses, tt.wantCompressed)
			}
			if less := snap.BytesReceived < snap.BytesDecoded; less != tt.wantWireLessThanBody {
				t.Errorf("received %d, decoded %d", snap.BytesReceived, snap.BytesDecoded)
			}
			if snap.APF.FlowSchemaUID != "fs-uid" || snap.APF.PriorityLevelUID != "pl-uid" {
				t.Errorf("APF = %+v", snap.APF)
			}
		})
	}
}

func TestTransportTooManyRequests(t *testing.T) {
	s := server(t, "", false)
	rec := NewRecorder()
	rec.Resolve = func(_ context.Context, a APF) APF {
		a.FlowSchema, a.PriorityLevel = "fs", "pl"
		return a
	}
	c := &http.Client{Transport: rec.Wrap(http.DefaultTransport, false)}
	_ = get(WithResource(context.Background(), "pods", VerbWatch), t, c, s.URL+"/busy")
	select {
	case n := <-rec.Notices():
		want := Notice{Kind: NoticeTooManyRequests, Resource: "pods", Verb: VerbWatch, RetryAfter: 2 * time.Second,
			APF: APF{FlowSchemaUID: "fs-uid", PriorityLevelUID: "pl-uid", FlowSchema: "fs", PriorityLevel: "pl"}}
		n.Time = time.Time{}
		if diff := cmp.Diff(want, n); diff != "" {
			t.Errorf("notice (-want +got):\n%s", diff)
		}
	default:
		t.Fatal("no notice for a 429")
	}
	snap, _ := rec.Snapshot("pods")
	if snap.Throttled != 1 || snap.RetryAfter != 2*time.Second || snap.WatchStreams != 0 || snap.Count(VerbWatch, 429) != 1 {
		t.Errorf("figures after a 429: %+v", snap)
	}
}

func TestWatchStreamLife(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer s.Close()
	rec := NewRecorder()
	c := &http.Client{Transport: rec.Wrap(http.DefaultTransport, false)}
	ctx := WithResource(context.Background(), "pods", VerbWatch)
	for i := range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 17)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		snap, _ := rec.Snapshot("pods")
		if snap.WatchOpen != 1 || snap.WatchStreams != i+1 || snap.Reconnects != i {
			t.Errorf("stream %d open: %+v", i, snap)
		}
		resp.Body.Close()
		snap, _ = rec.Snapshot("pods")
		if snap.WatchOpen != 0 || snap.WatchesClosed != i+1 || snap.WatchLivedMax <= 0 {
			t.Errorf("stream %d closed: %+v", i, snap)
		}
	}
	close(release)
}

// fakeLimiter holds each Wait for delay.
type fakeLimiter struct {
	flowcontrol.RateLimiter
	delay time.Duration
}

func (f fakeLimiter) Wait(context.Context) error { time.Sleep(f.delay); return nil }

func TestRateLimiterWaits(t *testing.T) {
	rec := NewRecorder()
	l := rec.RateLimiter(fakeLimiter{delay: ClientThrottleNotice})
	if err := l.Wait(WithResource(context.Background(), "pods", VerbList)); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(context.Background()); err != nil { // untagged
		t.Fatal(err)
	}
	snap, _ := rec.Snapshot("pods")
	if snap.ClientWaits != 1 || snap.ClientWait < ClientThrottleNotice {
		t.Errorf("client waits %d, %s", snap.ClientWaits, snap.ClientWait)
	}
	select {
	case n := <-rec.Notices():
		if n.Kind != NoticeClientThrottled || n.Resource != "pods" || n.Delay < ClientThrottleNotice {
			t.Errorf("notice %+v", n)
		}
	default:
		t.Error("no notice for a delay of ClientThrottleNotice")
	}
}

func TestListProgress(t *testing.T) {
	rec := NewRecorder()
	rec.Register("pods")
	rec.ListBegin("pods", false)
	rec.ListPage("pods", 500)
	rec.ListPage("pods", 20)
	p := rec.Progress()
	if len(p) != 1 || p[0].Pages != 2 || p[0].Objects != 520 || p[0].Streaming {
		t.Fatalf("progress %+v", p)
	}
	rec.ListEnd("pods")
	if p := rec.Progress(); len(p) != 0 {
		t.Errorf("progress after the list: %+v", p)
	}
	rec.ListBegin("pods", true)
	rec.WatchObject("pods", false)
	rec.WatchObject("pods", true)
	if p := rec.Progress(); len(p) != 1 || p[0].Objects != 1 || !p[0].Streaming {
		t.Errorf("streaming progress %+v", p)
	}
	rec.ListAbort("pods")
	snap, _ := rec.Snapshot("pods")
	if snap.Lists != 1 || snap.LastListPages != 2 || snap.Objects != 521 || snap.Bookmarks != 1 || snap.StreamingLists != 0 {
		t.Errorf("figures %+v", snap)
	}
}

// A nil recorder is a no-op everywhere the informers call it.
func TestNilRecorder(t *testing.T) {
	var rec *Recorder
	rec.Register("x")
	rec.ListBegin("x", true)
	rec.ListPage("x", 1)
	rec.ListEnd("x")
	rec.ListAbort("x")
	rec.WatchObject("x", false)
	if _, ok := rec.APFOf(context.Background(), "x"); ok || rec.Snapshots() != nil || rec.Progress() != nil || rec.Notices() != nil {
		t.Error("a nil recorder has figures")
	}
	if rec.Wrap(http.DefaultTransport, false) != http.DefaultTransport {
		t.Error("a nil recorder wraps the transport")
	}
}
