package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// otlpEnv points the plugin's OTLP exporter at a Jaeger (OTLP/HTTP).
func otlpEnv(j *testenv.Jaeger) []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLPHTTP, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"}
}

// spanIndex finds the spans of one Jaeger by what a -o json line says.
type spanIndex struct {
	all        []testenv.JaegerSpan
	byID       map[string]testenv.JaegerSpan
	deltas     map[string][]testenv.JaegerSpan // "resource ns/name Type rv" → the delta spans
	reconciles map[string][]testenv.JaegerSpan // reconcileID → the reconcile spans
}

// objectName is the span's k8s.<kind>.name.
func objectName(s testenv.JaegerSpan) string {
	for _, tag := range s.Tags {
		if strings.HasPrefix(tag.Key, "k8s.") && strings.HasSuffix(tag.Key, ".name") && tag.Key != "k8s.namespace.name" && tag.Key != "k8s.cluster.name" {
			return fmt.Sprint(tag.Value)
		}
	}
	return ""
}

func deltaKey(resource, ns, name, typ, rv string) string {
	return resource + " " + ns + "/" + name + " " + typ + " " + rv
}

func indexSpans(traces []testenv.JaegerTrace) *spanIndex {
	x := &spanIndex{byID: map[string]testenv.JaegerSpan{}, deltas: map[string][]testenv.JaegerSpan{}, reconciles: map[string][]testenv.JaegerSpan{}}
	for _, tr := range traces {
		for _, s := range tr.Spans {
			x.all = append(x.all, s)
			x.byID[s.SpanID] = s
			if id := s.Tag("informer.reconcile_id"); id != "" {
				x.reconciles[id] = append(x.reconciles[id], s)
			}
			if s.Tag("informer.delta") != "" {
				typ := s.OperationName[strings.IndexByte(s.OperationName, '.')+1:]
				k := deltaKey(s.Tag("informer.resource"), s.Tag("k8s.namespace.name"), objectName(s), typ, s.Tag("informer.resource_version"))
				x.deltas[k] = append(x.deltas[k], s)
			}
		}
	}
	return x
}

// links are the span's references other than its parent (OTLP links).
func links(s testenv.JaegerSpan) []string {
	var out []string
	for _, r := range s.References {
		if r.RefType == "FOLLOWS_FROM" {
			out = append(out, r.SpanID)
		}
	}
	return out
}

// jsonTime is a line's time in microseconds since the epoch, as Jaeger keeps it.
func jsonTime(t *testing.T, v any) int64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, fmt.Sprint(v))
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return tm.UnixMicro()
}

// writers are the names of an Updated line's managers.
func writers(m map[string]any) []string {
	var out []string
	ms, _ := m["managers"].([]any)
	for _, e := range ms {
		if mm, ok := e.(map[string]any); ok {
			out = append(out, fmt.Sprint(mm["manager"]))
		}
	}
	return out
}

// tagList reads a list attribute as Jaeger shows it (a JSON array in a string).
func tagList(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil && s != "" {
		return []string{s}
	}
	return out
}

// checkReconcileSpans: every ControllerReconcile line of the controller is one span with its
// reconcileID, start, duration and result, linked to exactly the triggers it names (and to
// nothing else but the writes attributed to it).
func checkReconcileSpans(t *testing.T, x *spanIndex, lines []map[string]any) (checked, triggers int) {
	t.Helper()
	for _, m := range lines {
		id := fmt.Sprint(m["reconcileID"])
		spans := x.reconciles[id]
		if len(spans) != 1 {
			t.Errorf("reconcile %s: %d spans in Jaeger, want 1", id, len(spans))
			continue
		}
		s := spans[0]
		if s.OperationName != fmt.Sprint(m["controller"])+".Reconcile" || s.Tag("informer.result") != fmt.Sprint(m["result"]) {
			t.Errorf("reconcile %s: span %s result %q, line %v", id, s.OperationName, s.Tag("informer.result"), m)
		}
		if want := jsonTime(t, m["time"]); s.StartTime != want {
			t.Errorf("reconcile %s: span starts at %d µs, the line at %d", id, s.StartTime, want)
		}
		d, _ := m["durationSeconds"].(float64)
		if math.Abs(float64(s.Duration)-d*1e6) > 1.5 {
			t.Errorf("reconcile %s: span lasts %d µs, the line %v s", id, s.Duration, d)
		}
		var want []string
		ts, _ := m["triggers"].([]any)
		for _, tr := range ts {
			tm := tr.(map[string]any)
			res, key := "widgets.example.com", fmt.Sprint(m["namespace"])+"/"+fmt.Sprint(m["name"])
			if k, ok := tm["key"].(string); ok && k != "" {
				res, key = fmt.Sprint(tm["resource"]), k
			}
			ns, name, _ := strings.Cut(key, "/")
			ds := x.deltas[deltaKey(res, ns, name, fmt.Sprint(tm["type"]), fmt.Sprint(tm["resourceVersion"]))]
			if len(ds) != 1 {
				t.Errorf("reconcile %s: trigger %v has %d delta spans", id, tm, len(ds))
				continue
			}
			want = append(want, ds[0].SpanID)
		}
		var got []string
		for _, l := range links(s) {
			if w, ok := x.byID[l]; ok && w.Tag("informer.attribution") == "reconcile" && slices.Contains(links(w), s.SpanID) {
				continue // a write attributed to this reconcile
			}
			got = append(got, l)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("reconcile %s: links %v, want the triggers' spans %v (line %v)", id, got, want, m)
		}
		checked++
		triggers += len(want)
	}
	return checked, triggers
}

