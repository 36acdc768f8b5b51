package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// fixture is a real recording (pkg/replay's): a relist with a tombstone, resyncs, a watch
// restart, an update by e2e.test.
const fixture = "../../pkg/replay/testdata/configmaps.ndjson"

// lineCounts counts a recording's lines independently of the report: object events by series,
// marker lines by type, and each object's events and history, straight from the JSON.
type lineCounts struct {
	series  map[string]map[string]int // resource -> series -> n
	markers map[string]int
	objects map[string]int      // "resource ns/name" -> object events + HotLoop lines
	rvs     map[string][]string // "resource ns/name" -> resourceVersions of its object events
}

func countLines(t *testing.T, data []byte) lineCounts {
	t.Helper()
	c := lineCounts{series: map[string]map[string]int{}, markers: map[string]int{}, objects: map[string]int{}, rvs: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		res, _ := m["resource"].(string)
		if g, _ := m["group"].(string); g != "" {
			res += "." + g
		}
		typ, _ := m["type"].(string)
		key := fmt.Sprintf("%s %v/%v", res, m["namespace"], m["name"])
		switch typ {
		case "Added", "Updated", "Deleted":
			s := "updated"
			switch {
			case m["initialList"] == true:
				s = "initial"
			case m["tombstone"] == true || m["delta"] == "Replaced":
				s = "relist"
			case m["delta"] == "Sync":
				s = "resync"
			case typ == "Added":
				s = "added"
			case typ == "Deleted":
				s = "deleted"
			}
			if c.series[res] == nil {
				c.series[res] = map[string]int{}
			}
			c.series[res][s]++
			c.objects[key]++
			c.rvs[key] = append(c.rvs[key], m["resourceVersion"].(string))
		case "HotLoop", "HotLoopEnded":
			c.objects[key]++
			c.markers[typ]++
		case "Error":
			if m["verb"] == "scrape" {
				c.markers["ScrapeError"]++
			} else {
				c.markers["Error"]++
			}
		case "Watch", "WatchClosed", "Relist", "Synced":
			c.markers[typ]++
		}
	}
	return c
}

func readFile(t *testing.T, path string) ([]byte, *Report) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	return data, r
}

// The report's counts are the recording's: per resource and series, per marker type, per
// object, with every resourceVersion of an object's history in order.
func TestReadCountsMatchRecording(t *testing.T) {
	data, r := readFile(t, fixture)
	want := countLines(t, data)
	got := map[string]map[string]int{}
	for _, res := range r.Resources {
		got[res.Name] = res.Counts
		bars := map[string]int{}
		for _, b := range res.Bars {
			for s, n := range b {
				bars[s] += n
			}
		}
		if d := cmp.Diff(res.Counts, bars); d != "" {
			t.Errorf("%s: the buckets do not add up to the counts (-counts +buckets):\n%s", res.Name, d)
		}
	}
	if d := cmp.Diff(want.series, got); d != "" {
		t.Errorf("series counts (-recording +report):\n%s", d)
	}
	markers := map[string]int{}
	for _, m := range r.Markers {
		markers[m.Type]++
	}
	if d := cmp.Diff(want.markers, markers); d != "" {
		t.Errorf("markers (-recording +report):\n%s", d)
	}
	restarts := 0
	for _, m := range r.Markers {
		if m.Restart {
			restarts++
		}
	}
	if restarts != 2 {
		t.Errorf("%d watch restarts, want 2 (three Watch lines in one run)", restarts)
	}
	for _, o := range r.Objects {
		key := o.Resource + " " + o.Namespace + "/" + o.Name
		if o.Total() != want.objects[key] {
			t.Errorf("%s: %d history entries, want %d", key, o.Total(), want.objects[key])
		}
		var rvs []string
		for _, e := range o.History {
			rvs = append(rvs, e.ResourceVersion)
		}
		if d := cmp.Diff(want.rvs[key], rvs); d != "" {
			t.Errorf("%s: resourceVersions (-recording +history):\n%s", key, d)
		}
	}
	if len(r.Objects) != len(want.objects) {
		t.Errorf("%d objects, want %d", len(r.Objects), len(want.objects))
	}
	// The update of demo/a by e2e.test changed data.v: writers, changes, rule.
	a := r.Objects[0]
	if a.Key() != "demo/a" || a.Changes != 1 || len(a.Writers) != 1 || a.Writers[0].Manager != "e2e.test" {
		t.Fatalf("the most changed object is %s with %d changes by %v, want demo/a, 1, e2e.test", a.Key(), a.Changes, a.Writers)
	}
	var upd *Entry
	for i := range a.History {
		if a.History[i].Series == SeriesUpdated {
			upd = &a.History[i]
		}
	}
	if upd == nil || len(upd.Changes) != 1 || upd.Changes[0] != (Change{Path: "data.v", Old: `"1"`, New: `"2"`, HasOld: true, HasNew: true}) {
		t.Errorf("demo/a's update: %+v, want data.v \"1\" -> \"2\"", upd)
	}
	if !strings.Contains(r.Summary, "summary of "+fixture) || !strings.Contains(r.Summary, "1 relists, 2 watch restarts") {
		t.Errorf("summary:\n%s", r.Summary)
	}
}

