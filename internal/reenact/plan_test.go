package reenact

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var widgets = discovery.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}

// widget is a recorded Widget with managedFields entries: manager/subresource@second.
func widget(name, rv string, status map[string]any, entries ...string) *unstructured.Unstructured {
	var mf []any
	for _, e := range entries {
		who, sec, _ := strings.Cut(e, "@")
		manager, sub, _ := strings.Cut(who, "/")
		fields := map[string]any{"f:spec": map[string]any{}}
		if sub == "status" {
			fields = map[string]any{"f:status": map[string]any{}}
		}
		m := map[string]any{"manager": manager, "operation": "Update", "apiVersion": "example.com/v1", "time": "2026-01-01T00:00:" + sec + "Z", "fieldsType": "FieldsV1", "fieldsV1": fields}
		if sub != "" {
			m["subresource"] = sub
		}
		mf = append(mf, m)
	}
	o := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "demo", "uid": "uid-" + name, "resourceVersion": rv, "generation": int64(1), "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": mf},
		"spec":     map[string]any{"size": int64(1)},
	}
	if status != nil {
		o["status"] = status
	}
	return &unstructured.Unstructured{Object: o}
}

func at(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }

func recordedEvents() []watch.Event {
	calm := widget("calm", "10", map[string]any{"phase": "Ready"}, "kubectl-create@00", "widget-operator/status@01")
	loop := widget("loop", "20", nil, "kubectl-create@03")
	loop1 := widget("loop", "21", map[string]any{"t": "1"}, "kubectl-create@03", "widget-operator/status@04")
	loop2 := widget("loop", "22", map[string]any{"t": "2"}, "kubectl-create@03", "widget-operator/status@05")
	noop := widget("loop", "23", map[string]any{"t": "2"}, "kubectl-create@03", "widget-operator/status@05")
	edit := widget("loop", "24", map[string]any{"t": "2"}, "kubectl-create@03", "widget-operator/status@05", "kubectl-edit@06")
	edit.Object["spec"] = map[string]any{"size": int64(2)}
	return []watch.Event{
		{Type: watch.Added, Time: at(2), Resource: widgets, Namespace: "demo", Name: "calm", ResourceVersion: "10", Obj: watch.ObjectInfo{InitialList: true, Delta: watch.DeltaReplaced, Object: calm}},
		{Type: watch.Synced, Time: at(2), Resource: widgets},
		{Type: watch.Added, Time: at(3), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "20", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: loop}},
		{Type: watch.Updated, Time: at(4), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "21", Obj: watch.ObjectInfo{OldResourceVersion: "20", Delta: watch.DeltaUpdated, Object: loop1, OldObject: loop}},
		{Type: watch.Updated, Time: at(5), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "22", Obj: watch.ObjectInfo{OldResourceVersion: "21", Delta: watch.DeltaUpdated, Object: loop2, OldObject: loop1}},
		{Type: watch.Updated, Time: at(5), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "22", Obj: watch.ObjectInfo{OldResourceVersion: "22", Delta: watch.DeltaSync, Object: loop2, OldObject: loop2}},
		{Type: watch.Updated, Time: at(5), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "23", Obj: watch.ObjectInfo{OldResourceVersion: "22", Delta: watch.DeltaUpdated, Object: noop, OldObject: loop2}},
		{Type: watch.Updated, Time: at(6), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "24", Obj: watch.ObjectInfo{OldResourceVersion: "23", Delta: watch.DeltaUpdated, Object: edit, OldObject: noop}},
		{Type: watch.HotLoop, Time: at(6), Resource: widgets, Namespace: "demo", Name: "loop", HotLoop: &watch.HotLoopInfo{Loop: "self", Managers: []string{"widget-operator"}, Fields: []string{"status.t"}}},
		{Type: watch.Deleted, Time: at(7), Resource: widgets, Namespace: "demo", Name: "loop", ResourceVersion: "25", Obj: watch.ObjectInfo{Delta: watch.DeltaDeleted, Object: edit}},
	}
}

