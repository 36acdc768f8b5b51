package ctrllog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// unknownUpdate is an update of res ns/name that managedFields attribute to nobody, heard at at.
func unknownUpdate(res discovery.Resource, ns, name, rv string, at time.Time) watch.Event {
	ev := *objEvent(res, watch.Updated, ns, name, rv, at)
	ev.Obj.Object, ev.Obj.OldObject = &unstructured.Unstructured{}, &unstructured.Unstructured{}
	ev.Obj.OldResourceVersion = rv + "-old"
	ev.Obj.Attribution = &diff.Attribution{Rule: diff.RuleUnknown, Why: "the object has no managedFields (dropped, or not tracked for this resource)"}
	return ev
}

// reconcileAt is a reconcile of controller of a Widget demo/name from start to end (precise
// timestamps).
func reconcileAt(controller, id, name string, start, end time.Time) *Reconcile {
	return &Reconcile{Controller: controller, ReconcileID: id, Object: ObjectRef{Kind: "Widget", Namespace: "demo", Name: name},
		Start: start, End: end, Precise: true, Read: start, LastRead: end}
}

const testSkew = 100 * time.Millisecond

// An update written during a reconcile, which woke the controller's next reconcile (heard by
// the plugin a little after that one began, as a loaded machine does), is the first one's write;
// one that comes long after the last reconcile ended is nobody's, and stays unknown.
func TestExplainerNamesTheWriter(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	x.Ended(reconcileAt("widget", "r1", "shop", t0, t0.Add(20*time.Millisecond)), "widget")
	x.Ended(reconcileAt("widget", "r2", "shop", t0.Add(21*time.Millisecond), t0.Add(25*time.Millisecond)), "widget")
	written := unknownUpdate(widgets, "demo", "shop", "10", t0.Add(27*time.Millisecond)) // r1's write, r2's trigger
	late := unknownUpdate(widgets, "demo", "shop", "11", t0.Add(500*time.Millisecond))   // a later write: someone else
	for _, ev := range []watch.Event{written, late} {
		if !x.Hold(ev, ev.Time) {
			t.Fatalf("rv %s not held", ev.ResourceVersion)
		}
	}
	if out := x.Due(t0.Add(900*time.Millisecond), nil, false); len(out) != 0 {
		t.Fatalf("released before the hold was over: %v", out)
	}
	out := x.Due(t0.Add(2*time.Second), nil, false)
	if len(out) != 2 {
		t.Fatalf("released %d lines, want 2", len(out))
	}
	a := out[0].Obj.Attribution
	if a.Rule != diff.RuleReconcile || a.Reconcile == nil || a.Reconcile.Controller != "widget" || a.Reconcile.ReconcileID != "r1" ||
		len(a.Managers) != 1 || a.Managers[0].Manager != "widget" {
		t.Errorf("the update r1 wrote: %+v, want widget's reconcile r1", a)
	}
	if b := out[1].Obj.Attribution; b.Rule != diff.RuleUnknown || b.Reconcile != nil || len(b.Managers) != 0 {
		t.Errorf("the update 478ms after the last reconcile ended: %+v, want unknown (no reconcile was running)", b)
	}
}

// An outside write (kubectl) wakes an idle controller: the reconcile it triggered begins before
// the plugin hears of it, yet did not write it. Nobody is named.
func TestExplainerOutsideWriteWakingTheController(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	x.Ended(reconcileAt("widget", "old", "shop", t0, t0.Add(4*time.Millisecond)), "widget")
	x.Ended(reconcileAt("widget", "woken", "shop", t0.Add(time.Second), t0.Add(time.Second+4*time.Millisecond)), "widget")
	x.Hold(unknownUpdate(widgets, "demo", "shop", "20", t0.Add(time.Second+6*time.Millisecond)), t0)
	out := x.Due(t0.Add(time.Hour), nil, false)
	if a := out[0].Obj.Attribution; a.Rule != diff.RuleUnknown || a.Reconcile != nil {
		t.Errorf("an outside write named %+v: it triggered that reconcile, it was not its write", a.Reconcile)
	}
}

