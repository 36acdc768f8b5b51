package replay

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	cmRes = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	cmGVR = cmRes.GVR()
	t0    = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
)

func cm(name, rv, value string) *unstructured.Unstructured {
	u := testutil.Object("v1", "ConfigMap", "demo", name, rv)
	u.Object["data"] = map[string]any{"v": value}
	return u
}

// traffic is what the plugin records for: an initial list of a, b, c (streaming); d added, a
// updated, d deleted; a resync; the watch lost; a relist that finds b gone (tombstone), a
// unchanged, c changed and e new; then e updated on the new watch.
func traffic() []watch.Event {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	obj := func(t watch.Type, delta watch.Delta, ms int, name, oldRV, rv, value string) watch.Event {
		return watch.Event{
			Type:            t,
			Time:            at(ms),
			Resource:        cmRes,
			Namespace:       "demo",
			Name:            name,
			ResourceVersion: rv,
			Obj: watch.ObjectInfo{
				OldResourceVersion: oldRV,
				Delta:              delta,
				Object:             cm(name, rv, value),
			},
		}
	}
	initial := func(ms int, name, rv string) watch.Event {
		ev := obj(watch.Added, watch.DeltaReplaced, ms, name, "", rv, "1")
		ev.Obj.InitialList = true
		return ev
	}
	tomb := obj(watch.Deleted, watch.DeltaDeleted, 4200, "b", "", "11", "1")
	tomb.Obj.Tombstone = true
	return []watch.Event{
		{Type: watch.Informer, Time: at(0), Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, WatchList: true, Namespace: "demo", Resources: []discovery.Resource{cmRes}}}},
		{Type: watch.Watch, Time: at(1), Resource: cmRes, Lifecycle: watch.LifecycleInfo{SendInitialEvents: true, TimeoutSeconds: 480}},
		{Type: watch.Bookmark, Time: at(5), Resource: cmRes, ResourceVersion: "100", Lifecycle: watch.LifecycleInfo{InitialEventsEnd: true}},
		initial(5, "a", "10"),
		initial(5, "b", "11"),
		initial(5, "c", "12"),
		{Type: watch.Synced, Time: at(5), Resource: cmRes, Lifecycle: watch.LifecycleInfo{Items: 3, Duration: 5 * time.Millisecond}, ResourceVersion: "100"},
		obj(watch.Added, watch.DeltaAdded, 1000, "d", "", "101", "1"),
		obj(watch.Updated, watch.DeltaUpdated, 1500, "a", "10", "102", "2"),
		obj(watch.Deleted, watch.DeltaDeleted, 2000, "d", "", "103", "1"),
		{Type: watch.Reconciled, Time: at(2100), Resource: cmRes, Key: "demo/d", Queued: watch.QueuedInfo{Work: time.Millisecond}, Obj: watch.ObjectInfo{Queue: &watch.QueueFigures{}}},
		{Type: watch.Resync, Time: at(3000), Resource: cmRes, Lifecycle: watch.LifecycleInfo{Items: 3}},
		obj(watch.Updated, watch.DeltaSync, 3000, "a", "102", "102", "2"),
		{Type: watch.WatchClosed, Time: at(4000), Resource: cmRes, Lifecycle: watch.LifecycleInfo{Reason: "connection lost or closed by the server after 4s"}, ResourceVersion: "103"},
		{Type: watch.Error, Time: at(4100), Resource: cmRes, Lifecycle: watch.LifecycleInfo{Verb: "watch", Reason: "Expired", Message: "too old resource version: 103 (115)"}},
		{Type: watch.Watch, Time: at(4100), Resource: cmRes, ResourceVersion: "103", Lifecycle: watch.LifecycleInfo{SendInitialEvents: true, TimeoutSeconds: 480}},
		{Type: watch.Bookmark, Time: at(4200), Resource: cmRes, ResourceVersion: "120", Lifecycle: watch.LifecycleInfo{InitialEventsEnd: true}},
		{
			Type:     watch.Relist,
			Time:     at(4200),
			Resource: cmRes,
			Lifecycle: watch.LifecycleInfo{
				Reason:              "Expired: too old resource version: 103 (115)",
				FromResourceVersion: "103",
				Counts:              watch.RelistCounts{Added: 1, Updated: 1, Deleted: 1, Unchanged: 1},
			},
			ResourceVersion: "120",
		},
		tomb,
		obj(watch.Updated, watch.DeltaReplaced, 4200, "a", "102", "102", "2"),
		obj(watch.Updated, watch.DeltaReplaced, 4200, "c", "12", "115", "2"),
		obj(watch.Added, watch.DeltaReplaced, 4200, "e", "", "118", "1"),
		obj(watch.Updated, watch.DeltaUpdated, 5000, "e", "118", "121", "2"),
	}
}