// The writes of a recording: the initial object, then creates, updates (by their writer,
// through the subresource it used) and deletes; resyncs and no-op updates are not writes.
func TestNewPlan(t *testing.T) {
	p := NewPlan(recordedEvents())
	type row struct{ Op, Name, Manager, Sub, RV string }
	var got []row
	for _, s := range append(p.Initial, p.Steps...) {
		got = append(got, row{string(s.Op), s.Name, s.Manager, s.Subresource, s.RecordedRV})
	}
	want := []row{
		{"create", "calm", "kubectl-create", "", "10"},
		{"create", "loop", "kubectl-create", "", "20"},
		{"update", "loop", "widget-operator", "status", "21"},
		{"update", "loop", "widget-operator", "status", "22"},
		{"update", "loop", "kubectl-edit", "", "24"},
		{"delete", "loop", "", "", "25"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if len(p.Initial) != 1 || p.NoOps != 1 || !p.Start.Equal(at(2)) {
		t.Errorf("initial %d, no-ops %d, start %v; want 1, 1, %v", len(p.Initial), p.NoOps, p.Start, at(2))
	}
	if d := cmp.Diff([]string{"demo"}, p.Namespaces); d != "" {
		t.Errorf("namespaces: %s", d)
	}
	if statusManager(p.Initial[0].Object) != "widget-operator" {
		t.Errorf("status manager of calm %q", statusManager(p.Initial[0].Object))
	}
}

// A reenacted object carries none of the server's metadata, is in the mapped namespace with
// the reenactment's label, and owns only what was reenacted.
func TestWritable(t *testing.T) {
	o := widget("w", "5", nil, "m@00")
	o.Object["metadata"].(map[string]any)["ownerReferences"] = []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "rec-a"},
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "rec-b"},
	}
	w := writable(o, "repro", Label, "r1", map[string]string{"rec-a": "tgt-a"})
	md := w.Object["metadata"].(map[string]any)
	for _, k := range serverMetadata {
		if _, ok := md[k]; ok {
			t.Errorf("metadata.%s kept", k)
		}
	}
	if w.GetNamespace() != "repro" || w.GetLabels()[Label] != "r1" {
		t.Errorf("namespace %q, labels %v", w.GetNamespace(), w.GetLabels())
	}
	if own := w.GetOwnerReferences(); len(own) != 1 || own[0].UID != "tgt-a" {
		t.Errorf("owners %+v, want only a, with its reenacted uid", own)
	}
	if o.GetNamespace() != "demo" || o.GetResourceVersion() != "5" {
		t.Error("the recorded object was changed")
	}
}

func TestMergePatch(t *testing.T) {
	old := map[string]any{"spec": map[string]any{"a": int64(1), "b": "x", "l": []any{"p"}}, "status": map[string]any{"t": "1"}}
	cur := map[string]any{"spec": map[string]any{"a": float64(1), "c": true, "l": []any{"p", "q"}}, "status": map[string]any{"t": "2"}}
	p := mergePatch(old, cur)
	want := map[string]any{"spec": map[string]any{"b": nil, "c": true, "l": []any{"p", "q"}}, "status": map[string]any{"t": "2"}}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("patch (-want +got):\n%s", d)
	}
	if !applied(cur, p) || applied(old, p) {
		t.Error("applied: want true on the new object, false on the old")
	}
	undo := restrict(mergePatch(cur, old), p)
	if !applied(old, undo) || applied(cur, undo) {
		t.Errorf("the undo patch %v should hold on the old object only", undo)
	}
	main, status := split(p)
	if _, ok := main["status"]; ok || status["status"] == nil {
		t.Errorf("split: main %v, status %v", main, status)
	}
}

