package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/internal/testutil"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	pods       = discovery.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	cms        = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	widgets    = discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true, PrinterColumns: widgetCols}
	widgetCols = []discovery.PrinterColumn{
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		{Name: "Color", Type: "string", JSONPath: ".spec.color", Priority: 1},
	}
)

const statePod = `apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: demo, resourceVersion: "%s", creationTimestamp: "2026-11-21T05:00:00Z"%s}
spec: {%scontainers: [{name: c, image: web:1}]}
`

// stateSample is a pod's life (Pending, bound, Running, crash-looping, deleted), a rollout of a
// deployment, a custom resource with printer columns held by a finalizer, and a ConfigMap.
func stateSample(t *testing.T) []watch.Event {
	t.Helper()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	pod := func(rv, meta, spec, status string) *unstructured.Unstructured {
		return testutil.YAML(t, fmt.Sprintf(statePod, rv, meta, spec)+status)
	}
	p1 := pod("10", "", "", "status: {phase: Pending, qosClass: BestEffort}\n")
	p2 := pod("11", "", "nodeName: kwok-1, ", "status: {phase: Pending, qosClass: BestEffort}\n")
	p3 := pod("12", "", "nodeName: kwok-1, ", `status:
  phase: Running
  podIP: 10.0.0.7
  conditions: [{type: Ready, status: "True"}]
  containerStatuses: [{name: c, ready: true, restartCount: 0, state: {running: {}}}]
`)
	p4 := pod("13", "", "nodeName: kwok-1, ", `status:
  phase: Running
  podIP: 10.0.0.7
  conditions: [{type: Ready, status: "False"}]
  containerStatuses: [{name: c, ready: false, restartCount: 4, state: {waiting: {reason: CrashLoopBackOff, message: back-off 1m20s restarting failed container}}}]
`)
	p5 := pod("14", ", deletionTimestamp: '2026-11-21T05:01:00Z', deletionGracePeriodSeconds: 30", "nodeName: kwok-1, ", `status:
  phase: Running
  podIP: 10.0.0.7
  conditions: [{type: Ready, status: "False"}]
  containerStatuses: [{name: c, ready: false, restartCount: 5, state: {waiting: {reason: CrashLoopBackOff}}}]
`)
	dep := func(rv string, gen int, status string) *unstructured.Unstructured {
		return testutil.YAML(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: demo, resourceVersion: '"+rv+"', generation: "+strconv.Itoa(gen)+"}\nspec: {replicas: 3, template: {spec: {containers: [{name: c, image: web:2}]}}}\n"+status)
	}
	d1 := dep("20", 2, "status: {observedGeneration: 2, replicas: 4, updatedReplicas: 1, readyReplicas: 3, availableReplicas: 3}\n")
	d2 := dep("21", 2, "status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2}\n")
	d3 := dep("22", 2, `status:
  observedGeneration: 2
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]
`)
	w := func(rv, meta, status string) *unstructured.Unstructured {
		return testutil.YAML(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: gear, namespace: demo, resourceVersion: '"+rv+"', generation: 1"+meta+"}\nspec: {size: 3, color: blue}\n"+status)
	}
	w1 := w("30", "", "status: {observedGeneration: 1, conditions: [{type: Ready, status: 'False', reason: Waiting, message: waiting for the database}]}\n")
	w2 := w("31", "", "status: {observedGeneration: 1, conditions: [{type: Ready, status: 'True', reason: Ok}]}\n")
	w3 := w("32", ", finalizers: [example.com/cleanup], deletionTimestamp: '2026-11-21T05:02:00Z'", "status: {observedGeneration: 1, conditions: [{type: Ready, status: 'True', reason: Ok}]}\n")
	cm := testutil.YAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf, namespace: demo, resourceVersion: '40'}\ndata: {a: b}\n")

	obj := func(typ watch.Type, s int, res discovery.Resource, o, old *unstructured.Unstructured, d watch.Delta) watch.Event {
		ev := watch.Event{Type: typ, Time: at(s), Resource: res, Namespace: o.GetNamespace(), Name: o.GetName(), ResourceVersion: o.GetResourceVersion(), Obj: watch.ObjectInfo{Delta: d, Object: o, OldObject: old}}
		if old != nil {
			ev.Obj.OldResourceVersion = old.GetResourceVersion()
		}
		return ev
	}
	return []watch.Event{
		{Type: watch.Informer, Time: at(0), Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, WatchList: true, Namespace: "demo", Resources: []discovery.Resource{pods, deploy, widgets, cms}}}},
		obj(watch.Added, 1, pods, p1, nil, watch.DeltaAdded),
		obj(watch.Updated, 2, pods, p2, p1, watch.DeltaUpdated),
		obj(watch.Updated, 3, pods, p3, p2, watch.DeltaUpdated),
		obj(watch.Updated, 4, pods, p4, p3, watch.DeltaUpdated),
		obj(watch.Updated, 5, pods, p5, p4, watch.DeltaUpdated),
		obj(watch.Deleted, 6, pods, p5, nil, watch.DeltaDeleted),
		obj(watch.Added, 7, deploy, d1, nil, watch.DeltaAdded),
		obj(watch.Updated, 8, deploy, d2, d1, watch.DeltaUpdated),
		obj(watch.Updated, 9, deploy, d3, d2, watch.DeltaUpdated),
		obj(watch.Added, 10, widgets, w1, nil, watch.DeltaAdded),
		obj(watch.Updated, 11, widgets, w2, w1, watch.DeltaUpdated),
		obj(watch.Updated, 12, widgets, w3, w2, watch.DeltaUpdated),
		obj(watch.Added, 13, cms, cm, nil, watch.DeltaAdded),
	}
}

