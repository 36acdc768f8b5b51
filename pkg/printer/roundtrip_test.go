package printer

// The printer's -o json lines are the recording format's: these tests encode with the printer,
// decode with pkg/recording, and check that the two give the same bytes and human lines back.

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// controllerQueueEvents are ControllerQueue lines with and without latencies (sample() has none).
func controllerQueueEvents() []watch.Event {
	return []watch.Event{
		{
			Type: watch.ControllerQueue,
			Time: t0,
			Scrape: watch.ScrapeInfo{URL: "http://127.0.0.1:8080/metrics", Sample: &watch.QueueSample{
				Name: "deployment", Controller: "deployment", Depth: 7, Adds: 45, Retries: 1, UnfinishedSeconds: 12.5, LongestRunningSeconds: 12.5,
				HasQueueLatency: true, QueueP50: 0.00001, QueueP99: 1000, HasWorkLatency: true, WorkP50: 0.1, WorkP99: 8.2,
			}},
		},
		{Type: watch.ControllerQueue, Time: t0.Add(time.Second), Scrape: watch.ScrapeInfo{URL: "http://127.0.0.1:8080/metrics", Sample: &watch.QueueSample{Name: "plain", Depth: 0, Adds: 3}}},
		controllerRuntimeQueue(),
		{Type: watch.ControllerQueue, Time: t0.Add(3 * time.Second), Scrape: watch.ScrapeInfo{URL: "https://127.0.0.1:10257/metrics"}, Lifecycle: watch.LifecycleInfo{Message: "no workqueue metrics on this page (12 metric families, none named workqueue_*)"}},
	}
}

func roundTripEvents() []watch.Event {
	events := append(sample(), controllerQueueEvents()...)
	events = append(events, causalityEvents()...)
	events = append(events, controllerReconcileEvents()...)
	// A scrape failure: an Error line without a resource.
	events = append(events, watch.Event{Type: watch.Error, Time: t0, Lifecycle: watch.LifecycleInfo{Verb: "scrape", Reason: "ScrapeFailed", Message: "connection refused"}},
		watch.Event{Type: watch.Recovered, Time: t0, Resource: deploy, Lifecycle: watch.LifecycleInfo{Verb: "watch", Message: "watch works again after 3 failed attempts"}},
		// watch deploy/nosuch: the Synced line says the object is not there.
		watch.Event{Type: watch.Synced, Time: t0, Resource: deploy, Lifecycle: watch.LifecycleInfo{Items: 0, NotFound: &watch.ObjectKey{Namespace: "demo", Name: "nosuch"}}, ResourceVersion: "100"},
		watch.Event{Type: watch.Synced, Time: t0, Resource: deploy, Lifecycle: watch.LifecycleInfo{Items: 0, NotFound: &watch.ObjectKey{Name: "nosuch"}}, ResourceVersion: "100"})
	return append(events, apiStatsEvents()...)
}

// Updates with their old objects (managers, --diff) and a hot loop: a Decoder gives the
// updates their old objects back from the stream, so the lines come out the same.
func TestDecoderRoundTripChanges(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	events := changeSample(t)
	for _, opts := range []Options{
		{Output: "json"},
		{Output: "json", Diff: "inline"},
		{Output: "json", Diff: "full"},
	} {
		t.Run(opts.Diff, func(t *testing.T) {
			lines := encodeLines(t, opts, events)
			dec := recording.NewDecoder()
			var decoded []watch.Event
			for i, line := range lines {
				d, err := dec.Decode(line)
				if err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				decoded = append(decoded, d.Event)
				if again := encodeLines(t, opts, []watch.Event{d.Event})[0]; !bytes.Equal(again, line) {
					t.Errorf("line %d (%s) does not round-trip:\n%s", i+1, d.Event.Type, cmp.Diff(string(line), string(again)))
				}
			}
			for _, human := range []Options{{Diff: opts.Diff}, {Output: "wide", Diff: opts.Diff}} {
				if diff := cmp.Diff(render(t, human, events), render(t, human, decoded)); diff != "" {
					t.Errorf("human output (%+v) of decoded events differs:\n%s", human, diff)
				}
			}
		})
	}
	// Without the stream (DecodeEvent alone) an update has no old object, hence no managers.
	line := encodeLines(t, Options{Output: "json"}, events[2:3])[0]
	ev, err := recording.DecodeEvent(line)
	if err != nil || ev.Obj.OldObject != nil {
		t.Errorf("DecodeEvent: old object %v, %v", ev.Obj.OldObject, err)
	}
}

func encodeLines(t *testing.T, opts Options, events []watch.Event) [][]byte {
	t.Helper()
	out := render(t, opts, events)
	lines := bytes.Split(bytes.TrimSuffix([]byte(out), []byte("\n")), []byte("\n"))
	if len(lines) != len(events) {
		t.Fatalf("%d events gave %d lines", len(events), len(lines))
	}
	return lines
}

