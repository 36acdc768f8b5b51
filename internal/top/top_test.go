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
	ev := watch.UpdateOf(res, old, cur, at)
	a := diff.Attribute(old.Object, cur.Object, nil)
	ev.Obj.Attribution = &a
	return &ev
}

var (
	replicasets = discovery.Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	leases      = discovery.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true}
	nodes       = discovery.Resource{Version: "v1", Resource: "nodes", Kind: "Node"}
	replicas    = map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}
	rsStatus    = map[string]any{"f:status": map[string]any{"f:replicas": map[string]any{}, "f:observedGeneration": map[string]any{}}}
	leaseSpec   = map[string]any{"f:spec": map[string]any{"f:holderIdentity": map[string]any{}, "f:leaseDurationSeconds": map[string]any{}, "f:renewTime": map[string]any{}}}
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

// A fight and a self-loop rank above leases renewed every 2s, with their writers, fields and
// diagnosis; the heartbeats are counted apart.
func TestRankLoopsAboveHeartbeats(t *testing.T) {
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second}, t0)
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
		r.process(ev)
	}
	got := r.rank(t0.Add(31 * time.Second))
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
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second}, t0)
	spec := map[string]any{"f:spec": map[string]any{"f:size": map[string]any{}}}
	creator := entry("kubectl-create", "Update", "", t0, spec)
	prev := metaObject("shop", "loop", "1", 1, creator, entry("widget-operator", "Update", "status", t0, rsStatus))
	at := t0
	step := func(stamp time.Time) {
		cur := metaObject("shop", "loop", prev.GetResourceVersion()+"x", 1, creator, entry("widget-operator", "Update", "status", stamp, rsStatus))
		r.process(update(replicasets, prev, cur, at))
		prev = cur
	}
	for range 12 { // all within t0's second: nobody named
		at = at.Add(50 * time.Millisecond)
		step(t0)
	}
	found := r.rank(at).Objects[0]
	if found.Loop != diff.LoopBusy || !strings.Contains(found.Suggestion, "no update names") {
		t.Fatalf("found: %+v, want busy, saying no writer is named", found)
	}
	for i := range 20 { // one a second from t0+1s: widget-operator's entry stamped anew each time
		at = t0.Add(time.Duration(i+1) * time.Second)
		step(at)
	}
	got := r.rank(at).Objects[0]
	if got.Loop != diff.LoopSelf || !strings.Contains(got.Suggestion, "widget-operator re-triggers itself") {
		t.Errorf("later: %+v, want self by widget-operator", got)
	}
	if d := cmp.Diff([]string{"widget-operator"}, got.LoopManagers); d != "" {
		t.Errorf("loop managers (-want +got):\n%s", d)
	}
}

// Writes leave the ranking when they leave the window; a loop ends with its episode.
func TestRankWindowSlides(t *testing.T) {
	r := newRanking(Config{Window: 10 * time.Second, HotLoopUpdates: 10, HotLoopWindow: 5 * time.Second}, t0)
	for _, ev := range fight(8, t0) { // t0+1s .. t0+8s
		r.process(ev)
	}
	if got := r.rank(t0.Add(8 * time.Second)); got.Objects[0].Writes != 8 || got.Objects[0].Loop != diff.LoopFight {
		t.Fatalf("at 8s: %+v", got.Objects)
	}
	got := r.rank(t0.Add(15 * time.Second)) // window [5s, 15s]: the writes at 5..8s
	if got.Objects[0].Writes != 4 || got.Window != 10*time.Second {
		t.Errorf("at 15s: %d writes over %s, want 4 over 10s", got.Objects[0].Writes, got.Window)
	}
	if got.Objects[0].Loop != "" {
		t.Errorf("at 15s the loop %q goes on, want it ended (no write for 7s, window 5s)", got.Objects[0].Loop)
	}
	if got := r.rank(t0.Add(30 * time.Second)); len(got.Objects) != 0 || len(r.ranker.objects) != 0 {
		t.Errorf("at 30s: %+v ranked, %d kept; want none", got.Objects, len(r.ranker.objects))
	}
}

func TestSkippedOnce(t *testing.T) {
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: time.Minute}, t0)
	for range 3 {
		r.process(&watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Reason: "Forbidden", Message: "cannot list secrets"}, Resource: discovery.Resource{Version: "v1", Resource: "secrets"}})
	}
	r.process(&watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Reason: "Expired"}, Resource: nodes})
	if d := cmp.Diff([]Skipped{{"secrets", "cannot list secrets"}}, r.rank(t0.Add(time.Second)).Skipped); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestCreatesDeletes(t *testing.T) {
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: time.Minute}, t0)
	pod := func(typ watch.Type, initial bool) *watch.Event {
		return &watch.Event{Type: typ, Obj: watch.ObjectInfo{InitialList: initial}, Time: t0, Resource: discovery.Resource{Version: "v1", Resource: "pods"}, Namespace: "a", Name: "p"}
	}
	for _, ev := range []*watch.Event{pod(watch.Added, true), pod(watch.Added, true), pod(watch.Added, false), pod(watch.Deleted, false)} {
		r.process(ev)
	}
	got := r.rank(t0.Add(time.Second)).Resources
	if d := cmp.Diff([]ResourceRank{{Resource: "pods", Objects: 2, Creates: 1, Deletes: 1}}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestWriteTextAndJSON(t *testing.T) {
	r := newRanking(Config{Window: time.Minute, HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second}, t0)
	for _, ev := range append(fight(12, t0), renewals("kube-scheduler", 3, t0)...) {
		r.process(ev)
	}
	r.ranker.Skip(Skipped{Resource: "secrets", Message: "cannot list secrets"})
	rank := r.rank(t0.Add(20 * time.Second))
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