// checkUpdateSpans: every Updated line is a span in its object's trace (the trace of every
// other delta of the object) with the same resourceVersions and writers.
func checkUpdateSpans(t *testing.T, x *spanIndex, lines []map[string]any) int {
	t.Helper()
	traceOf := map[string]string{}
	for _, s := range x.all {
		if s.Tag("informer.delta") == "" {
			continue
		}
		obj := s.Tag("k8s.namespace.name") + "/" + objectName(s)
		if tr, ok := traceOf[obj]; ok && tr != s.TraceID {
			t.Errorf("%s: deltas in traces %s and %s, want one trace per object", obj, tr, s.TraceID)
		}
		traceOf[obj] = s.TraceID
	}
	n := 0
	for _, m := range lines {
		ds := x.deltas[deltaKey("widgets.example.com", fmt.Sprint(m["namespace"]), fmt.Sprint(m["name"]), "Updated", fmt.Sprint(m["resourceVersion"]))]
		if len(ds) != 1 {
			t.Errorf("Updated %v rv %v: %d spans", m["name"], m["resourceVersion"], len(ds))
			continue
		}
		s := ds[0]
		if s.Tag("informer.old_resource_version") != fmt.Sprint(m["oldResourceVersion"]) || s.StartTime != jsonTime(t, m["time"]) {
			t.Errorf("Updated %v rv %v: span old rv %q at %d, line %v", m["name"], m["resourceVersion"], s.Tag("informer.old_resource_version"), s.StartTime, m)
		}
		if got, want := tagList(s.Tag("informer.writers")), writers(m); m["managers"] != nil && !slices.Equal(got, want) {
			t.Errorf("Updated %v rv %v: writers %v, line %v", m["name"], m["resourceVersion"], got, want)
		}
		n++
	}
	return n
}

// linesOf are the run's -o json lines of a type (and, for reconciles, the controller).
func linesOf(p *testenv.PluginRun, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range p.All() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == typ && (typ != "ControllerReconcile" || m["controller"] == "widget") {
			out = append(out, m)
		}
	}
	return out
}