// A reconcile of another object, or of another kind with the same name, names nobody.
func TestExplainerOnlyTheObjectsReconciles(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	x.Ended(reconcileAt("widget", "r1", "other", t0, t0.Add(50*time.Millisecond)), "widget")
	x.Ended(reconcileAt("widget", "r2", "shop", t0, t0.Add(50*time.Millisecond)), "widget")
	for _, ev := range []watch.Event{unknownUpdate(widgets, "demo", "elsewhere", "1", t0.Add(10*time.Millisecond)),
		unknownUpdate(deployments, "demo", "shop", "2", t0.Add(10*time.Millisecond))} {
		x.Hold(ev, t0)
	}
	for _, ev := range x.Due(t0.Add(time.Hour), nil, false) {
		if ev.Obj.Attribution.Rule != diff.RuleUnknown {
			t.Errorf("%s %s attributed to %+v by another object's reconcile", ev.Resource.Kind, ev.Name, ev.Obj.Attribution.Reconcile)
		}
	}
}

// Two controllers' reconciles of the object running at once: the logs cannot tell which wrote
// it, and the line says so instead of naming one.
func TestExplainerTwoControllersNameNobody(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	x.Ended(reconcileAt("widget", "r1", "shop", t0, t0.Add(250*time.Millisecond)), "widget")
	x.Ended(reconcileAt("auditor", "a1", "shop", t0.Add(50*time.Millisecond), t0.Add(220*time.Millisecond)), "widget")
	x.Hold(unknownUpdate(widgets, "demo", "shop", "5", t0.Add(200*time.Millisecond)), t0)
	out := x.Due(t0.Add(time.Hour), nil, false)
	a := out[0].Obj.Attribution
	if a.Rule != diff.RuleUnknown || len(a.Managers) != 0 || !strings.Contains(a.Why, "auditor, widget") {
		t.Errorf("attribution %+v, want unknown naming both controllers' reconciles", a)
	}
}

// A reconcile still running: one whose start was logged ("Reconciling") covers what lands
// until its end is read; one whose start was not logged spans its lines only.
func TestExplainerOpenReconciles(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	started := spanOf(reconcileAt("widget", "r1", "shop", t0, t0.Add(time.Millisecond)), "widget")
	started.open = true
	unstarted := spanOf(reconcileAt("widget", "r2", "cart", t0, t0.Add(time.Millisecond)), "widget")
	x.Hold(unknownUpdate(widgets, "demo", "shop", "1", t0.Add(700*time.Millisecond)), t0)
	x.Hold(unknownUpdate(widgets, "demo", "cart", "2", t0.Add(700*time.Millisecond)), t0)
	out := x.Due(t0.Add(time.Hour), []span{started, unstarted}, false)
	if a := out[0].Obj.Attribution; a.Rule != diff.RuleReconcile || a.Reconcile.ReconcileID != "r1" {
		t.Errorf("shop, during a reconcile whose end is not read yet: %+v, want r1", a)
	}
	if a := out[1].Obj.Attribution; a.Rule != diff.RuleUnknown {
		t.Errorf("cart, 700ms after the last line of a reconcile that logged no start: %+v, want unknown", a)
	}
}

// Only updates managedFields attribute to nobody are held; a held object's later lines wait
// behind it (one object's lines keep their order), other objects' lines pass; a released line
// keeps its object's reconciles waiting until it is observed.
func TestExplainerHoldsInOrder(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	named := unknownUpdate(widgets, "demo", "named", "1", t0)
	named.Obj.Attribution = &diff.Attribution{Rule: diff.RuleEntry, Managers: []diff.Manager{{Manager: "kubectl-edit", Operation: "Update"}}}
	if x.Hold(named, t0) {
		t.Fatal("an update managedFields attribute was held")
	}
	first := unknownUpdate(widgets, "demo", "shop", "2", t0)
	after := *objEvent(widgets, watch.Deleted, "demo", "shop", "3", t0.Add(10*time.Millisecond))
	if !x.Hold(first, t0) || !x.Hold(after, t0.Add(10*time.Millisecond)) {
		t.Fatal("the unknown update, or the later line of its object, was not held")
	}
	if !x.Holds("demo", "shop", t0, t0) || x.Holds("demo", "named", t0, t0) {
		t.Fatal("Holds does not say which object waits")
	}
	if x.Holds("demo", "shop", t0.Add(-time.Millisecond), t0) {
		t.Fatal("a reconcile that started before the held lines came waits for them (they cannot be its triggers)")
	}
	out := x.Due(t0.Add(2*time.Second), nil, false)
	if len(out) != 2 || out[0].ResourceVersion != "2" || out[1].ResourceVersion != "3" {
		t.Fatalf("released %v, want rv 2 then 3", out)
	}
	if !x.Holds("demo", "shop", t0, t0.Add(2*time.Second)) {
		t.Error("a released line not yet observed does not keep its object's reconciles waiting")
	}
	x.Observed(&out[0])
	x.Observed(&out[1])
	if x.Holds("demo", "shop", t0.Add(time.Hour), t0.Add(2*time.Second)) {
		t.Error("still waiting after both lines were observed")
	}
}