func TestStateGoldens(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	events := stateSample(t)
	golden(t, "human-state.txt", render(t, Options{}, events))
	golden(t, "human-state-wide.txt", render(t, Options{Output: "wide"}, events))
	golden(t, "human-state-color.txt", render(t, Options{Color: true}, events))
	golden(t, "events-state.ndjson", render(t, Options{Output: "json", PluginVersion: "v1.0.0"}, events))
}

// The JSON state says what the issue asks: status, summary, message, and previous on the line
// that changed it; nothing for objects that say nothing (the ConfigMap).
func TestStateJSON(t *testing.T) {
	lines := encodeLines(t, Options{Output: "json"}, stateSample(t))
	state := func(i int) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(lines[i], &m); err != nil {
			t.Fatal(err)
		}
		s, _ := m["state"].(map[string]any)
		return s
	}
	tests := []struct {
		line int
		want map[string]any
	}{
		{1, map[string]any{"status": "InProgress", "summary": "0/1 Pending", "message": "Pod is in the Pending phase"}},
		{2, map[string]any{"status": "InProgress", "summary": "0/1 Pending", "message": "Pod is in the Pending phase"}},
		{3, map[string]any{"status": "Current", "summary": "1/1 Running", "message": "Pod is Ready", "previous": "InProgress", "previousSummary": "0/1 Pending"}},
		{4, map[string]any{"status": "Failed", "summary": "0/1 CrashLoopBackOff, 4 restarts", "message": "Containers in CrashLoop state: c", "previous": "Current", "previousSummary": "1/1 Running"}},
		{5, map[string]any{"status": "Terminating", "summary": "0/1 Terminating, 5 restarts", "message": "deletion requested; grace period 30s", "previous": "Failed", "previousSummary": "0/1 CrashLoopBackOff, 4 restarts"}},
		{9, map[string]any{"status": "Current", "summary": "3/3 ready, 3 updated, 3 available", "message": "Deployment is available. Replicas: 3", "previous": "InProgress", "previousSummary": "2/3 ready, 3 updated, 2 available"}},
		{10, map[string]any{"status": "InProgress", "summary": "Ready=False, Size=3", "message": "waiting for the database"}},
		{12, map[string]any{"status": "Terminating", "summary": "Ready=True, Size=3", "message": "deletion requested; waiting for finalizers: example.com/cleanup", "finalizers": []any{"example.com/cleanup"}, "previous": "Current"}},
		{13, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, state(tt.line)); diff != "" {
			t.Errorf("line %d state (-want +got):\n%s", tt.line+1, diff)
		}
	}
}

// A replay shows what the live run showed: the Decoder gives updates their old objects and the
// widgets their printer columns (from the Informer line), so the JSON lines come out byte for
// byte and the human lines the same.
func TestStateReplay(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	events := stateSample(t)
	opts := Options{Output: "json", PluginVersion: "v1.0.0"}
	var live bytes.Buffer
	p := New(&live, opts)
	analyze(events)
	for i := range events {
		if err := p.Print(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.Flush()
	dec := recording.NewDecoder()
	var decoded []watch.Event
	var replayed bytes.Buffer
	rp := New(&replayed, opts)
	for i, line := range bytes.Split(bytes.TrimSuffix(live.Bytes(), []byte("\n")), []byte("\n")) {
		d, err := dec.Decode(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		// Replayed updates are attributed again by the analysis step.
		ev := []watch.Event{d.Event}
		analyze(ev)
		decoded = append(decoded, ev[0])
		if err := rp.Print(&ev[0]); err != nil {
			t.Fatal(err)
		}
	}
	_ = rp.Flush()
	if diff := cmp.Diff(live.String(), replayed.String()); diff != "" {
		t.Errorf("replayed JSON differs (-live +replay):\n%s", diff)
	}
	for _, human := range []Options{{}, {Output: "wide"}} {
		if diff := cmp.Diff(render(t, human, events), render(t, human, decoded)); diff != "" {
			t.Errorf("human output (%+v) of decoded events differs:\n%s", human, diff)
		}
	}
}

func TestSummaryTransition(t *testing.T) {
	tests := []struct{ old, cur, want string }{
		{"0/1 Pending", "1/1 Running", "0/1 Pending → 1/1 Running"},
		{"0/1 Pending", "0/1 Running", "0/1 Pending→Running"},
		{"1/3 ready, 3 updated, 1 available", "2/3 ready, 3 updated, 2 available", "1/3→2/3 ready, 3 updated, 1→2 available"},
		{"0/1 CrashLoopBackOff, 4 restarts", "0/1 CrashLoopBackOff, 5 restarts", "0/1 CrashLoopBackOff, 4→5 restarts"},
		{"Ready=False, Size=3", "Ready=True, Size=3", "Ready=False→True, Size=3"},
		{"1/1 Running", "0/1 CrashLoopBackOff, 1 restart", "1/1 Running → 0/1 CrashLoopBackOff, 1 restart"},
	}
	for _, tt := range tests {
		if got := summaryTransition(tt.old, tt.cur); got != tt.want {
			t.Errorf("summaryTransition(%q, %q) = %q, want %q", tt.old, tt.cur, got, tt.want)
		}
	}
}
