package top

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var t0 = time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)

// entry is a managedFields entry as the API server writes it.
func entry(manager, op, sub string, at time.Time, fields map[string]any) map[string]any {
	e := map[string]any{"manager": manager, "operation": op, "apiVersion": "v1", "fieldsType": "FieldsV1",
		"time": at.UTC().Format(time.RFC3339), "fieldsV1": fields}
	if sub != "" {
		e["subresource"] = sub
	}
	return e
}

// metaObject is a metadata-only object (as PartialObjectMetadata converts) with managedFields.
func metaObject(ns, name, rv string, generation int64, entries ...map[string]any) *unstructured.Unstructured {
	var mf []any
	for _, e := range entries {
		mf = append(mf, e)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"namespace": ns, "name": name, "resourceVersion": rv, "generation": generation, "managedFields": mf}}}
}

func update(res discovery.Resource, old, cur *unstructured.Unstructured, at time.Time) *watch.Event {
	ev := &watch.Event{Type: watch.Updated, Delta: watch.DeltaUpdated, Time: at, Resource: res, Namespace: cur.GetNamespace(),
		Name: cur.GetName(), ResourceVersion: cur.GetResourceVersion(), OldResourceVersion: old.GetResourceVersion(), Object: cur, OldObject: old}
	a := diff.Attribute(old.Object, cur.Object, nil)
	ev.Attribution = &a
	return ev
}

var (
	replicasets = discovery.Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	leases      = discovery.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true}
	nodes       = discovery.Resource{Version: "v1", Resource: "nodes", Kind: "Node"}
	replicas    = map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}
	rsStatus    = map[string]any{"f:status": map[string]any{"f:replicas": map[string]any{}, "f:observedGeneration": map[string]any{}}}
	leaseSpec   = map[string]any{"f:spec": map[string]any{"f:holderIdentity": map[string]any{}, "f:leaseDurationSeconds": map[string]any{}, "f:renewTime": map[string]any{}}}
	nodeStatus  = map[string]any{"f:status": map[string]any{"f:conditions": map[string]any{
		`k:{"type":"Ready"}`: map[string]any{".": map[string]any{}, "f:lastHeartbeatTime": map[string]any{}, "f:status": map[string]any{}, "f:type": map[string]any{}},
	}}}
)

// fight is two managers taking spec.replicas from each other, one write a second: the taker's
// entry gains it (with the write's time), the other's loses it (and keeps its time).
func fight(n int, start time.Time) []*watch.Event {
	var evs []*watch.Event
	kcm := func(holds bool) map[string]any {
		f := map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{}}}
		if holds {
			f["f:spec"] = replicas["f:spec"]
		}
		return f
	}
	op := func(holds bool) map[string]any {
		f := map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}}
		if holds {
			f["f:spec"] = replicas["f:spec"]
		}
		return f
	}
	kcmAt, opAt := start, start
	prev := metaObject("shop", "web-1", "1", 1, entry("kube-controller-manager", "Update", "", kcmAt, kcm(true)), entry("widget-operator", "Update", "", opAt, op(false)))
	for i := range n {
		at := start.Add(time.Duration(i+1) * time.Second)
		operatorTakes := i%2 == 0
		if operatorTakes {
			opAt = at
		} else {
			kcmAt = at
		}
		cur := metaObject("shop", "web-1", prev.GetResourceVersion()+"x", int64(i+2),
			entry("kube-controller-manager", "Update", "", kcmAt, kcm(!operatorTakes)), entry("widget-operator", "Update", "", opAt, op(operatorTakes)))
		evs = append(evs, update(replicasets, prev, cur, at))
		prev = cur
	}
	return evs
}

// renewals are a Lease renewed every 2s by its holder.
func renewals(name string, n int, start time.Time) []*watch.Event {
	var evs []*watch.Event
	prev := metaObject("kube-system", name, "1", 0, entry(name, "Update", "", start, leaseSpec))
	for i := range n {
		at := start.Add(time.Duration(2*i+2) * time.Second)
		cur := metaObject("kube-system", name, prev.GetResourceVersion()+"x", 0, entry(name, "Update", "", at, leaseSpec))
		evs = append(evs, update(leases, prev, cur, at))
		prev = cur
	}
	return evs
}