func TestSeriesOf(t *testing.T) {
	tests := []struct {
		name string
		ev   watch.Event
		want string
	}{
		{"initial list", watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced, InitialList: true}}, SeriesInitial},
		{"watch add", watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}}, SeriesAdded},
		{"watch update", watch.Event{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated}}, SeriesUpdated},
		{"watch delete", watch.Event{Type: watch.Deleted, Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted}}, SeriesDeleted},
		{"tombstone", watch.Event{Type: watch.Deleted, Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Tombstone: true}}, SeriesRelist},
		{"relist update", watch.Event{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced}}, SeriesRelist},
		{"relist add", watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced}}, SeriesRelist},
		{"resync", watch.Event{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaSync}}, SeriesResync},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SeriesOf(&tt.ev); got != tt.want {
				t.Errorf("SeriesOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBucketFor(t *testing.T) {
	tests := []struct {
		span, want time.Duration
	}{
		{0, 100 * time.Millisecond},
		{30 * time.Second, 100 * time.Millisecond},
		{50 * time.Second, 200 * time.Millisecond},
		{10 * time.Minute, 2 * time.Second},
		{time.Hour, 10 * time.Second},
		{24 * time.Hour, 5 * time.Minute},
	}
	for _, tt := range tests {
		if got := BucketFor(tt.span); got != tt.want {
			t.Errorf("BucketFor(%s) = %s, want %s", tt.span, got, tt.want)
		}
		if n := int(tt.span/BucketFor(tt.span)) + 1; n > MaxBuckets {
			t.Errorf("BucketFor(%s): %d buckets, more than %d", tt.span, n, MaxBuckets)
		}
	}
}

// rec builds a recording line by line.
type rec struct {
	b  strings.Builder
	t0 time.Time
}

func newRec() *rec {
	r := &rec{t0: time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)}
	r.b.WriteString(`{"type":"Recording","formatVersion":1,"time":"2026-11-21T05:00:00Z","pluginVersion":"v9","serverVersion":"v1.37.1","resources":[{"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespaced":true}],"secretsRedacted":true,"flags":{"namespace":"demo"}}` + "\n")
	return r
}

// line adds a line at ms milliseconds after t0; fields is the JSON after type and time.
func (r *rec) line(ms int, typ, fields string) {
	at := r.t0.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano)
	fmt.Fprintf(&r.b, `{"time":%q,"type":%q%s}`+"\n", at, typ, fields)
}

func cm(ns, name, rv, manager, t, value string) string {
	return fmt.Sprintf(`,"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","namespace":%q,"name":%q,"resourceVersion":%q,"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"resourceVersion":%q,"managedFields":[{"manager":%q,"operation":"Update","apiVersion":"v1","time":%q,"fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}}}]},"data":{"k":%q}}`,
		ns, name, rv, name, ns, rv, manager, t, value)
}