// fixture is a real recording: `kubectl informer watch cm -n demo --resync 3s --record` against
// a test cluster, made by test/e2e's TestRecordReplayFixture:
//
//	KUBEBUILDER_ASSETS=$(hack/testcluster/build.sh) go test ./test/e2e -run TestRecordReplayFixture -regenerate
//
// The tests below take resourceVersions from it, never from memory, so that a new recording
// needs no edit here.
var fixture = filepath.Join("testdata", "configmaps.ndjson")

func openFixture(t *testing.T) *Recording {
	t.Helper()
	rec, err := Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// The fixture is a possible recording, and holds what the tests need: a streaming initial list,
// watch events, resyncs (with the resync period that makes them), a lost watch, a relist with a
// tombstone, an unchanged and a changed delivery and a new object, and a watch event after it.
func TestFixtureIsARealRecording(t *testing.T) {
	rec := openFixture(t)
	if rec.Header == nil || rec.Header.ServerVersion == "" || rec.Header.Flags["resync"] != "3s" {
		t.Fatalf("header %+v: want a recording's, made with --resync 3s", rec.Header)
	}
	var info *watch.InformerInfo
	seen := map[string]int{}
	var last time.Time
	for i, ev := range rec.Events {
		if ev.Time.Before(last) {
			t.Errorf("event %d (%s) goes back in time", i, ev.Type)
		}
		last = ev.Time
		switch {
		case ev.Type == watch.Informer:
			info = ev.Lifecycle.Info
		case ev.Type == watch.Resync:
			if info == nil || info.ResyncPeriod <= 0 {
				t.Errorf("a Resync line in a run without a resync period (%+v)", info)
			}
		case ev.Type.IsObject() && ev.Namespace != "demo":
			t.Errorf("%s %s/%s: not in namespace demo", ev.Type, ev.Namespace, ev.Name)
		}
		key := string(ev.Type)
		if ev.Type.IsObject() {
			key += "/" + string(ev.Obj.Delta)
			if ev.Obj.Tombstone {
				key += "/tombstone"
			}
			if ev.Type == watch.Updated && ev.Obj.Delta == watch.DeltaReplaced && ev.Obj.OldResourceVersion == ev.ResourceVersion {
				key += "/unchanged"
			}
		}
		seen[key]++
	}
	if info == nil || !info.WatchList || info.ResyncPeriod != 3*time.Second {
		t.Errorf("Informer line %+v: want streaming lists and a 3s resync period", info)
	}
	for _, need := range []string{"Synced", "Bookmark", "Resync", "Updated/Sync", "WatchClosed", "Error", "Relist",
		"Added/Added", "Updated/Updated", "Deleted/Deleted", "Deleted/Deleted/tombstone", "Updated/Replaced/unchanged", "Updated/Replaced", "Added/Replaced"} {
		if seen[need] == 0 {
			t.Errorf("the fixture has no %s line (has %v); record it again", need, seen)
		}
	}
}

// recorded is the handler calls the live informer made, from the fixture's object lines: every
// one but the resync deliveries (a replaying informer makes its own resyncs).
func recorded(rec *Recording) []call {
	var out []call
	for _, ev := range rec.Events {
		if ev.Type.IsObject() && ev.Obj.Delta != watch.DeltaSync {
			out = append(out, callsOf([]watch.Event{ev})...)
		}
	}
	return out
}

// shape is a call without its resourceVersions: what the story of the fixture is.
func shape(calls []call) []string {
	var out []string
	for _, c := range calls {
		s := c.Op + " " + c.Key
		switch {
		case c.Initial:
			s += " initial"
		case c.Tombstone:
			s += " tombstone"
		case c.Op == "update" && c.Old == c.RV:
			s += " unchanged"
		}
		out = append(out, s)
	}
	return out
}

// call is one handler call, in words.
type call struct {
	Op, Key, RV string
	Old         string // OnUpdate: the old object's resourceVersion
	Initial     bool   // OnAdd: isInInitialList
	Tombstone   bool   // OnDelete: a cache.DeletedFinalStateUnknown
}

type recorder struct {
	mu    sync.Mutex
	calls []call
	added chan struct{}
}

func newRecorder() *recorder { return &recorder{added: make(chan struct{}, 1000)} }

func (r *recorder) add(c call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	r.added <- struct{}{}
}

func (r *recorder) handler() cache.ResourceEventHandler {
	key := func(o any) string { k, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(o); return k }
	rv := func(o any) string { return o.(*unstructured.Unstructured).GetResourceVersion() }
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(o any, initial bool) { r.add(call{Op: "add", Key: key(o), RV: rv(o), Initial: initial}) },
		UpdateFunc: func(old, o any) {
			r.add(call{Op: "update", Key: key(o), RV: rv(o), Old: rv(old)})
		},
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				r.add(call{Op: "delete", Key: t.Key, RV: rv(t.Obj), Tombstone: true})
				return
			}
			r.add(call{Op: "delete", Key: key(o), RV: rv(o)})
		},
	}
}

