package main

import (
	"os"
	"slices"
	"testing"
	"time"
)

func names(tl *tool, line string) []int {
	var got []int
	fn := tl.names
	if fn == nil {
		fn = firstName
	}
	fn([]byte(line), func(i int) { got = append(got, i) })
	return got
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		tool, line string
		want       []int
	}{
		{"plugin", "06:00:57.327  Added       configmaps  bench/bench-000034  rv=254  queue=1  [initial list]\n", []int{34}},
		{"plugin", "# watching configmaps in namespace bench; client-go v0.37.1\n", nil},
		{"plugin", "06:00:57.327  Synced      configmaps  cache synced: 20000 objects in 2s\n", nil},
		{"kubectl", "bench-019999   2      5s\n", []int{19999}},
		{"kubectl", "NAME           DATA   AGE\n", nil},
		{"minimal", "MODIFIED bench/bench-000007 rv=99\n", []int{7}},
		{"minimal", "ADDED bench/bench-0000071 rv=99\n", nil}, // seven digits: not ours
		{"plugin-json", `{"time":"2026-11-21T05:22:47.294885835Z","type":"Added","group":"","namespace":"bench","name":"bench-000012","object":{}}`, []int{12}},
		{"plugin-json", `{"time":"2026-11-21T05:22:47.294885835Z","type":"Reconciled","group":"","key":"bench/bench-000012"}`, nil},
		{"kubectl-json", `{"type":"ADDED","object":{"kind":"List","items":[{"metadata":{"name":"bench-000001","namespace":"bench"}},{"metadata":{"name":"bench-000002"}}]}}`, []int{1, 2}},
		{"kubectl-json", `            "name": "bench-000003",`, []int{3}},
		{"kubectl-json", `            "manager": "kubectl-informer-bench",`, nil},
	} {
		if got := names(toolByName(tc.tool), tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q: got %v, want %v", tc.tool, tc.line, got, tc.want)
		}
	}
}

func TestDropped(t *testing.T) {
	line := "05:43:20.154  Dropped     202 lines not shown: the output did not keep up (adds, updates, reconciles; never a delete or a lifecycle line; -o json and --record keep everything)\n"
	if got := droppedLine([]byte(line)); got != 202 {
		t.Errorf("got %d, want 202", got)
	}
	if got := droppedLine([]byte("05:43:20.154  Added  bench/bench-000001  rv=1\n")); got != 0 {
		t.Errorf("got %d, want 0", got)
	}

	tr := newTracker(3, 2, toolByName("plugin"))
	now := time.Now()
	tr.line([]byte("Added  bench/bench-000000  rv=1\n"), now)
	tr.line([]byte("Dropped     2 lines not shown: ...\n"), now)
	select {
	case <-tr.syncedCh:
	default:
		t.Fatal("not synced after 1 line and 2 dropped of 3")
	}
	tr.armed.Store(true)
	tr.line([]byte("Updated  bench/bench-000001  rv=1→5\n"), now)
	tr.line([]byte("Updated  bench/bench-000001  rv=5→6\n"), now) // again: stray
	tr.line([]byte("Updated  bench/bench-000000  rv=1→7\n"), now)
	select {
	case <-tr.updatedCh:
	default:
		t.Fatal("updates not complete")
	}
	if tr.stray != 1 {
		t.Errorf("stray = %d, want 1", tr.stray)
	}
}

func TestToolVariant(t *testing.T) {
	v := toolByName("plugin+GOGC=50+KUBE_FEATURE_WatchListClient=false")
	if v == nil || !slices.Equal(v.env, []string{"GOGC=50", "KUBE_FEATURE_WatchListClient=false"}) || v.dropped == nil {
		t.Fatalf("variant: %+v", v)
	}
	if v := toolByName("plugin+--disable-compression"); v == nil || !slices.Equal(v.extra, []string{"--disable-compression"}) {
		t.Errorf("flag variant: %+v", v)
	}
	b := toolByName("before-plugin+--diff")
	if b == nil || !slices.Equal(b.extra, []string{"--diff"}) || b.name != "before-plugin+--diff" {
		t.Fatalf("before variant: %+v", b)
	}
	if path, _ := b.args(binaries{plugin: "new", before: "old"}, "kc"); path != "old" {
		t.Errorf("before variant runs %q, want the -before binary", path)
	}
	if toolByName("before-kubectl") != nil || toolByName("before-nope") != nil {
		t.Error("before variant of a tool that is not the plugin accepted")
	}
	if toolByName("plugin+GOGC") != nil || toolByName("nope") != nil {
		t.Error("bad names accepted")
	}
	if got := orderFor([]string{"a", "b", "c"}, 1); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("orderFor: %v", got)
	}
}

func TestInformerTrouble(t *testing.T) {
	ok := "--- kubectl informer: summary after 5s ---\ninformer: 0 lists, 0 relists, 0 watch restarts, 0 watch closes, 0 errors, 0 resyncs, 1 bookmarks\n"
	if got := informerTrouble(ok); got != "" {
		t.Errorf("got %q", got)
	}
	bad := "informer: 1 lists, 1 relists, 0 watch restarts, 1 watch closes, 0 errors, 0 resyncs, 1 bookmarks"
	if got := informerTrouble(bad); got != bad {
		t.Errorf("got %q", got)
	}
}

func TestProcRSS(t *testing.T) {
	m, ok := procRSS(os.Getpid())
	if !ok || m[0] <= 0 || m[1] <= 0 || m[2] < m[0] {
		t.Fatalf("procRSS(self) = %v, %v; want anon and file positive, the high-water mark at least anon", m, ok)
	}
	if _, ok := procRSS(-1); ok {
		t.Fatal("procRSS of no process reported ok")
	}
	done := make(chan struct{})
	peaks := sampleRSS(os.Getpid(), done)
	close(done)
	if p := <-peaks; p[0] <= 0 || p[1] <= 0 || p[2] <= 0 {
		t.Fatalf("sampleRSS(self) = %v; want every peak positive", p)
	}
}

func TestWireSynced(t *testing.T) {
	tests := []struct {
		name       string
		lines      []string
		wantSynced bool
	}{
		{name: "a Synced line with every object", lines: []string{`{"type":"Synced","group":"","version":"v1","resource":"configmaps","items":3}`}, wantSynced: true},
		{name: "fewer items", lines: []string{`{"type":"Synced","group":"","version":"v1","resource":"configmaps","items":2}`}},
		{name: "more items", lines: []string{`{"type":"Synced","group":"","version":"v1","resource":"configmaps","items":4}`}},
		{name: "another resource", lines: []string{`{"type":"Synced","group":"","version":"v1","resource":"pods","items":3}`}},
		{name: "event lines are not a sync", lines: []string{"ADDED bench/bench-000000", "ADDED bench/bench-000001"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker(3, 2, toolByName("wire"))
			for _, l := range tc.lines {
				tr.line([]byte(l+"\n"), time.Now())
			}
			select {
			case <-tr.syncedCh:
				if !tc.wantSynced {
					t.Fatal("synced")
				}
			default:
				if tc.wantSynced {
					t.Fatal("not synced")
				}
				return
			}
			// After it, a line per event: the update phase counts them as the other tools'.
			tr.armed.Store(true)
			tr.line([]byte("MODIFIED bench/bench-000001\n"), time.Now())
			tr.line([]byte("MODIFIED bench/bench-000000\n"), time.Now())
			select {
			case <-tr.updatedCh:
			default:
				t.Fatal("updates not complete")
			}
		})
	}
}