func TestFromEvent(t *testing.T) {
	hb := Heartbeats()
	statusLoopOld := metaObject("shop", "w", "1", 1, entry("widget-operator", "Update", "status", t0, rsStatus), entry("kubectl", "Update", "", t0.Add(-time.Hour), replicas))
	statusLoopNew := metaObject("shop", "w", "2", 1, entry("widget-operator", "Update", "status", t0, rsStatus), entry("kubectl", "Update", "", t0.Add(-time.Hour), replicas))
	tie := metaObject("shop", "w", "2", 1, entry("widget-operator", "Update", "status", t0, rsStatus), entry("kubectl", "Update", "", t0, replicas))
	nodeOld := metaObject("", "n1", "1", 0, entry("kwok", "Update", "status", t0, nodeStatus))
	nodeNew := metaObject("", "n1", "2", 0, entry("kwok", "Update", "status", t0.Add(10*time.Second), nodeStatus))
	tests := []struct {
		name string
		ev   *watch.Event
		want Write
	}{
		{"a fighter gains the field it takes", fight(1, t0)[0],
			Write{Managers: []string{"widget-operator"}, Paths: []string{"spec.replicas"}, GenerationChanged: true}},
		{"a lease renewal is a heartbeat", renewals("kube-scheduler", 1, t0)[0],
			Write{Managers: []string{"kube-scheduler"}, Paths: []string{"spec.holderIdentity", "spec.leaseDurationSeconds", "spec.renewTime"}, Heartbeat: true}},
		{"a node status heartbeat, by its condition's key", update(nodes, nodeOld, nodeNew, t0),
			Write{Managers: []string{"kwok"}, Paths: []string{"status.conditions[type=Ready].lastHeartbeatTime", "status.conditions[type=Ready].status"}, Heartbeat: true}},
		{"a second write within the second: the one newest entry wrote it", update(replicasets, statusLoopOld, statusLoopNew, t0),
			Write{Managers: []string{"widget-operator"}, Inferred: true, Paths: []string{"status.observedGeneration", "status.replicas"}}},
		{"two entries equally new: nobody", update(replicasets, statusLoopOld, tie, t0),
			Write{Managers: []string{"kubectl"}, Paths: []string{"spec.replicas"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromEvent(tt.ev, hb)
			if !ok {
				t.Fatal("not a write")
			}
			slices.Sort(got.Paths)
			got.At, got.Resource, got.Namespace, got.Name = time.Time{}, "", "", ""
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if _, ok := FromEvent(&watch.Event{Type: watch.Added, Object: statusLoopNew}, hb); ok {
		t.Error("an Added event made a write")
	}
}

// Nobody can be named when two entries hold the newest time and none moved.
func TestFromEventNobody(t *testing.T) {
	old := metaObject("shop", "w", "1", 1, entry("a", "Update", "", t0, replicas), entry("b", "Update", "status", t0, rsStatus))
	cur := metaObject("shop", "w", "2", 1, entry("a", "Update", "", t0, replicas), entry("b", "Update", "status", t0, rsStatus))
	w, _ := FromEvent(update(replicasets, old, cur, t0), Heartbeats())
	if len(w.Managers) != 0 || w.Inferred || w.Heartbeat {
		t.Errorf("got %+v, want nobody named, not a heartbeat", w)
	}
}

// A fight and a self-loop rank above leases renewed every 2s, with their writers, fields and
// diagnosis; the heartbeats are counted apart.
func TestRankLoopsAboveHeartbeats(t *testing.T) {
	r := NewRanker(time.Minute, 10, 30*time.Second, t0)
	var evs []*watch.Event
	evs = append(evs, fight(20, t0)...)
	evs = append(evs, renewals("kube-controller-manager", 15, t0)...)
	evs = append(evs, renewals("kube-scheduler", 15, t0)...)
	// A self-loop: widget-operator writing status, three times a second.
	prev := metaObject("shop", "loop", "1", 1, entry("widget-operator", "Update", "status", t0, rsStatus))
	for i := range 30 {
		at := t0.Add(time.Duration(i) * time.Second / 3)
		cur := metaObject("shop", "loop", prev.GetResourceVersion()+"x", 1, entry("widget-operator", "Update", "status", at.Truncate(time.Second), rsStatus))
		evs = append(evs, update(replicasets, prev, cur, at))
		prev = cur
	}
	slices.SortStableFunc(evs, func(a, b *watch.Event) int { return a.Time.Compare(b.Time) })
	for _, ev := range evs {
		observe(r, ev, Heartbeats())
	}
	got := r.Rank(t0.Add(31 * time.Second))
	if len(got.Objects) != 4 {
		t.Fatalf("%d objects ranked, want 4: %+v", len(got.Objects), got.Objects)
	}
	first, second := got.Objects[0], got.Objects[1]
	if first.Name != "loop" || first.Writes != 30 || first.Loop != diff.LoopSelf || !strings.Contains(first.Suggestion, "widget-operator re-triggers itself") {
		t.Errorf("first: %+v, want the self-loop with its 30 writes and fix", first)
	}
	if second.Name != "web-1" || second.Writes != 20 || second.Loop != diff.LoopFight || second.Suggestion == "" {
		t.Errorf("second: %+v, want the fight with 20 writes", second)
	}
	if d := cmp.Diff([]Count{{"kube-controller-manager", 10}, {"widget-operator", 10}}, second.Managers); d != "" {
		t.Errorf("fight's managers (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Count{{"spec.replicas", 20}}, second.Paths); d != "" {
		t.Errorf("fight's paths (-want +got):\n%s", d)
	}
	for _, o := range got.Objects[2:] {
		if o.Resource != "leases.coordination.k8s.io" || o.Writes != 0 || o.Heartbeats != 15 || o.Loop != "" {
			t.Errorf("lease: %+v, want 15 heartbeats, no writes, no loop", o)
		}
	}
	if got.Writes != 50 || got.Heartbeats != 30 {
		t.Errorf("writes %d, heartbeats %d; want 50 and 30", got.Writes, got.Heartbeats)
	}
	if got.Writers[0].Manager != "widget-operator" || got.Writers[0].Writes != 40 || got.Writers[0].Objects != 2 {
		t.Errorf("first writer %+v, want widget-operator with 40 writes on 2 objects", got.Writers[0])
	}
	if got.Resources[0].Resource != "replicasets.apps" || got.Resources[0].Writes != 50 || got.Resources[0].Written != 2 {
		t.Errorf("first resource %+v, want replicasets.apps, 50 writes on 2 objects", got.Resources[0])
	}
	if got.Window != 31*time.Second {
		t.Errorf("window %s, want the run's 31s", got.Window)
	}
}

// A self-loop first seen in the middle of its loop (top started, or its informer synced, after
// the object was created and written in the same second): its first updates name nobody (both
// entries stamped that second, none changed), so the loop is found before its writer is known.
// Once later seconds name widget-operator, the ranking says self with its fix, not busy (the CI
// failure of TestRealTopLoopsAboveHeartbeats).
func TestRankLoopRediagnosed(t *testing.T) {
	r := NewRanker(time.Minute, 10, 30*time.Second, t0)
	spec := map[string]any{"f:spec": map[string]any{"f:size": map[string]any{}}}
	creator := entry("kubectl-create", "Update", "", t0, spec)
	prev := metaObject("shop", "loop", "1", 1, creator, entry("widget-operator", "Update", "status", t0, rsStatus))
	at := t0
	step := func(stamp time.Time) {
		cur := metaObject("shop", "loop", prev.GetResourceVersion()+"x", 1, creator, entry("widget-operator", "Update", "status", stamp, rsStatus))
		observe(r, update(replicasets, prev, cur, at), Heartbeats())
		prev = cur
	}
	for range 12 { // all within t0's second: nobody named
		at = at.Add(50 * time.Millisecond)
		step(t0)
	}
	found := r.Rank(at).Objects[0]
	if found.Loop != diff.LoopBusy || !strings.Contains(found.Suggestion, "no update names") {
		t.Fatalf("found: %+v, want busy, saying no writer is named", found)
	}
	for i := range 20 { // one a second from t0+1s: widget-operator's entry stamped anew each time
		at = t0.Add(time.Duration(i+1) * time.Second)
		step(at)
	}
	got := r.Rank(at).Objects[0]
	if got.Loop != diff.LoopSelf || !strings.Contains(got.Suggestion, "widget-operator re-triggers itself") {
		t.Errorf("later: %+v, want self by widget-operator", got)
	}
	if d := cmp.Diff([]string{"widget-operator"}, got.LoopManagers); d != "" {
		t.Errorf("loop managers (-want +got):\n%s", d)
	}
}

// Writes leave the ranking when they leave the window; a loop ends with its episode.
func TestRankWindowSlides(t *testing.T) {
	r := NewRanker(10*time.Second, 10, 5*time.Second, t0)
	for _, ev := range fight(8, t0) { // t0+1s .. t0+8s
		observe(r, ev, nil)
	}
	if got := r.Rank(t0.Add(8 * time.Second)); got.Objects[0].Writes != 8 || got.Objects[0].Loop != diff.LoopFight {
		t.Fatalf("at 8s: %+v", got.Objects)
	}
	got := r.Rank(t0.Add(15 * time.Second)) // window [5s, 15s]: the writes at 5..8s
	if got.Objects[0].Writes != 4 || got.Window != 10*time.Second {
		t.Errorf("at 15s: %d writes over %s, want 4 over 10s", got.Objects[0].Writes, got.Window)
	}
	if got.Objects[0].Loop != "" {
		t.Errorf("at 15s the loop %q goes on, want it ended (no write for 7s, window 5s)", got.Objects[0].Loop)
	}
	if got := r.Rank(t0.Add(30 * time.Second)); len(got.Objects) != 0 || len(r.objects) != 0 {
		t.Errorf("at 30s: %+v ranked, %d kept; want none", got.Objects, len(r.objects))
	}
}

func TestSkippedOnce(t *testing.T) {
	r := NewRanker(time.Minute, 10, time.Minute, t0)
	for range 3 {
		observe(r, &watch.Event{Type: watch.Error, Reason: "Forbidden", Resource: discovery.Resource{Version: "v1", Resource: "secrets"}, Message: "cannot list secrets"}, nil)
	}
	observe(r, &watch.Event{Type: watch.Error, Reason: "Expired", Resource: nodes}, nil)
	if d := cmp.Diff([]Skipped{{"secrets", "cannot list secrets"}}, r.Rank(t0.Add(time.Second)).Skipped); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestCreatesDeletes(t *testing.T) {
	r := NewRanker(time.Minute, 10, time.Minute, t0)
	pod := func(typ watch.Type, initial bool) *watch.Event {
		return &watch.Event{Type: typ, InitialList: initial, Time: t0, Resource: discovery.Resource{Version: "v1", Resource: "pods"}, Namespace: "a", Name: "p"}
	}
	for _, ev := range []*watch.Event{pod(watch.Added, true), pod(watch.Added, true), pod(watch.Added, false), pod(watch.Deleted, false)} {
		observe(r, ev, nil)
	}
	got := r.Rank(t0.Add(time.Second)).Resources
	if d := cmp.Diff([]ResourceRank{{Resource: "pods", Objects: 2, Creates: 1, Deletes: 1}}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestWriteTextAndJSON(t *testing.T) {
	r := NewRanker(time.Minute, 10, 30*time.Second, t0)
	for _, ev := range append(fight(12, t0), renewals("kube-scheduler", 3, t0)...) {
		observe(r, ev, Heartbeats())
	}
	r.Skip(Skipped{Resource: "secrets", Message: "cannot list secrets"})
	rank := r.Rank(t0.Add(20 * time.Second))
	var b bytes.Buffer
	if err := WriteFinal(&b, rank, 10); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"top after 20s: 12 writes (0.6/s) and 3 heartbeats in the last 20s; 1 resources skipped (forbidden)",
		"1  replicasets.apps            shop/web-1                  0.6       12      0           kube-controller-manager:6,widget-operator:6  fight  spec.replicas:12\n   fight: widget-operator and kube-controller-manager take turns at spec.replicas; fix: let only one of them write it\n2  leases",
		"kubectl informer watch replicasets.apps web-1 -n shop --diff",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "watch leases.coordination.k8s.io") {
		t.Errorf("a drill-in command for a heartbeat-only object:\n%s", text)
	}
	b.Reset()
	said := 0
	if err := WriteJSON(&b, rank, 10, true, &said); err != nil {
		t.Fatal(err)
	}
	var types []string
	var top map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		types = append(types, m["type"].(string))
		if m["type"] == "Top" && top == nil {
			top = m
		}
	}
	if d := cmp.Diff([]string{"TopSkipped", "Top", "Top", "TopWriter", "TopWriter", "TopWriter", "TopResource", "TopResource"}, types); d != "" {
		t.Errorf("line types (-want +got):\n%s", d)
	}
	want := map[string]any{"type": "Top", "time": "2026-11-25T03:00:20.000000000Z", "rank": 1.0, "windowSeconds": 20.0,
		"resource": "replicasets.apps", "namespace": "shop", "name": "web-1", "writes": 12.0, "heartbeats": 0.0, "rate": 0.6,
		"managers": []any{map[string]any{"name": "kube-controller-manager", "writes": 6.0}, map[string]any{"name": "widget-operator", "writes": 6.0}},
		"paths":    []any{map[string]any{"name": "spec.replicas", "writes": 12.0}},
		"loop":     "fight", "loopManagers": []any{"widget-operator", "kube-controller-manager"}, "suggestion": "widget-operator and kube-controller-manager take turns at spec.replicas; fix: let only one of them write it",
		"final": true, "watch": "kubectl informer watch replicasets.apps web-1 -n shop --diff"}
	if d := cmp.Diff(want, top); d != "" {
		t.Errorf("Top line (-want +got):\n%s", d)
	}
	b.Reset()
	if err := WriteJSON(&b, rank, 10, false, &said); err != nil || strings.Contains(b.String(), "TopSkipped") {
		t.Errorf("TopSkipped said twice: %v\n%s", err, b.String())
	}
}

func TestWatchable(t *testing.T) {
	// Covered in pkg/discovery; here only that a materialized fieldsV1 of lists keeps both
	// sides' elements paired.
	tree := map[string]any{"f:metadata": map[string]any{"f:finalizers": map[string]any{`v:"a"`: map[string]any{}, `v:"b"`: map[string]any{}}}}
	var paths []string
	for _, c := range fieldPaths(tree) {
		paths = append(paths, c.Path)
	}
	if d := cmp.Diff([]string{"metadata.finalizers[0]", "metadata.finalizers[1]"}, paths); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// A drill-in command is pasted into a shell: every name in it is one shell word, so a name with
// `;`, `$(...)`, spaces or quotes runs nothing (and a control character is escaped as well).
func TestDrillInQuotesNames(t *testing.T) {
	tests := []struct {
		name string
		o    ObjectRank
		want string
	}{
		{"plain", ObjectRank{Resource: "replicasets.apps", Namespace: "shop", Name: "web-1"},
			"kubectl informer watch replicasets.apps web-1 -n shop --diff"},
		{"command separator", ObjectRank{Resource: "clusterroles.rbac.authorization.k8s.io", Name: "x; touch PWNED #"},
			"kubectl informer watch clusterroles.rbac.authorization.k8s.io 'x; touch PWNED #' --diff"},
		{"substitution and quote", ObjectRank{Resource: "roles.rbac.authorization.k8s.io", Namespace: "a$(id)", Name: "it's`id`"},
			`kubectl informer watch roles.rbac.authorization.k8s.io 'it'\''s` + "`id`" + `' -n 'a$(id)' --diff`},
		{"terminal escape", ObjectRank{Resource: "clusterroles.rbac.authorization.k8s.io", Name: "t\x1b]0;PWN\ax"},
			`kubectl informer watch clusterroles.rbac.authorization.k8s.io 't^[]0;PWN\x07x' --diff`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DrillIn(tt.o); got != tt.want {
				t.Errorf("DrillIn = %q, want %q", got, tt.want)
			}
		})
	}
	// The final text and the JSON's watch field are the same command.
	o := tests[1].o
	o.Writes, o.Rate = 3, 1
	r := Ranking{Window: time.Minute, Objects: []ObjectRank{o}}
	var b bytes.Buffer
	if err := WriteFinal(&b, r, 3); err != nil || !strings.Contains(b.String(), "  1  "+tests[1].want+"\n") {
		t.Errorf("final text (%v):\n%s", err, b.String())
	}
	b.Reset()
	said := 0
	var rec struct{ Watch string }
	if err := WriteJSON(&b, r, 3, true, &said); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(strings.SplitN(b.String(), "\n", 2)[0]), &rec); err != nil || rec.Watch != tests[1].want {
		t.Errorf("Top.watch %q (%v), want %q", rec.Watch, err, tests[1].want)
	}
}