// wait waits for n calls and the ListerWatcher's end, then returns the calls.
func (r *recorder) wait(t *testing.T, n int, lw *ListerWatcher) []call {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-r.added:
		case <-timeout:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("%d handler calls, want %d: %+v", len(r.calls), n, r.calls)
		}
	}
	select {
	case <-lw.Done():
	case <-timeout:
		t.Fatal("the ListerWatcher did not finish")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

func runInformer(t *testing.T, lw cache.ListerWatcher, example *unstructured.Unstructured, resync time.Duration, h cache.ResourceEventHandler) cache.SharedIndexInformer {
	t.Helper()
	inf := cache.NewSharedIndexInformer(lw, example, resync, cache.Indexers{})
	if _, err := inf.AddEventHandler(h); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return inf
}

// A controller's own shared informer, fed the recording, calls its handler as it was called
// live: the initial list, watch deltas, then after the relist a tombstone, the unchanged, the
// changed and the new object; the recorded resync is not replayed.
func TestInformerReplaysRecording(t *testing.T) {
	rec := openFixture(t)
	if diff := cmp.Diff([]schema.GroupVersionResource{cmGVR}, rec.Resources()); diff != "" {
		t.Errorf("resources:\n%s", diff)
	}
	want := recorded(rec)
	story := []string{
		"add demo/a initial", "add demo/b initial", "add demo/c initial",
		"add demo/d", "update demo/a", "delete demo/d",
		"delete demo/b tombstone",
		// Unchanged, yet delivered: without a resync period, client-go's handlers stay "due".
		"update demo/a unchanged",
		"update demo/c", "add demo/e",
		"update demo/e",
	}
	if diff := cmp.Diff(story, shape(want)); diff != "" {
		t.Fatalf("the fixture does not tell the story the tests need (-want +got); record it again:\n%s", diff)
	}
	if diff := cmp.Diff(want, callsOf(rec.HandlerCalls(cmGVR))); diff != "" {
		t.Errorf("HandlerCalls (-recorded +got):\n%s", diff)
	}
	final := map[string]string{}
	for _, c := range want {
		name := strings.TrimPrefix(c.Key, "demo/")
		if c.Op == "delete" {
			delete(final, name)
		} else {
			final[name] = name + "@" + c.RV
		}
	}
	var wantFinal []string
	for _, v := range final {
		wantFinal = append(wantFinal, v)
	}
	lastRV := want[len(want)-1].RV

	for _, example := range []*unstructured.Unstructured{
		{},
		// With a kind, the reflector checks every watch event's kind.
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}},
	} {
		t.Run(fmt.Sprintf("example kind %q", example.GetKind()), func(t *testing.T) {
			lw := rec.ListerWatcher(cmGVR)
			if lw.Relists() != 1 {
				t.Errorf("Relists() = %d", lw.Relists())
			}
			r := newRecorder()
			inf := runInformer(t, lw, example, 0, r.handler())
			got := r.wait(t, len(want), lw)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("handler calls (-want +got):\n%s", diff)
			}
			var final []string
			for _, o := range inf.GetStore().List() {
				u := o.(*unstructured.Unstructured)
				final = append(final, u.GetName()+"@"+u.GetResourceVersion())
			}
			if diff := cmp.Diff(sorted(wantFinal), sorted(final)); diff != "" {
				t.Errorf("final cache:\n%s", diff)
			}
			if inf.LastSyncResourceVersion() != lastRV {
				t.Errorf("LastSyncResourceVersion = %q, want %s", inf.LastSyncResourceVersion(), lastRV)
			}
			select {
			case <-rec.Done():
			case <-time.After(10 * time.Second):
				t.Error("Recording.Done not closed")
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// What the reflector is served, call by call: resourceVersions from the recording, a 410 where
// the recording relisted, the final state on a List after the end.
func TestListerWatcherServes(t *testing.T) {
	rec := FromEvents(traffic())
	lw := rec.ListerWatcher(cmGVR)
	if !lw.IsWatchListSemanticsUnSupported() {
		t.Error("WatchList semantics not declined")
	}
	list := func(wantRV string, want ...string) {
		t.Helper()
		obj, err := lw.List(metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		l := obj.(*unstructured.UnstructuredList)
		var got []string
		for _, it := range l.Items {
			got = append(got, it.GetName()+"@"+it.GetResourceVersion())
		}
		if l.GetResourceVersion() != wantRV || !cmp.Equal(got, want) {
			t.Errorf("List: rv %q %v, want rv %q %v", l.GetResourceVersion(), got, wantRV, want)
		}
		if l.GetKind() != "ConfigMapList" || l.GetAPIVersion() != "v1" {
			t.Errorf("List kind %s %s", l.GetAPIVersion(), l.GetKind())
		}
	}
	watchEvents := func(want ...string) {
		t.Helper()
		w, err := lw.Watch(metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var got []string
		for range want {
			select {
			case ev := <-w.ResultChan():
				switch o := ev.Object.(type) {
				case *metav1.Status:
					got = append(got, fmt.Sprintf("%s %d %s", ev.Type, o.Code, o.Reason))
				case *unstructured.Unstructured:
					got = append(got, fmt.Sprintf("%s %s@%s", ev.Type, o.GetName(), o.GetResourceVersion()))
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("watch: got %v, want %v", got, want)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("watch events (-want +got):\n%s", diff)
		}
	}
	list("100", "a@10", "b@11", "c@12")
	watchEvents("ADDED d@101", "MODIFIED a@102", "DELETED d@103", "ERROR 410 Expired")
	list("120", "a@102", "c@115", "e@118")
	select {
	case <-lw.Done():
		t.Fatal("done before the last event")
	default:
	}
	watchEvents("MODIFIED e@121", "BOOKMARK @121")
	select {
	case <-lw.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not done after the last event")
	}
	// After the end: the final state, and a quiet watch.
	list("121", "a@102", "c@115", "e@121")
	watchEvents("BOOKMARK @121")

	// Streaming lists are declined; the reflector falls back to LIST.
	yes := true
	if _, err := lw.Watch(metav1.ListOptions{SendInitialEvents: &yes}); err == nil {
		t.Error("a streaming list was accepted")
	}
}

// A watch that ends early (the reflector restarted it) resumes where it stopped.
func TestWatchResumes(t *testing.T) {
	lw := FromEvents(traffic()).ListerWatcher(cmGVR)
	if _, err := lw.List(metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	w, _ := lw.Watch(metav1.ListOptions{})
	first := <-w.ResultChan()
	w.Stop()
	for range w.ResultChan() { // drained and closed
	}
	w2, _ := lw.Watch(metav1.ListOptions{})
	defer w2.Stop()
	second := <-w2.ResultChan()
	if first.Type != watchapi.Added || second.Type != watchapi.Modified {
		t.Errorf("first %s, then %s; want ADDED then MODIFIED", first.Type, second.Type)
	}
}

// A resource the recording does not hold: an empty list, then done.
func TestUnknownResource(t *testing.T) {
	rec := FromEvents(traffic())
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	lw := rec.ListerWatcher(gvr)
	r := newRecorder()
	inf := runInformer(t, lw, &unstructured.Unstructured{}, 0, r.handler())
	if got := r.wait(t, 0, lw); len(got) != 0 || len(inf.GetStore().List()) != 0 {
		t.Errorf("calls %v, store %v", got, inf.GetStore().List())
	}
	if len(rec.HandlerCalls(gvr)) != 0 {
		t.Error("HandlerCalls for an absent resource")
	}
}

// A relist as the last thing recorded, two relists in a row, and a recording cut by a filter
// (deliveries without their Relist line): the informer still ends in the recorded state.
func TestRelistShapes(t *testing.T) {
	all := traffic()
	tests := []struct {
		name   string
		events []watch.Event
		want   []string
	}{
		{"ends with a relist", all[:len(all)-1], []string{"a@102", "c@115", "e@118"}},
		{"no relist line", withoutType(all, watch.Relist), []string{"a@102", "c@115", "e@121"}},
		{"only object lines", objectsOnly(all), []string{"a@102", "c@115", "e@121"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := FromEvents(tt.events)
			lw := rec.ListerWatcher(cmGVR)
			r := newRecorder()
			inf := runInformer(t, lw, &unstructured.Unstructured{}, 0, r.handler())
			got := r.wait(t, len(rec.HandlerCalls(cmGVR)), lw)
			var final []string
			for _, o := range inf.GetStore().List() {
				u := o.(*unstructured.Unstructured)
				final = append(final, u.GetName()+"@"+u.GetResourceVersion())
			}
			if diff := cmp.Diff(tt.want, sorted(final)); diff != "" {
				t.Errorf("final cache (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(callsOf(rec.HandlerCalls(cmGVR)), got); diff != "" {
				t.Errorf("handler calls (-HandlerCalls +got):\n%s", diff)
			}
		})
	}
}

// callsOf is what HandlerCalls promises, as calls.
func callsOf(events []watch.Event) []call {
	var out []call
	for _, ev := range events {
		c := call{Key: ev.Namespace + "/" + ev.Name, RV: ev.ResourceVersion}
		switch ev.Type {
		case watch.Added:
			c.Op, c.Initial = "add", ev.Obj.InitialList
		case watch.Updated:
			c.Op, c.Old = "update", ev.Obj.OldResourceVersion
		case watch.Deleted:
			c.Op, c.Tombstone = "delete", ev.Obj.Tombstone
		}
		out = append(out, c)
	}
	return out
}

func withoutType(events []watch.Event, typ watch.Type) []watch.Event {
	var out []watch.Event
	for _, ev := range events {
		if ev.Type != typ {
			out = append(out, ev)
		}
	}
	return out
}

func objectsOnly(events []watch.Event) []watch.Event {
	var out []watch.Event
	for _, ev := range events {
		if ev.Type.IsObject() {
			out = append(out, ev)
		}
	}
	return out
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	damaged := append(append(append([]string{}, lines[:3]...), "{\"type\":\"Added\",\n"), lines[3:]...)
	if _, err := Open(write("damaged", strings.Join(damaged, ""))); err == nil || !strings.Contains(err.Error(), "line 4: invalid JSON") {
		t.Errorf("damaged line: %v", err)
	}
	newer := strings.Replace(string(good), `"formatVersion":1`, `"formatVersion":2`, 1)
	var ferr *FormatError
	if _, err := Open(write("newer", newer)); !errors.As(err, &ferr) || ferr.Version != 2 || !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("newer format: %v", err)
	}
	// Plain -o json output (no header), blank lines, an unknown line type and unknown fields.
	plain := strings.Join(lines[1:4], "") + "\n\n" +
		`{"time":"2026-11-21T05:00:09Z","type":"FutureThing","x":1}` + "\n" +
		strings.ReplaceAll(strings.Join(lines[4:], ""), `"type":"Added"`, `"future":true,"type":"Added"`)
	rec, err := Open(write("plain", plain))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(openFixture(t).Events); rec.Header != nil || len(rec.Events) != n {
		t.Errorf("headerless: header %v, %d events, want %d", rec.Header, len(rec.Events), n)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReaderGzipAndLines(t *testing.T) {
	good, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	_, _ = zw.Write(good)
	_ = zw.Close()
	rec, err := Read(&zbuf)
	if err != nil || rec.Header == nil || len(rec.Events) != len(openFixture(t).Events) {
		t.Fatalf("gzip: %v, %d events", err, len(rec.Events))
	}

	// Line numbers count every line, blank ones too; a bad line does not stop the reader.
	in := strings.SplitAfter(string(good), "\n")
	text := in[0] + "\n" + in[1] + "not json\n" + strings.TrimSuffix(in[2], "\n") // last line without newline
	rd, err := NewReader(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		l, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var lerr *LineError
		switch {
		case errors.As(err, &lerr):
			got = append(got, lerr.Error())
		case err != nil:
			t.Fatal(err)
		case l.Header != nil:
			got = append(got, fmt.Sprintf("%d header", l.Number))
		default:
			got = append(got, fmt.Sprintf("%d %s", l.Number, l.Event.Type))
		}
	}
	want := []string{"1 header", "3 Informer", "line 4: invalid JSON: not an object (starts with \"not json\")", "5 Watch"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if rd.Headerless || rd.Header == nil {
		t.Errorf("Headerless %v, Header %v", rd.Headerless, rd.Header)
	}
}