// An object's history keeps its first and newest entries and counts the others; the queue's
// depth is the highest in a bucket and carried into buckets without a sample.
func TestHistoryCapAndQueueDepth(t *testing.T) {
	r := newRec()
	r.line(0, "Added", cm("demo", "busy", "1", "m", "2026-11-21T05:00:00Z", "0")+`,"delta":"Added","queue":{"depth":1,"adds":1,"retries":0}`)
	n := 1000
	for i := 1; i <= n; i++ {
		ts := fmt.Sprintf("2026-11-21T05:00:%02dZ", i/20)
		r.line(i*10, "Updated", cm("demo", "busy", fmt.Sprint(i+1), fmt.Sprintf("m%d", i%2), ts, fmt.Sprint(i))+
			fmt.Sprintf(`,"oldResourceVersion":%q,"delta":"Updated","queue":{"depth":%d,"adds":1,"retries":0}`, fmt.Sprint(i), 1+i%3))
	}
	rep, err := Read(strings.NewReader(r.b.String()), "busy.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Objects[0]
	if o.Total() != n+1 || len(o.History) != HistoryHead+HistoryTail || o.Elided != n+1-HistoryHead-HistoryTail {
		t.Fatalf("total %d, kept %d, elided %d; want %d, %d, %d", o.Total(), len(o.History), o.Elided, n+1, HistoryHead+HistoryTail, n+1-HistoryHead-HistoryTail)
	}
	if o.History[0].ResourceVersion != "1" || o.History[HistoryHead].ResourceVersion != fmt.Sprint(n+2-HistoryTail) || o.History[len(o.History)-1].ResourceVersion != fmt.Sprint(n+1) {
		t.Errorf("kept %s, %s, %s; want the first, then the newest %d", o.History[0].ResourceVersion, o.History[HistoryHead].ResourceVersion, o.History[len(o.History)-1].ResourceVersion, HistoryTail)
	}
	if o.Changes != n || len(o.Writers) != 2 || o.Writers[0].Count+o.Writers[1].Count != n {
		t.Errorf("changes %d, writers %+v; want %d changes by m0 and m1", o.Changes, o.Writers, n)
	}
	q := rep.SimQueues[0]
	if q.Lines != n+1 || q.MaxDepth != 3 {
		t.Errorf("queue: %d lines, max %v; want %d, 3", q.Lines, q.MaxDepth, n+1)
	}
	for i, d := range q.Depth {
		if !q.Valid[i] || d < 1 || d > 3 {
			t.Errorf("bucket %d: depth %v (valid %v), want 1..3 everywhere", i, d, q.Valid[i])
		}
	}
}

func TestReadBadInput(t *testing.T) {
	good := newRec()
	good.line(0, "Added", cm("demo", "a", "1", "m", "2026-11-21T05:00:00Z", "x")+`,"delta":"Added"`)
	tests := []struct {
		name    string
		in      string
		wantErr string
		report  bool // a report is still made
	}{
		{"empty", "", "x is empty: not a recording", false},
		{"blank lines", "\n\n", "x is empty: not a recording", false},
		{"not JSON", "hello world\n", "x is not a recording: line 1: invalid JSON", false},
		{"JSON, not a recording", `{"kind":"ConfigMap"}` + "\n", `x is not a recording: line 1: no "type" field`, false},
		{"newer format", `{"type":"Recording","formatVersion":9}` + "\n", "format version 9", false},
		{"damaged line", good.b.String() + `{"time":"2026-11-21T05:00:01Z","type":"Added"` + "\n", "x: 1 damaged line not in the report (line 3; the first: line 3: invalid JSON", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Read(strings.NewReader(tt.in), "x")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var d *DamagedError
			if (r != nil) != tt.report || errors.As(err, &d) != tt.report {
				t.Errorf("report %v, damaged error %v; want %v", r != nil, errors.As(err, &d), tt.report)
			}
		})
	}
}