// encode → decode → encode gives the same bytes, for every event type; and the decoded events
// print the same human lines as the originals.
func TestDecodeRoundTrip(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	opts := Options{Output: "json", PluginVersion: "v1.0.0"}
	events := roundTripEvents()
	lines := encodeLines(t, opts, events)
	var decoded []watch.Event
	for i, line := range lines {
		d, err := recording.DecodeLine(line)
		if err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		if d.Header != nil {
			t.Fatalf("line %d decoded as a header", i+1)
		}
		if d.Event.Type == watch.Informer && (d.PluginVersion != "v1.0.0" || !d.SecretsRedacted) {
			t.Errorf("Informer line: pluginVersion %q, secretsRedacted %v", d.PluginVersion, d.SecretsRedacted)
		}
		decoded = append(decoded, d.Event)
		again := encodeLines(t, opts, []watch.Event{d.Event})[0]
		if !bytes.Equal(again, line) {
			t.Errorf("line %d (%s) does not round-trip:\n%s", i+1, d.Event.Type, cmp.Diff(string(line), string(again)))
		}
		ev, err := recording.DecodeEvent(line)
		if err != nil || ev.Type != events[i].Type {
			t.Errorf("DecodeEvent line %d: %v, %v", i+1, ev.Type, err)
		}
	}
	for _, o := range []Options{{}, {ShowBookmarks: true, ShowReconciles: true}, {Color: true}} {
		if diff := cmp.Diff(render(t, o, events), render(t, o, decoded)); diff != "" {
			t.Errorf("human output of decoded events differs (%+v):\n%s", o, diff)
		}
	}
}

// The golden JSON file decodes and re-encodes to itself, byte for byte.
func TestDecodeGoldenFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "events.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	p := New(&buf, Options{Output: "json", PluginVersion: "v1.0.0"})
	sc := bufio.NewScanner(bytes.NewReader(want))
	sc.Buffer(nil, 1<<20)
	// sample()'s updates carry no old objects, unlike an informer's: decode without a Decoder.
	for n := 1; sc.Scan(); n++ {
		ev, err := recording.DecodeEvent(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if err := p.Print(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("events.ndjson does not round-trip:\n%s", diff)
	}
}

// A recording's redacted Secret prints as recorded: not redacted a second time.
func TestPrintRecordedSecret(t *testing.T) {
	line := encodeLines(t, Options{Output: "json"}, []watch.Event{secretEvent()})[0]
	if bytes.Contains(line, []byte("hunter2")) {
		t.Fatal("the recording leaks the secret")
	}
	ev, err := recording.DecodeEvent(line)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	p := New(&buf, Options{Output: "json"})
	if err := p.PrintRecorded(&ev, true); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSuffix(buf.String(), "\n"); got != string(line) {
		t.Errorf("PrintRecorded changed the redacted secret:\n%s", cmp.Diff(string(line), got))
	}
	// A recording made with --show-secrets is redacted on replay unless shown.
	shown := encodeLines(t, Options{Output: "json", ShowSecrets: true}, []watch.Event{secretEvent()})[0]
	ev, err = recording.DecodeEvent(shown)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	p = New(&buf, Options{Output: "json"})
	if err := p.PrintRecorded(&ev, false); err != nil {
		t.Fatal(err)
	}
	_ = p.Flush()
	if strings.Contains(buf.String(), "hunter2") || strings.TrimSuffix(buf.String(), "\n") != string(line) {
		t.Errorf("an unredacted recording is not redacted on replay:\n%s", buf.String())
	}
}

func TestDecodeHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.ndjson")
	r, err := NewRecorder(path, recording.Header{ServerVersion: "v1.37.1", Flags: map[string]string{"namespace": "demo"}},
		[]discovery.Resource{deploy}, false, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	ev := sample()[3]
	if err := r.Write(&ev); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	d, err := recording.DecodeLine(first)
	if err != nil {
		t.Fatal(err)
	}
	h := d.Header
	if h == nil || h.FormatVersion != recording.FormatVersion || h.PluginVersion != "v1.2.3" || h.ServerVersion != "v1.37.1" || !h.SecretsRedacted || h.Flags["namespace"] != "demo" {
		t.Fatalf("header = %+v", h)
	}
	if diff := cmp.Diff([]discovery.Resource{deploy}, h.ResourceList()); diff != "" {
		t.Errorf("resources:\n%s", diff)
	}
	if _, err := recording.DecodeEvent(first); err == nil {
		t.Error("DecodeEvent accepted a header")
	}
	got, err := recording.DecodeEvent(bytes.TrimSpace(rest))
	if err != nil || got.Name != "web" || got.Obj.Object.GetResourceVersion() != "90" {
		t.Errorf("event after the header: %+v, %v", got, err)
	}
}

// Newer recordings stay readable: unknown fields are ignored, unknown types are told apart.
func TestDecodeForwardCompatible(t *testing.T) {
	line := encodeLines(t, Options{Output: "json"}, sample()[5:6])[0]
	extended := append([]byte(`{"futureField":{"a":[1,2]},`), line[1:]...)
	ev, err := recording.DecodeEvent(extended)
	if err != nil {
		t.Fatal(err)
	}
	if again := encodeLines(t, Options{Output: "json"}, []watch.Event{ev})[0]; !bytes.Equal(again, line) {
		t.Errorf("unknown field changed the event:\n%s", cmp.Diff(string(line), string(again)))
	}
	_, err = recording.DecodeEvent([]byte(`{"time":"2026-11-21T05:00:00Z","type":"Teleported","name":"x"}`))
	var unknown *recording.UnknownTypeError
	if !errors.As(err, &unknown) || unknown.Type != "Teleported" {
		t.Errorf("unknown type: %v", err)
	}
	_, err = recording.DecodeLine([]byte(`{"type":"Recording","formatVersion":7,"someday":true}`))
	if err != nil {
		t.Errorf("newer header: %v (the reader, not the decoder, decides about versions)", err)
	}
}