// A hot loop ends a reconcile every few milliseconds: hundreds end within the hold, and they are
// still known when its hold is over. The controller is named; which of its reconciles is not
// (a dozen ran within the skew of the update, and the watch's delay varies by more than one).
func TestExplainerKeepsAHotLoopsReconciles(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	up := unknownUpdate(widgets, "demo", "shop", "7", t0.Add(7*time.Millisecond)) // r0's write, r1's trigger
	x.Hold(up, up.Time)
	for i := range 2000 {
		start := t0.Add(time.Duration(i) * 5 * time.Millisecond)
		x.Ended(reconcileAt("widget", fmt.Sprintf("r%d", i), "shop", start, start.Add(4*time.Millisecond)), "widget")
	}
	out := x.Due(t0.Add(2*time.Second), nil, false)
	if a := out[0].Obj.Attribution; a.Rule != diff.RuleReconcile || a.Reconcile.Controller != "widget" || a.Reconcile.ReconcileID != "" {
		t.Errorf("attribution %+v %+v, want widget, no reconcile id, 1999 reconciles later", a, a.Reconcile)
	}
}

// An update a reconcile wrote itself (its log named it) is no trigger of that reconcile: it is
// the next one's (a self loop's reconciles each triggered by the previous one's write).
func TestJoinOwnWriteTriggersTheNext(t *testing.T) {
	j := NewJoin(JoinConfig{Resources: []discovery.Resource{widgets}, Skew: testSkew})
	own := objEvent(widgets, watch.Updated, "demo", "shop", "5", t0.Add(4*time.Millisecond))
	own.Obj.Attribution = &diff.Attribution{Rule: diff.RuleReconcile, Managers: []diff.Manager{{Manager: "widget", Operation: "Reconcile"}},
		Reconcile: &diff.ReconcileRef{Controller: "widget", ReconcileID: "a"}}
	j.Observe(objEvent(widgets, watch.Updated, "demo", "shop", "4", t0.Add(-time.Millisecond)))
	j.Observe(own)
	j.Add(rec("a", "demo", "shop", t0, ResultOK))
	j.Add(rec("b", "demo", "shop", t0.Add(6*time.Millisecond), ResultOK))
	evs := j.Flush()
	if got := rvs(evs[0]); len(got) != 1 || got[0] != "4" {
		t.Errorf("reconcile a's triggers %v, want rv 4 only (5 is its own write)", got)
	}
	if got := rvs(evs[1]); len(got) != 1 || got[0] != "5" {
		t.Errorf("reconcile b's triggers %v, want rv 5 (a's write)", got)
	}
}

// deletedChild is the Deleted line of a Deployment demo/name owned by the Widget demo/owner.
func deletedChild(name, owner, rv string, at time.Time) watch.Event {
	deployments := discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	ev := *objEvent(deployments, watch.Deleted, "demo", name, rv, at)
	ev.Obj.Object = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "demo", "name": name, "resourceVersion": rv, "ownerReferences": []any{
			map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "name": owner, "uid": "u1", "controller": true}}}}}
	return ev
}