// The widget-operator's self-loop and fight, its log read with --controller-logs and every line
// exported to a real Jaeger: every ControllerReconcile line is a span with its reconcileID,
// start, duration and result, linked to exactly its triggers; every Updated line is in its
// object's trace with its resourceVersions and writers; counted, all of them. A replay of the
// run's recording exports the same spans (ids and times) into a second Jaeger.
func TestTracingWidgetOperatorInJaeger(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.WidgetCRD()); err != nil {
		t.Fatal(err)
	}
	j := testenv.StartJaeger(t)
	start := time.Now()
	dir := t.TempDir()
	logFile, recFile := filepath.Join(dir, "mgr.log"), filepath.Join(dir, "run.ndjson")
	p := c.RunPluginWith(t, ctx, otlpEnv(j), "watch", "widgets", "-n", ns, "-o", "json",
		"--controller-logs", logFile, "--record", recFile, "--otlp")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true, LogFile: logFile,
		Args: []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop", Size: 1})
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fight", Bug: "fight", Size: 1})
	seen := map[any]int{}
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		if m["type"] == "ControllerReconcile" {
			seen[m["name"]]++
		}
		return seen["loop"] >= 10 && seen["fight"] >= 3
	})
	for _, name := range []string{"loop", "fight"} {
		if err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Quiet: the operator's counter stops moving, and every reconcile it counted is a line.
	total := 0
	deadline := time.Now().Add(await)
	for stable := 0; stable < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("controller_runtime_reconcile_total of widget never stopped moving (last %d)", total)
		}
		time.Sleep(time.Second)
		n, _ := reconcileTotal(t, op.MetricsURL, "widget")
		if n == total {
			stable++
		} else {
			stable = 0
		}
		total = n
	}
	for deadline := time.Now().Add(await); len(linesOf(p, "ControllerReconcile")) < total; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d ControllerReconcile lines, want %d", len(linesOf(p, "ControllerReconcile")), total)
		}
	}
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	m := regexp.MustCompile(`otlp: (\d+) spans, (\d+) exported, 0 spans dropped`).FindStringSubmatch(p.Stderr())
	if m == nil || m[1] != m[2] {
		t.Fatalf("exit summary: want every span exported, none dropped:\n%s", p.Stderr())
	}
	// Jaeger has them once its own batch is stored: await the count the summary says.
	var x *spanIndex
	for deadline := time.Now().Add(await); ; time.Sleep(200 * time.Millisecond) {
		x = indexSpans(j.Traces(t, "kubectl-informer", start))
		if fmt.Sprint(len(x.all)) == m[1] || time.Now().After(deadline) {
			break
		}
	}
	if fmt.Sprint(len(x.all)) != m[1] {
		t.Fatalf("Jaeger holds %d spans, the plugin exported %s", len(x.all), m[1])
	}
	reconciles, updates := linesOf(p, "ControllerReconcile"), linesOf(p, "Updated")
	n, triggers := checkReconcileSpans(t, x, reconciles)
	u := checkUpdateSpans(t, x, updates)
	t.Logf("%d spans; %d of %d ControllerReconcile lines matched with %d trigger links; %d of %d Updated lines in their objects' traces",
		len(x.all), n, len(reconciles), triggers, u, len(updates))
	if n != len(reconciles) || u != len(updates) || n < 10 || triggers == 0 {
		t.Fatalf("matched %d/%d reconciles (%d triggers), %d/%d updates: want all", n, len(reconciles), triggers, u, len(updates))
	}

	// The recording, replayed into a second Jaeger: the same spans, ids and times.
	j2 := testenv.StartJaeger(t)
	r := c.RunPluginWith(t, ctx, otlpEnv(j2), "replay", recFile, "--otlp", "-o", "json")
	if code, err := r.Wait(); code != 0 {
		t.Fatalf("replay exited %d (%v): %s", code, err, r.Stderr())
	}
	key := func(s testenv.JaegerSpan) string {
		l := links(s)
		slices.Sort(l)
		return fmt.Sprint(s.TraceID, s.SpanID, s.OperationName, s.StartTime, s.Duration, l)
	}
	var want []string
	for _, s := range x.all {
		if !strings.HasPrefix(s.OperationName, "informer.") { // the informers' traces carry the cluster's uid
			want = append(want, key(s))
		}
	}
	var got []string
	for deadline := time.Now().Add(await); ; time.Sleep(200 * time.Millisecond) {
		got = got[:0]
		for _, s := range indexSpans(j2.Traces(t, "kubectl-informer", start)).all {
			if !strings.HasPrefix(s.OperationName, "informer.") {
				got = append(got, key(s))
			}
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("replay --otlp exported %d spans, the live run %d; they differ (live only %q, replayed only %q)", len(got), len(want), only(want, got), only(got, want))
	}
	// The replayed spans carry the recorded cluster's identity (the recording's header), as the
	// live run's did: the kube-system namespace's uid.
	kubeSystem, err := c.Clientset.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]int{}
	for _, tr := range j2.Traces(t, "kubectl-informer", start) {
		for _, s := range tr.Spans {
			uid := ""
			for _, tag := range tr.Processes[s.ProcessID].Tags {
				if tag.Key == "k8s.cluster.uid" {
					uid = fmt.Sprint(tag.Value)
				}
			}
			uids[uid]++
		}
	}
	if len(uids) != 1 || uids[string(kubeSystem.UID)] == 0 {
		t.Errorf("replayed spans by k8s.cluster.uid: %v; want every one under the recorded cluster's %s", uids, kubeSystem.UID)
	}
}

// only is the first few spans of a (sorted) that b (sorted) does not have.
func only(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found && len(out) < 3 {
			out = append(out, s)
		}
	}
	return out
}
