package ctrllog

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readLog feeds a captured log (testdata/README.md says how each was made) to a reconstructor
// and returns its reconciles, in the log's order.
func readLog(t *testing.T, name string) ([]Reconcile, *Reconstructor, []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReconstructor(name)
	r.Year = 2026
	var out []Reconcile
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	// Read after the log was written: a time later than the read one is not trusted.
	now := time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		out = append(out, r.Feed(sc.Bytes(), now)...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return append(out, r.Flush()...), r, lines
}

func countLines(lines []string, sub string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// controller-runtime's JSON lines at --zap-log-level=5: one reconcile per reconcileID, each
// begun by "Reconciling" and ended by "Reconcile successful", of the Widget the line names.
func TestReconstructZapJSON(t *testing.T) {
	recs, r, lines := readLog(t, "widget-operator-json.log")
	want := countLines(lines, `"msg":"Reconcile successful"`)
	if want == 0 || len(recs) != want {
		t.Fatalf("%d reconciles, want %d (the Reconcile successful lines)", len(recs), want)
	}
	if r.Stats.ByFormat[FormatZapJSON] != len(lines) || r.Stats.Other != 0 {
		t.Errorf("stats %+v: want every one of %d lines zap JSON", r.Stats, len(lines))
	}
	names := map[string]int{}
	for _, rc := range recs {
		if rc.Controller != "widget" || rc.Object.Kind != "Widget" || rc.Object.Namespace != "default" || rc.Result != ResultOK ||
			rc.ReconcileID == "" || rc.Lines != 2 || !rc.DurationKnown || rc.Precise {
			t.Fatalf("reconcile %+v", rc)
		}
		names[rc.Object.Name]++
	}
	for _, n := range []string{"plain", "loop", "fight"} {
		if names[n] == 0 {
			t.Errorf("no reconcile of %s: %v", n, names)
		}
	}
}

// kube-controller-manager's klog text lines at -v=4: one reconcile per "Finished syncing
// deployment" line (its duration logged), failed when "Error syncing deployment" follows.
func TestReconstructKlogText(t *testing.T) {
	recs, r, lines := readLog(t, "kube-controller-manager-text.log")
	var deployments, errs int
	for _, rc := range recs {
		if rc.Controller != "deployment" {
			continue
		}
		deployments++
		if rc.Object.Kind != "deployment" || rc.Object.Name == "" || !rc.DurationKnown || !rc.Precise {
			t.Fatalf("reconcile %+v", rc)
		}
		if !rc.Start.Add(rc.Duration).Equal(rc.End) {
			t.Fatalf("start %s + duration %s != end %s", rc.Start, rc.Duration, rc.End)
		}
		if rc.Result == ResultError {
			errs++
			if !strings.Contains(rc.Error, "the object has been modified") {
				t.Errorf("error text %q", rc.Error)
			}
		}
	}
	if want := countLines(lines, `"Finished syncing deployment"`); deployments != want {
		t.Errorf("%d deployment reconciles, want %d", deployments, want)
	}
	if want := countLines(lines, `"Error syncing deployment"`); want == 0 || errs != want {
		t.Errorf("%d failed, want %d (each Error syncing line follows its Finished syncing line)", errs, want)
	}
	var rs int
	for _, rc := range recs {
		if rc.Object.Kind == "ReplicaSet" {
			rs++
		}
	}
	if want := countLines(lines, `"Finished syncing" kind="ReplicaSet"`); rs != want {
		t.Errorf("%d ReplicaSet syncs, want %d", rs, want)
	}
	if r.Stats.ByFormat[FormatKlogText] != len(lines) {
		t.Errorf("stats %+v: want all %d lines klog text", r.Stats, len(lines))
	}
}

// Every form of object key real controllers log.
func TestObjectKeys(t *testing.T) {
	tests := []struct {
		name, line string
		want       ObjectRef
	}{
		{"controller-runtime namespace+name", `{"level":"info","ts":"2026-11-25T03:27:20Z","msg":"x","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"1"}`, ObjectRef{"Widget", "d", "w"}},
		{"controller-runtime kind key", `{"level":"info","ts":"2026-11-25T03:27:20Z","msg":"x","controllerKind":"Widget","Widget":{"name":"w","namespace":"d"},"reconcileID":"1"}`, ObjectRef{"Widget", "d", "w"}},
		{"klog KObj in JSON", `{"ts":1764041240000.5,"msg":"Finished syncing deployment","v":4,"deployment":{"name":"web","namespace":"demo"},"duration":"1ms"}`, ObjectRef{"deployment", "demo", "web"}},
		{"klog text kind key", `I1125 01:02:03.456789   12345 deployment_controller.go:585] "Finished syncing deployment" deployment="demo/web" duration="1.2ms"`, ObjectRef{"deployment", "demo", "web"}},
		{"objectName", `I1125 01:02:03.456789   12345 controller.go:222] "Successfully synced" objectName="demo/shop"`, ObjectRef{"", "demo", "shop"}},
		{"objectRef", `I1125 01:02:03.456789   12345 controller.go:222] "Successfully synced" objectRef="demo/shop"`, ObjectRef{"", "demo", "shop"}},
		{"key", `I1125 01:02:03.456789   12345 replica_set.go:759] "Finished syncing" kind="ReplicaSet" key="demo/web-1" duration="5ms"`, ObjectRef{"ReplicaSet", "demo", "web-1"}},
		{"resourceName", `I1125 01:02:03.456789   12345 controller.go:222] "Successfully synced" resourceName="shop"`, ObjectRef{"", "", "shop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReconstructor("t")
			got := append(r.Feed([]byte(tt.line), time.Now()), r.Flush()...)
			if len(got) != 1 {
				t.Fatalf("%d reconciles, want 1", len(got))
			}
			if got[0].Object != tt.want {
				t.Errorf("object %+v, want %+v", got[0].Object, tt.want)
			}
		})
	}
}

// Lines that are not reconciles are counted, never fatal, never reconciles.
func TestOtherLines(t *testing.T) {
	r := NewReconstructor("t")
	for _, l := range []string{
		"panic: runtime error: invalid memory address or nil pointer dereference",
		"goroutine 1 [running]:",
		"\tmain.main()",
		`{"not":"a log line"}`,
		`{"level":"info","ts":"2026-11-25T03:27:20Z","msg":"Starting workers","controller":"widget","worker count":1}`,
		`I1125 03:24:43.479656   27997 leaderelection.go:257] "successfully acquired lease" lock="kube-system/kube-controller-manager"`,
		"",
		"2026-11-25T03:27:20Z\tINFO\tnot enough",
	} {
		if got := r.Feed([]byte(l), time.Now()); len(got) != 0 {
			t.Errorf("%q made a reconcile", l)
		}
	}
	if got := r.Flush(); len(got) != 0 {
		t.Errorf("flush: %v", got)
	}
	if r.Stats.Lines != 8 || r.Stats.Reconciles != 0 {
		t.Errorf("stats %+v", r.Stats)
	}
}

// An error reconcile is reported as an error, with its error text (controller-runtime's
// "Reconciler error" line and klog's "Error syncing").
func TestErrorReconciles(t *testing.T) {
	r := NewReconstructor("t")
	var got []Reconcile
	for _, l := range []string{
		`{"level":"Level(-5)","ts":"2026-11-25T03:27:20.1Z","msg":"Reconciling","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a"}`,
		`{"level":"error","ts":"2026-11-25T03:27:20.2Z","msg":"Reconciler error","controller":"widget","controllerKind":"Widget","namespace":"d","name":"w","reconcileID":"a","error":"boom"}`,
		`E1125 01:02:03.456789   12345 controller.go:222] "Error syncing; requeuing for later retry" objectName="demo/shop" err="nope"`,
	} {
		got = append(got, r.Feed([]byte(l), time.Now())...)
	}
	if len(got) != 2 || got[0].Result != ResultError || got[0].Error != "boom" || got[0].Duration != 100*time.Millisecond {
		t.Fatalf("controller-runtime: %+v", got)
	}
	if got[1].Result != ResultError || got[1].Error != "nope" || got[1].Object.Name != "shop" {
		t.Fatalf("klog: %+v", got[1])
	}
}

// controller-runtime's console lines (--zap-devel) of an operator whose status writes are
// forbidden: every reconcile is an error with its text; the stack traces under each are
// counted as other lines.
func TestReconstructZapConsole(t *testing.T) {
	recs, r, lines := readLog(t, "widget-operator-console.log")
	want := countLines(lines, "\tReconciler error\t")
	if want == 0 || len(recs) != want {
		t.Fatalf("%d reconciles, want %d (the Reconciler error lines)", len(recs), want)
	}
	for _, rc := range recs {
		if rc.Result != ResultError || !strings.Contains(rc.Error, "forbidden") || rc.Controller != "widget" || rc.Object.Kind != "Widget" || rc.Lines != 2 {
			t.Fatalf("reconcile %+v", rc)
		}
	}
	if r.Stats.Other == 0 || r.Stats.ByFormat[FormatZapConsole] == 0 || r.Stats.Other+r.Stats.ByFormat[FormatZapConsole] != len(lines) {
		t.Errorf("stats %+v over %d lines", r.Stats, len(lines))
	}
}

// kube-controller-manager's JSON lines (--logging-format=json -v=4): its syncs as in text, the
// object a KRef ({"name","namespace"}), the time in milliseconds since the epoch.
func TestReconstructKlogJSON(t *testing.T) {
	recs, r, lines := readLog(t, "kube-controller-manager-json.log")
	var deployments, errs int
	for _, rc := range recs {
		if rc.Controller != "deployment" {
			continue
		}
		deployments++
		if rc.Object.Namespace != "default" || !rc.DurationKnown || !rc.Precise || rc.Start.Year() != 2026 {
			t.Fatalf("reconcile %+v", rc)
		}
		if rc.Result == ResultError {
			errs++
		}
	}
	if want := countLines(lines, `"msg":"Finished syncing deployment"`); deployments != want {
		t.Errorf("%d deployment reconciles, want %d", deployments, want)
	}
	if want := countLines(lines, `"msg":"Error syncing deployment"`); want == 0 || errs != want {
		t.Errorf("%d failed, want %d", errs, want)
	}
	if r.Stats.ByFormat[FormatKlogJSON] == 0 {
		t.Errorf("stats %+v", r.Stats)
	}
}

// A client-go controller written as sample-controller is (hack/foo-controller, klog text at
// -v=4): one reconcile per "Successfully synced" line and per "Error syncing; requeuing for
// later retry" line, of the object under objectName or objectReference, named after its log.
func TestReconstructKlogClientGo(t *testing.T) {
	recs, _, lines := readLog(t, "foo-controller.log")
	synced, failed := countLines(lines, `"Successfully synced"`), countLines(lines, `"Error syncing; requeuing for later retry"`)
	if synced == 0 || failed == 0 || len(recs) != synced+failed {
		t.Fatalf("%d reconciles, want %d synced + %d failed", len(recs), synced, failed)
	}
	var errs int
	for _, rc := range recs {
		if rc.Controller != "foo-controller" || rc.Object.Namespace != "default" || rc.Object.Name == "" {
			t.Fatalf("reconcile %+v", rc)
		}
		if rc.Result == ResultError {
			errs++
			if rc.Object.Name != "gamma" || !strings.Contains(rc.Error, "already exists and is not managed by Foo") {
				t.Errorf("failed reconcile %+v", rc)
			}
		}
	}
	if errs != failed {
		t.Errorf("%d failed, want %d", errs, failed)
	}
}

// A sample-controller's success and, within a second, a failed sync of the same object are two
// reconciles: only kube-controller-manager's deferred "Finished syncing" takes the error that
// follows it.
func TestSyncedThenErrorAreTwo(t *testing.T) {
	r := NewReconstructor("foo.log")
	var got []Reconcile
	for _, l := range []string{
		`I1125 04:28:53.447788   25506 main.go:281] "Successfully synced" objectName="default/alpha"`,
		`E1125 04:28:53.476698   25506 main.go:285] "Error syncing; requeuing for later retry" err="boom" logger="UnhandledError" objectReference="default/alpha"`,
	} {
		got = append(got, r.Feed([]byte(l), time.Now())...)
	}
	got = append(got, r.Flush()...)
	if len(got) != 2 || got[0].Result != ResultOK || got[1].Result != ResultError || got[1].Controller != "foo" {
		t.Fatalf("%+v", got)
	}
}