// Recording text is server data: names, managers, values and messages that look like markup
// end up as text, never as markup or script; a Secret's values (recorded with --show-secrets)
// never reach the page.
func TestHTMLEscapesRecordingText(t *testing.T) {
	r := newRec()
	evil := `</script><script>alert(1)</script><img src=x onerror=alert(2)>`
	r.line(0, "Added", cm("demo", "a", "1", "m", "2026-11-21T05:00:00Z", "x")+`,"delta":"Added"`)
	r.line(10, "Updated", cm("demo", "a", "2", evil, "2026-11-21T05:00:01Z", evil)+`,"oldResourceVersion":"1","delta":"Updated"`)
	r.line(20, "Error", fmt.Sprintf(`,"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","reason":"Forbidden","message":%q,"verb":"watch"`, evil))
	r.line(30, "Added", `,"group":"","version":"v1","resource":"secrets","kind":"Secret","namespace":"demo","name":"s","resourceVersion":"3","delta":"Added","object":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"demo","resourceVersion":"3"},"data":{"password":"aHVudGVyMg=="}}`)
	r.line(40, "Updated", `,"group":"","version":"v1","resource":"secrets","kind":"Secret","namespace":"demo","name":"s","resourceVersion":"4","oldResourceVersion":"3","delta":"Updated","object":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"demo","resourceVersion":"4"},"data":{"password":"c3dvcmRmaXNo"}}`)
	rep, err := Read(strings.NewReader(r.b.String()), evil)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if n := strings.Count(strings.ToLower(html), "<script"); n != 2 {
		t.Errorf("%d <script elements, want 2 (the data and the page's own)", n)
	}
	for _, bad := range []string{"<img", "alert(1)</script>", "aHVudGVyMg==", "c3dvcmRmaXNo", "hunter2", "swordfish"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if !strings.Contains(html, "&lt;img src=x onerror=alert(2)&gt;") {
		t.Errorf("the hostile text is not shown escaped")
	}
	if !regexp.MustCompile(`<code>data.password</code>: <span class="old">&lt;redacted&gt;</span>`).MatchString(html) {
		t.Errorf("the Secret's changed value is not shown as <redacted>")
	}
	if !strings.Contains(html, `http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;`) {
		t.Errorf("no Content-Security-Policy forbidding requests")
	}
}

// The page draws what the report counted: bars adding up to each resource's events, one marker
// element per marker, one history row per kept entry.
func TestHTMLCarriesTheCounts(t *testing.T) {
	_, r := readFile(t, fixture)
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	sum := 0
	for _, m := range regexp.MustCompile(`<rect class="bar [^>]*data-count="(\d+)"`).FindAllStringSubmatch(html, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	total := 0
	for _, res := range r.Resources {
		for _, n := range res.Counts {
			total += n
		}
	}
	if sum != total {
		t.Errorf("bars add up to %d events, want %d", sum, total)
	}
	if n := strings.Count(html, `<g class="marker`); n != len(r.Markers) {
		t.Errorf("%d marker elements, want %d", n, len(r.Markers))
	}
	rows := strings.Count(html, `<tr class="entry`)
	kept := 0
	for _, o := range r.Objects {
		kept += len(o.History)
	}
	if rows != kept {
		t.Errorf("%d history rows, want %d", rows, kept)
	}
}

// A simulated queue's depth is carried between samples only when Reconciled lines say when it
// drained; otherwise only the buckets with an enqueue have a depth.
func TestSimulatedDepthCarried(t *testing.T) {
	for _, reconciled := range []bool{false, true} {
		r := newRec()
		r.line(0, "Added", cm("demo", "a", "1", "m", "2026-11-21T05:00:00Z", "x")+`,"delta":"Added","queue":{"depth":2,"adds":1,"retries":0}`)
		if reconciled {
			r.line(2000, "Reconciled", `,"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","key":"demo/a","waitMs":1,"workMs":0,"requeues":0,"error":false,"queue":{"depth":0,"adds":1,"retries":0},"triggerCount":1`)
		}
		r.line(4000, "Added", cm("demo", "b", "2", "m", "2026-11-21T05:00:04Z", "x")+`,"delta":"Added","queue":{"depth":1,"adds":2,"retries":0}`)
		rep, err := Read(strings.NewReader(r.b.String()), "q")
		if err != nil {
			t.Fatal(err)
		}
		q := rep.SimQueues[0]
		mid := rep.bucketOf(r.t0.Add(time.Second))
		late := rep.bucketOf(r.t0.Add(3 * time.Second))
		switch {
		case !reconciled && (q.Valid[mid] || q.Valid[late]):
			t.Errorf("without Reconciled lines, buckets without an enqueue have a depth (%v, %v)", q.Depth[mid], q.Depth[late])
		case reconciled && (!q.Valid[mid] || q.Depth[mid] != 2 || !q.Valid[late] || q.Depth[late] != 0):
			t.Errorf("with Reconciled lines, depth %v before the reconcile and %v after, want 2 and 0", q.Depth[mid], q.Depth[late])
		}
	}
}

// An Event a controller wrote about a watched object (--events) is in that object's history.
func TestKubeEventInHistory(t *testing.T) {
	r := newRec()
	r.line(0, "Added", cm("demo", "a", "1", "m", "2026-11-21T05:00:00Z", "x")+`,"delta":"Added"`)
	r.line(10, "KubeEvent", `,"group":"events.k8s.io","version":"v1","resource":"events","kind":"Event","namespace":"demo","name":"a.1","resourceVersion":"5","delta":"Added","eventType":"Warning","reason":"Broken","note":"<b>it broke</b>","reportingController":"ctl","regarding":{"apiVersion":"v1","kind":"ConfigMap","namespace":"demo","name":"a"},"count":3`)
	r.line(20, "KubeEvent", `,"group":"events.k8s.io","version":"v1","resource":"events","kind":"Event","namespace":"demo","name":"b.1","resourceVersion":"6","delta":"Added","eventType":"Normal","reason":"Other","note":"n","regarding":{"apiVersion":"v1","kind":"ConfigMap","namespace":"demo","name":"unknown"},"count":1`)
	rep, err := Read(strings.NewReader(r.b.String()), "ev")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Objects) != 1 {
		t.Fatalf("%d objects, want 1 (an Event is not an object of the timeline)", len(rep.Objects))
	}
	h := rep.Objects[0].History
	if len(h) != 2 || h[1].Type != "KubeEvent" || h[1].Text != "Warning Broken: <b>it broke</b> (by ctl) x3" {
		t.Errorf("history %+v, want the Added line and the Warning Event", h)
	}
	if n := len(rep.Resources); n != 1 {
		t.Errorf("%d timelines, want 1 (configmaps)", n)
	}
}

// B10: the command the page suggests for an object's elided history quotes the object's name
// and the file's, so that pasting it runs kubectl informer and nothing else.
func TestSuggestedCommandQuoted(t *testing.T) {
	const name = "x; touch PWNED #"
	r := newRec()
	r.line(0, "Added", cm("demo", name, "1", "m", "2026-11-21T05:00:00Z", "0")+`,"delta":"Added"`)
	for i := 1; i <= HistoryHead+HistoryTail+5; i++ {
		r.line(i*10, "Updated", cm("demo", name, fmt.Sprint(i+1), "m", "2026-11-21T05:00:01Z", fmt.Sprint(i))+
			fmt.Sprintf(`,"oldResourceVersion":%q,"delta":"Updated"`, fmt.Sprint(i)))
	}
	rep, err := Read(strings.NewReader(r.b.String()), "my rec$(id).ndjson")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	if want := `kubectl informer replay 'my rec$(id).ndjson' 'demo/x; touch PWNED #' --diff`; !strings.Contains(page, want) &&
		!strings.Contains(page, `kubectl informer replay 'my rec$(id).ndjson' 'x; touch PWNED #' --diff`) {
		i := strings.Index(page, "not shown: kubectl informer replay")
		t.Errorf("the suggestion is not quoted: %q", page[i:min(len(page), i+120)])
	}
}

// B9: a day of a flapping API server (here 100,000 Error lines) draws at most one mark per
// type and bucket, and the page stays small; the marks count what they stand for.
func TestReportSizeBoundedByMarkers(t *testing.T) {
	r := newRec()
	const n = 100_000
	for i := range n {
		r.line(i*500, "Error", `,"group":"","version":"v1","resource":"configmaps","kind":"ConfigMap","reason":"InternalError","message":"etcdserver: leader changed","verb":"watch"`)
	}
	rep, err := Read(strings.NewReader(r.b.String()), "flap.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if marks := strings.Count(page, `<g class="marker`); marks > MaxBuckets {
		t.Errorf("%d markers drawn, more than one per bucket (%d)", marks, MaxBuckets)
	}
	if len(page) > 2<<20 {
		t.Errorf("the page is %d bytes for %d Error lines", len(page), n)
	}
	if !strings.Contains(html.UnescapeString(page), "more Error in this bucket") {
		t.Error("no mark says how many more it stands for")
	}
}
