package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The metadata-only objects of top's informers (the same as internal/top's tests).

var m0 = time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)

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

func metaUpdate(res discovery.Resource, old, cur *unstructured.Unstructured, at time.Time) *watch.Event {
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
		evs = append(evs, metaUpdate(replicasets, prev, cur, at))
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
		evs = append(evs, metaUpdate(leases, prev, cur, at))
		prev = cur
	}
	return evs
}

func TestWriteOf(t *testing.T) {
	hb := Heartbeats()
	statusLoopOld := metaObject("shop", "w", "1", 1, entry("widget-operator", "Update", "status", m0, rsStatus), entry("kubectl", "Update", "", m0.Add(-time.Hour), replicas))
	statusLoopNew := metaObject("shop", "w", "2", 1, entry("widget-operator", "Update", "status", m0, rsStatus), entry("kubectl", "Update", "", m0.Add(-time.Hour), replicas))
	tie := metaObject("shop", "w", "2", 1, entry("widget-operator", "Update", "status", m0, rsStatus), entry("kubectl", "Update", "", m0, replicas))
	nodeOld := metaObject("", "n1", "1", 0, entry("kwok", "Update", "status", m0, nodeStatus))
	nodeNew := metaObject("", "n1", "2", 0, entry("kwok", "Update", "status", m0.Add(10*time.Second), nodeStatus))
	tests := []struct {
		name string
		ev   *watch.Event
		want Write
	}{
		{"a fighter gains the field it takes", fight(1, m0)[0],
			Write{Managers: []string{"widget-operator"}, Paths: []string{"spec.replicas"}, GenerationChanged: true}},
		{"a lease renewal is a heartbeat", renewals("kube-scheduler", 1, m0)[0],
			Write{Managers: []string{"kube-scheduler"}, Paths: []string{"spec.holderIdentity", "spec.leaseDurationSeconds", "spec.renewTime"}, Heartbeat: true}},
		{"a node status heartbeat, by its condition's key", metaUpdate(nodes, nodeOld, nodeNew, m0),
			Write{Managers: []string{"kwok"}, Paths: []string{"status.conditions[type=Ready].lastHeartbeatTime", "status.conditions[type=Ready].status"}, Heartbeat: true}},
		{"a second write within the second: the one newest entry wrote it", metaUpdate(replicasets, statusLoopOld, statusLoopNew, m0),
			Write{Managers: []string{"widget-operator"}, Inferred: true, Paths: []string{"status.observedGeneration", "status.replicas"}}},
		{"two entries equally new: nobody", metaUpdate(replicasets, statusLoopOld, tie, m0),
			Write{Managers: []string{"kubectl"}, Paths: []string{"spec.replicas"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ev.IsChange() {
				t.Fatal("not a write")
			}
			got, _ := WriteOf(tt.ev, hb)
			slices.Sort(got.Paths)
			got.changes = nil
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(Write{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if w, ms := WriteOf(&watch.Event{Type: watch.Added, Obj: watch.ObjectInfo{Object: statusLoopNew}}, hb); len(w.Managers)+len(w.Paths)+len(ms) > 0 {
		t.Error("an Added event made a write")
	}
}

// Nobody can be named when two entries hold the newest time and none moved.
func TestWriteOfNobody(t *testing.T) {
	old := metaObject("shop", "w", "1", 1, entry("a", "Update", "", m0, replicas), entry("b", "Update", "status", m0, rsStatus))
	cur := metaObject("shop", "w", "2", 1, entry("a", "Update", "", m0, replicas), entry("b", "Update", "status", m0, rsStatus))
	w, _ := WriteOf(metaUpdate(replicasets, old, cur, m0), Heartbeats())
	if len(w.Managers) != 0 || w.Inferred || w.Heartbeat {
		t.Errorf("got %+v, want nobody named, not a heartbeat", w)
	}
}

func TestFieldPathsPairLists(t *testing.T) {
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

// With MetadataOnly, the step reads top's updates from managedFields: the writer gaining the
// field it takes, the fields it moved as Changes, a Lease renewal Ignored (a heartbeat, which no
// value filter would see: metadata-only objects hold no values), and the fight diagnosed once.
func TestMarkMetadataOnly(t *testing.T) {
	s := New(Config{MetadataOnly: true, Heartbeats: Heartbeats(), HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second})
	var loops []watch.HotLoopInfo
	for i, ev := range fight(20, m0) {
		keep, started := s.Mark(ev)
		if !keep {
			t.Fatal("an update left out")
		}
		if started != nil {
			loops = append(loops, started.HotLoopInfo())
		}
		if i > 0 {
			continue
		}
		if d := cmp.Diff([]string{"widget-operator"}, names(ev.Obj.Attribution.Managers)); d != "" || ev.Obj.Ignored {
			t.Errorf("first write: writers (-want +got):\n%s ignored %v", d, ev.Obj.Ignored)
		}
		if d := cmp.Diff([]string{"spec.replicas"}, paths(ev.Obj.Changes)); d != "" || ev.Obj.Changes[0].HasNew {
			t.Errorf("first write: changes (-want +got):\n%s", d)
		}
	}
	if len(loops) != 1 || loops[0].Loop != diff.LoopFight {
		t.Errorf("loops found: %+v, want the fight once", loops)
	}
	renewal := renewals("kube-scheduler", 1, m0)[0]
	s.Mark(renewal)
	if !renewal.Obj.Ignored || len(renewal.Obj.Changes) != 3 {
		t.Errorf("a Lease renewal: ignored %v, changes %v; want a heartbeat with its entry's 3 fields", renewal.Obj.Ignored, renewal.Obj.Changes)
	}
	// Without MetadataOnly, the same renewal is read by its values (none here): no heartbeat.
	plain := renewals("kube-scheduler", 1, m0)[0]
	New(Config{HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second}).Mark(plain)
	if plain.Obj.Ignored {
		t.Error("a metadata-only renewal marked a heartbeat without MetadataOnly")
	}
}

func paths(cs []diff.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func names(ms []diff.Manager) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Manager)
	}
	return out
}