// A Deleted line of an object a reconcile said it deleted (a line speaking of a delete, naming
// it) names that reconcile, of the object's owner. A delete no reconcile spoke of names nobody,
// however well a reconcile's timing fits (kubectl's delete wakes the owner's controller just
// the same); and a relist's tombstone (when it was deleted is not known) is not held.
func TestExplainerNamesTheDeleter(t *testing.T) {
	x := NewExplainer(testSkew, time.Second)
	// r1 deletes the Deployment shop and says so; hearing of it (Owns) the controller runs r2,
	// which begins before the plugin hears of the delete, as on a loaded machine. The same
	// timing around calm's delete, of which no line speaks.
	r1 := reconcileAt("widget", "r1", "shop", t0, t0.Add(20*time.Millisecond))
	r1.Deleted = []string{"deployment/shop"}
	x.Ended(r1, "widget")
	// Another reconcile said it deleted a Service named calm, not the Deployment calm.
	other := reconcileAt("widget", "c0", "calm", t0, t0.Add(20*time.Millisecond))
	other.Deleted = []string{"service/calm", "service/demo/calm"}
	x.Ended(other, "widget")
	x.Ended(reconcileAt("widget", "r2", "shop", t0.Add(21*time.Millisecond), t0.Add(25*time.Millisecond)), "widget")
	x.Ended(reconcileAt("widget", "c1", "calm", t0, t0.Add(20*time.Millisecond)), "widget")
	x.Ended(reconcileAt("widget", "c2", "calm", t0.Add(21*time.Millisecond), t0.Add(25*time.Millisecond)), "widget")
	deleted := deletedChild("shop", "shop", "30", t0.Add(27*time.Millisecond))
	outside := deletedChild("calm", "calm", "31", t0.Add(27*time.Millisecond))
	tomb := deletedChild("shop2", "shop", "32", t0.Add(27*time.Millisecond))
	tomb.Obj.Tombstone = true
	if !x.Hold(deleted, t0) || !x.Hold(outside, t0) {
		t.Fatal("a Deleted line was not held for the logs")
	}
	if x.Hold(tomb, t0) {
		t.Error("a tombstone was held: when it was deleted is not known")
	}
	out := x.Due(t0.Add(time.Hour), nil, false)
	if len(out) != 2 {
		t.Fatalf("released %d lines, want 2", len(out))
	}
	a := out[0].Obj.Attribution
	want := diff.ReconcileRef{Controller: "widget", ReconcileID: "r1", Kind: "widget", Namespace: "demo", Name: "shop"}
	if a == nil || a.Rule != diff.RuleDelete || a.Reconcile == nil || *a.Reconcile != want || len(a.Managers) != 1 || a.Managers[0].Manager != "widget" {
		t.Errorf("the deleted child: %+v, want deleted by %+v", a, want)
	}
	if out[1].Obj.Attribution != nil {
		t.Errorf("a delete no reconcile spoke of was named: %+v (%+v)", out[1].Obj.Attribution, out[1].Obj.Attribution.Reconcile)
	}
}

// A reconcile keeps the names its lines that speak of a delete give (a string value, an object
// value's name, each under the kind its key names), not those of its other lines, of a line that
// says it did not delete, its own bookkeeping keys, nor its own object (klog's "ns/name" too). The lines are shaped
// as controller-runtime's zap JSON logs them (written here, not captured: pure parsing).
func TestReconcileKeepsWhatItSaidItDeleted(t *testing.T) {
	r := NewReconstructor("t")
	at := "2026-11-25T03:00:00.%03dZ"
	line := func(ms int, msg, extra string) []byte {
		return []byte(fmt.Sprintf(`{"level":"info","ts":%q,"msg":%q,"controller":"widget","controllerGroup":"example.com","controllerKind":"Widget","Widget":{"name":"shop","namespace":"demo"},"namespace":"demo","name":"shop","reconcileID":"r1"%s}`,
			fmt.Sprintf(at, ms), msg, extra))
	}
	var out []Reconcile
	for i, l := range [][]byte{
		line(0, "Reconciling", ""),
		line(1, "deployment updated", `,"deployment":"kept"`),
		line(2, "deployment deleted", `,"deployment":"gone","ConfigMap":{"name":"cm-gone","namespace":"demo"},"widget":"demo/shop"`),
		line(2, "deployment deleted", `,"deployment":"shop"`), // its Widget's name: another object
		line(3, "failed to delete service", `,"service":"kept"`),
		line(4, "not deleting pod (do-not-disrupt)", `,"pod":"kept"`),
		line(4, "pod deleted", `,"pod":"`+strings.Repeat("k", 400)+`"`),
		line(5, "Reconcile successful", ""),
	} {
		out = append(out, r.Feed(l, t0.Add(time.Duration(i)*time.Millisecond))...)
	}
	out = append(out, r.Flush()...)
	if len(out) != 1 {
		t.Fatalf("%d reconciles, want 1", len(out))
	}
	got := strings.Join(out[0].Deleted, ",")
	for _, want := range []string{"deployment/gone", "configmap/cm-gone", "configmap/demo/cm-gone", "deployment/shop"} {
		if !strings.Contains(","+got+",", ","+want+",") {
			t.Errorf("deleted %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "kept") || strings.Contains(got, "r1") || strings.Contains(got, "widget") || len(out[0].Deleted) != 4 {
		t.Errorf("deleted %q holds names of a line that deleted nothing (or said it did not), bookkeeping, or the reconciled object", got)
	}
}