// Compare names the loop that is gone and the writes saved by the manager under test.
func TestCompare(t *testing.T) {
	orig := NewTally(recordedEvents(), func(ns string) string { return ns + "-r" })
	var fixed []watch.Event
	for _, ev := range recordedEvents() {
		if ev.Type == watch.HotLoop || (ev.Type == watch.Updated && ev.ResourceVersion == "22") {
			continue
		}
		ev.Namespace += "-r"
		fixed = append(fixed, ev)
	}
	re := NewTally(fixed, nil)
	if orig.Writers["widget-operator"] != 2 || re.Writers["widget-operator"] != 1 || orig.Writers["kubectl-edit"] != 1 {
		t.Fatalf("writers: original %v, reenacted %v", orig.Writers, re.Writers)
	}
	var b bytes.Buffer
	Compare(&b, orig, re, []string{"widget-operator", "kubectl-edit"})
	out := b.String()
	for _, want := range []string{
		"hot loop gone: widgets.example.com demo-r/loop (self by widget-operator: status.t) is in the original, not in the reenactment",
		"writes saved: widget-operator made 2 updates in the original, 1 in the reenactment (1 fewer)",
		"widgets.example.com demo-r/loop",
		"writes: kubectl-edit made 1 updates in each",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
}

func TestConfig(t *testing.T) {
	c := &Config{Name: "r1", NamespaceMap: map[string]string{"demo": "repro"}}
	if c.TargetNamespace("demo") != "repro" || c.TargetNamespace("other") != "other-r1" || c.TargetNamespace("") != "" {
		t.Errorf("target namespaces: %q %q", c.TargetNamespace("demo"), c.TargetNamespace("other"))
	}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"ok", Config{Name: "r", Speed: 1}, ""},
		{"negative speed", Config{Name: "r", Speed: -1}, "--speed must be"},
		{"no name", Config{Speed: 1}, "needs a name"},
		{"empty mapping", Config{Name: "r", NamespaceMap: map[string]string{"a": ""}}, "both namespaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestCRDFor(t *testing.T) {
	r := widgets
	r.PrinterColumns = []discovery.PrinterColumn{{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}
	crd := crdFor(r, true, "r1")
	if crd.GetName() != "widgets.example.com" || crd.GetLabels()[Label] != "r1" {
		t.Errorf("name %q labels %v", crd.GetName(), crd.GetLabels())
	}
	v, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if _, ok := v[0].(map[string]any)["subresources"]; !ok {
		t.Error("no status subresource")
	}
	if !custom("example.com") || custom("apps") || custom("networking.k8s.io") {
		t.Error("custom()")
	}
}

// With the controller's log in both runs, --compare counts its reconciles per object; without
// it in either, it prints no such table.
func TestCompareReconciles(t *testing.T) {
	reconcile := func(ns, name string) watch.Event {
		return watch.Event{Type: watch.ControllerReconcile, Namespace: ns, Name: name, Reconcile: &watch.ReconcileInfo{}}
	}
	orig := NewTally([]watch.Event{reconcile("demo", "loop"), reconcile("demo", "loop"), reconcile("demo", "loop"), reconcile("demo", "calm")},
		func(ns string) string { return ns + "-r" })
	re := NewTally([]watch.Event{reconcile("demo-r", "loop")}, nil)
	var b bytes.Buffer
	Compare(&b, orig, re, nil)
	for _, want := range []string{
		"  reconciles per object (controller's log)              original reenacted\n",
		"  demo-r/calm                                                  1         0\n",
		"  demo-r/loop                                                  3         1\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Compare(&b, NewTally(recordedEvents(), nil), NewTally(nil, nil), nil)
	if strings.Contains(b.String(), "reconciles") {
		t.Errorf("reconciles table without any ControllerReconcile line:\n%s", b.String())
	}
}

// Names and managers in a recording may come from anyone: --compare never writes them raw to a
// terminal.
func TestCompareEscapes(t *testing.T) {
	evs := recordedEvents()
	for i := range evs {
		evs[i].Name = "x\x1b[2Jy"
	}
	tl := NewTally(evs, nil)
	var b bytes.Buffer
	Compare(&b, tl, tl, []string{"evil\x1b]0;t\x07"})
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("a control character reached the output: %q", b.String())
	}
}

// A Service gets the target's own cluster IPs and node ports; a headless one stays headless.
func TestWritableService(t *testing.T) {
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "namespace": "demo"},
		"spec": map[string]any{"clusterIP": "10.96.0.12", "clusterIPs": []any{"10.96.0.12"}, "type": "NodePort",
			"ports": []any{map[string]any{"port": int64(80), "nodePort": int64(30080)}}}}}
	w := writable(svc, "repro", Label, "r1", nil)
	spec := w.Object["spec"].(map[string]any)
	if _, ok := spec["clusterIP"]; ok {
		t.Errorf("clusterIP kept: %v", spec)
	}
	if _, ok := spec["ports"].([]any)[0].(map[string]any)["nodePort"]; ok {
		t.Errorf("nodePort kept: %v", spec)
	}
	if svc.Object["spec"].(map[string]any)["clusterIP"] != "10.96.0.12" {
		t.Error("the recorded Service was changed")
	}
	svc.Object["spec"].(map[string]any)["clusterIP"] = "None"
	if ip := writable(svc, "repro", Label, "r1", nil).Object["spec"].(map[string]any)["clusterIP"]; ip != "None" {
		t.Errorf("headless clusterIP %v", ip)
	}
}

func TestWatchArg(t *testing.T) {
	p := &Plan{Resources: []discovery.Resource{
		{Version: "v1", Resource: "configmaps"},
		{Group: "apps", Version: "v1", Resource: "replicasets"},
	}}
	// The core group's trailing dot: "configmaps.v1" would be resource configmaps of group v1.
	if got, want := WatchArg(p), "configmaps.v1.,replicasets.v1.apps"; got != want {
		t.Errorf("WatchArg = %q, want %q", got, want)
	}
}
