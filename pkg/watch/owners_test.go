package watch

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var (
	deployRes = discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	rsRes     = discovery.Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	podRes    = discovery.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	cmRes     = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	poolRes   = discovery.Resource{Group: "example.com", Version: "v1", Resource: "pools", Kind: "Pool"}
	claimRes  = discovery.Resource{Group: "example.com", Version: "v1", Resource: "claims", Kind: "Claim"}
)

// inNamespace is ev of an object in ns ("": a cluster-scoped one).
func inNamespace(ns string, ev Event) Event {
	ev.Namespace = ns
	ev.Obj.Object.SetNamespace(ns)
	return ev
}

type ref struct{ kind, apiVersion, uid string }

// objEvent is an object event of res for an object with uid, owned by owners (the first one
// the controller).
func objEvent(t Type, res discovery.Resource, name, uid string, owners ...ref) Event {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetName(name)
	u.SetNamespace("demo")
	u.SetUID(types.UID(uid))
	var refs []metav1.OwnerReference
	for i, o := range owners {
		controller := i == 0
		refs = append(refs, metav1.OwnerReference{APIVersion: o.apiVersion, Kind: o.kind, Name: "x", UID: types.UID(o.uid), Controller: &controller})
	}
	u.SetOwnerReferences(refs)
	return Event{Type: t, Resource: res, Namespace: "demo", Name: name, Obj: ObjectInfo{Object: u, Delta: DeltaAdded}}
}

func kube(regardingKind, apiVersion, uid, reason string) Event {
	return Event{Type: KubeEvent, Name: "ev-" + reason, Kube: &KubeEventInfo{Reason: reason,
		Regarding: Regarding{Kind: regardingKind, APIVersion: apiVersion, UID: uid}}}
}

// summary names the lines an ownerTree let through, with their chains.
func summary(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		s := string(ev.Type) + " " + ev.Name
		for _, o := range ev.Obj.Owners {
			s += " <" + o.Kind + "/" + o.Name
		}
		out = append(out, s)
	}
	return out
}

func TestOwnerTree(t *testing.T) {
	kinds := []schema.GroupKind{{Group: "apps", Kind: "Deployment"}, {Group: "apps", Kind: "ReplicaSet"}, {Kind: "Pod"},
		{Kind: "ConfigMap"}, {Group: "example.com", Kind: "Pool"}, {Group: "example.com", Kind: "Claim"}}
	dep := ref{"Deployment", "apps/v1", "d1"}
	rs := ref{"ReplicaSet", "apps/v1", "r1"}
	pool := ref{"Pool", "example.com/v1", "pl1"}
	claim := ref{"Claim", "example.com/v1", "cl1"}
	type step struct {
		ev   Event
		root bool
		want []string
	}
	tests := []struct {
		name  string
		steps []step
		// held is how many objects still have lines held at the end.
		held int
	}{{
		name: "in order: each line with its chain",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, rsRes, "web-1", "r1", dep), want: []string{"Added web-1 <Deployment/web"}},
			{ev: objEvent(Added, podRes, "web-1-a", "p1", rs), want: []string{"Added web-1-a <Deployment/web <ReplicaSet/web-1"}},
			{ev: kube("Pod", "v1", "p1", "Scheduled"), want: []string{"KubeEvent ev-Scheduled <Deployment/web <ReplicaSet/web-1"}},
			{ev: kube("Deployment", "apps/v1", "d1", "ScalingReplicaSet"), want: []string{"KubeEvent ev-ScalingReplicaSet"}},
		},
	}, {
		name: "roots owned by roots (watch deploy,rs,pods --owned): each line with its chain",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, rsRes, "web-1", "r1", dep), root: true, want: []string{"Added web-1 <Deployment/web"}},
			{ev: objEvent(Added, podRes, "web-1-a", "p1", rs), root: true, want: []string{"Added web-1-a <Deployment/web <ReplicaSet/web-1"}},
			{ev: objEvent(Added, podRes, "lone", "p2"), root: true, want: []string{"Added lone"}},
		},
	}, {
		name: "a pod and its Event before their ReplicaSet: held, then released after it",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, podRes, "web-1-a", "p1", rs)},
			{ev: kube("Pod", "v1", "p1", "Scheduled")},
			{ev: objEvent(Updated, podRes, "web-1-a", "p1", rs)},
			{ev: objEvent(Added, rsRes, "web-1", "r1", dep), want: []string{
				"Added web-1 <Deployment/web",
				"Added web-1-a <Deployment/web <ReplicaSet/web-1",
				"KubeEvent ev-Scheduled <Deployment/web <ReplicaSet/web-1",
				"Updated web-1-a <Deployment/web <ReplicaSet/web-1"}},
		},
	}, {
		name: "a whole tree before its root",
		steps: []step{
			{ev: objEvent(Added, podRes, "web-1-a", "p1", rs)},
			{ev: objEvent(Added, rsRes, "web-1", "r1", dep)},
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{
				"Added web", "Added web-1 <Deployment/web", "Added web-1-a <Deployment/web <ReplicaSet/web-1"}},
		},
	}, {
		name: "unrelated: no owner, an owner of another kind, an Event about another kind",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, podRes, "loner", "p9")},
			{ev: objEvent(Added, podRes, "db-0", "p8", ref{"StatefulSet", "apps/v1", "s1"})},
			{ev: kube("Node", "v1", "n1", "NodeReady")},
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
		},
	}, {
		name: "children of a deleted owner still reach their root; the root's delete is shown",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, rsRes, "web-1", "r1", dep), want: []string{"Added web-1 <Deployment/web"}},
			{ev: objEvent(Deleted, rsRes, "web-1", "r1", dep), want: []string{"Deleted web-1 <Deployment/web"}},
			{ev: objEvent(Deleted, podRes, "web-1-a", "p1", rs), want: []string{"Deleted web-1-a <Deployment/web <ReplicaSet/web-1"}},
			{ev: objEvent(Deleted, deployRes, "web", "d1"), root: true, want: []string{"Deleted web"}},
		},
	}, {
		name: "the non-controller owner leads to the root when the controller does not",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, rsRes, "web-1", "r1", ref{"ReplicaSet", "apps/v1", "r0"}, dep), want: []string{"Added web-1 <Deployment/web"}},
		},
	}, {
		name: "across scopes: a cluster-scoped root, its cluster-scoped child, a namespaced grandchild, in any order",
		steps: []step{
			{ev: inNamespace("", objEvent(Added, poolRes, "p", "pl1")), root: true, want: []string{"Added p"}},
			{ev: objEvent(Added, cmRes, "cm", "cm1", claim)},
			{ev: inNamespace("", objEvent(Added, claimRes, "c", "cl1", pool)), want: []string{"Added c <Pool/p", "Added cm <Pool/p <Claim/c"}},
			{ev: inNamespace("other", objEvent(Added, cmRes, "cm2", "cm2", claim)), want: []string{"Added cm2 <Pool/p <Claim/c"}},
		},
	}, {
		name: "owners the garbage collector ignores: a namespaced owner of a cluster-scoped object or of another namespace's",
		steps: []step{
			{ev: objEvent(Added, deployRes, "web", "d1"), root: true, want: []string{"Added web"}},
			{ev: objEvent(Added, rsRes, "web-1", "r1", dep), want: []string{"Added web-1 <Deployment/web"}},
			{ev: inNamespace("", objEvent(Added, claimRes, "c", "cl1", dep))},
			{ev: inNamespace("other", objEvent(Added, podRes, "web-1-a", "p1", rs))},
			{ev: objEvent(Updated, rsRes, "web-1", "r1", dep), want: []string{"Updated web-1 <Deployment/web"}},
		},
	}, {
		name: "an ownerReferences cycle ends",
		steps: []step{
			{ev: objEvent(Added, rsRes, "a", "ra", ref{"ReplicaSet", "apps/v1", "rb"})},
			{ev: objEvent(Added, rsRes, "b", "rb", ref{"ReplicaSet", "apps/v1", "ra"})},
		},
		held: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := newOwnerTree(kinds)
			for i, s := range tt.steps {
				var got []Event
				if s.ev.Type == KubeEvent {
					got = tree.observeKube(s.ev)
				} else {
					got = tree.observe(s.ev, s.root)
				}
				if diff := cmp.Diff(s.want, summary(got)); diff != "" {
					t.Errorf("step %d (%s %s): lines (-want +got):\n%s", i, s.ev.Type, s.ev.Name, diff)
				}
			}
			if len(tree.held) != tt.held {
				t.Errorf("lines of %d objects held at the end, want %d: %v", len(tree.held), tt.held, tree.held)
			}
		})
	}
}

// Held lines are bounded: per object and in objects; what goes is counted.
func TestOwnerTreeHoldLimits(t *testing.T) {
	tree := newOwnerTree([]schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}, {Kind: "Pod"}})
	rs := ref{"ReplicaSet", "apps/v1", "r1"}
	for range maxHeldPerObject + 5 {
		tree.observe(objEvent(Updated, podRes, "p", "p1", rs), false)
	}
	if got := len(tree.held["p1"]); got != maxHeldPerObject || tree.dropped != 5 {
		t.Errorf("held %d lines, dropped %d; want %d and 5", got, tree.dropped, maxHeldPerObject)
	}
	for i := range maxHeldObjects {
		tree.observe(objEvent(Added, podRes, "q", "q"+string(rune('a'+i%26))+string(rune(i)), rs), false)
	}
	if len(tree.held) > maxHeldObjects {
		t.Errorf("%d objects held, want at most %d", len(tree.held), maxHeldObjects)
	}
	if _, ok := tree.held["p1"]; ok {
		t.Error("the longest held object was not the one given up")
	}
}

func TestKubeEventOf(t *testing.T) {
	evRes := discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	event := func(extra map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event",
			"metadata": map[string]any{"name": "web.1", "namespace": "demo", "resourceVersion": "7"},
			"reason":   "ScalingReplicaSet", "note": "Scaled up replica set web-1 from 0 to 2", "type": "Normal",
			"reportingController": "deployment-controller", "reportingInstance": "kcm", "action": "ScaleUp",
			"regarding": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "demo", "name": "web", "uid": "d1"}}
		for k, v := range extra {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	base := KubeEventInfo{Reason: "ScalingReplicaSet", Note: "Scaled up replica set web-1 from 0 to 2", EventType: "Normal",
		ReportingController: "deployment-controller", ReportingInstance: "kcm", Action: "ScaleUp",
		Regarding: Regarding{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", UID: "d1"}, Count: 1}
	withCount := func(n int64) *KubeEventInfo { k := base; k.Count = n; return &k }
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t }
	withTime := func(s string) *KubeEventInfo { k := base; k.EventTime = at(s); return &k }
	times := func(series bool, eventTime, last, first string) map[string]any {
		m := map[string]any{"eventTime": eventTime, "deprecatedLastTimestamp": last, "deprecatedFirstTimestamp": first}
		if series {
			m["series"] = map[string]any{"count": int64(1), "lastObservedTime": "2026-11-23T10:00:04.000004Z"}
		}
		return m
	}
	tests := []struct {
		name string
		ev   Event
		want *KubeEventInfo // nil: not shown
	}{
		{"added", Event{Type: Added, Obj: ObjectInfo{Delta: DeltaAdded, Object: event(nil)}, ResourceVersion: "7"}, &base},
		{"a series", Event{Type: Updated, Obj: ObjectInfo{Delta: DeltaUpdated, Object: event(map[string]any{"series": map[string]any{"count": int64(5)}}), OldResourceVersion: "7"}, ResourceVersion: "8"}, withCount(5)},
		{"a legacy count", Event{Type: Added, Obj: ObjectInfo{Delta: DeltaAdded, Object: event(map[string]any{"deprecatedCount": int64(3)})}}, withCount(3)},
		{"series.lastObservedTime first", Event{Type: Added, Obj: ObjectInfo{Delta: DeltaAdded, Object: event(times(true, "2026-11-23T10:00:01.000001Z", "2026-11-23T10:00:02Z", "2026-11-23T10:00:03Z"))}},
			withTime("2026-11-23T10:00:04.000004Z")},
		{"then eventTime", Event{Type: Added, Obj: ObjectInfo{Delta: DeltaAdded, Object: event(times(false, "2026-11-23T10:00:01.000001Z", "2026-11-23T10:00:02Z", "2026-11-23T10:00:03Z"))}},
			withTime("2026-11-23T10:00:01.000001Z")},
		{"then the legacy last", Event{Type: Added, Obj: ObjectInfo{Delta: DeltaAdded, Object: event(times(false, "", "2026-11-23T10:00:02Z", "2026-11-23T10:00:03Z"))}},
			withTime("2026-11-23T10:00:02Z")},
		{"then the legacy first", Event{Type: Added, Obj: ObjectInfo{Delta: DeltaAdded, Object: event(times(false, "", "", "2026-11-23T10:00:03Z"))}},
			withTime("2026-11-23T10:00:03Z")},
		{"deleted (time to live)", Event{Type: Deleted, Obj: ObjectInfo{Delta: DeltaDeleted, Object: event(nil)}}, nil},
		{"resync", Event{Type: Updated, Obj: ObjectInfo{Delta: DeltaSync, Object: event(nil), OldResourceVersion: "7"}, ResourceVersion: "7"}, nil},
		{"relist, unchanged", Event{Type: Updated, Obj: ObjectInfo{Delta: DeltaReplaced, Object: event(nil), OldResourceVersion: "7"}, ResourceVersion: "7"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ev.Resource, tt.ev.Name = evRes, "web.1"
			got, ok := kubeEventOf(tt.ev)
			if (tt.want != nil) != ok {
				t.Fatalf("shown %v, want %v", ok, tt.want != nil)
			}
			if !ok {
				return
			}
			if got.Type != KubeEvent || got.Name != "web.1" || got.Obj.Delta != tt.ev.Obj.Delta {
				t.Errorf("line %s %s %s", got.Type, got.Name, got.Obj.Delta)
			}
			if diff := cmp.Diff(tt.want, got.Kube); diff != "" {
				t.Errorf("KubeEventInfo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsFieldSelector(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"one resource", Config{Resources: []discovery.Resource{deployRes}}, "regarding.kind=Deployment"},
		{"one object", Config{Resources: []discovery.Resource{deployRes}, Name: "web"}, "regarding.kind=Deployment,regarding.name=web"},
		{"several resources: no OR in field selectors", Config{Resources: []discovery.Resource{deployRes, rsRes}}, ""},
		{"--owned: Events about owned kinds too", Config{Resources: []discovery.Resource{deployRes}, Name: "web", Owned: &discovery.Owned{}}, ""},
	}
	for _, tt := range tests {
		if got := eventsFieldSelector(tt.cfg); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Events already there when the watch starts come in the list's order (by name): the causality
// stage hands them on in the order they happened, once the Events' and the watched resources'
// initial lists are in (before the last Synced line).
func TestInitialKubeEventsInTimeOrder(t *testing.T) {
	evRes := discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	c := newCausality(t.Context(), Config{Resources: []discovery.Resource{deployRes}, Events: &evRes}, nil)
	c.tree.observe(objEvent(Added, deployRes, "web", "d1"), true)
	listed := func(name, when string, rv ...string) Event {
		o := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event",
			"metadata": map[string]any{"name": name, "namespace": "demo", "resourceVersion": "7"},
			"reason":   "R", "type": "Normal", "eventTime": when,
			"regarding": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "demo", "name": "web", "uid": "d1"}}
		ev := Event{Type: Added, Resource: evRes, Name: name, Obj: ObjectInfo{Delta: DeltaReplaced, InitialList: true, Object: &unstructured.Unstructured{Object: o}}}
		if len(rv) > 0 {
			ev.ResourceVersion = rv[0]
		}
		return ev
	}
	var got []string
	for _, ev := range []Event{
		listed("web.a", "2026-11-23T10:00:03.000000Z"),
		listed("web.b", "2026-11-23T10:00:01.000000Z"),
		listed("web.c", "2026-11-23T10:00:02.000000Z"),
		// Within one second, the order they were written in.
		listed("web.f", "2026-11-23T10:00:05.000000Z", "1000"),
		listed("web.e", "2026-11-23T10:00:05.000000Z", "999"),
		{Type: Synced, Resource: evRes},
		{Type: Synced, Resource: deployRes}, // the Events wait for the objects they regard too
	} {
		for _, out := range c.handle(ev) {
			got = append(got, string(out.Type)+" "+out.Name)
		}
	}
	want := []string{"Synced ", "KubeEvent web.b", "KubeEvent web.c", "KubeEvent web.a", "KubeEvent web.e", "KubeEvent web.f", "Synced "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	// A live Event is not held.
	live := listed("web.d", "2026-11-23T10:00:09.000000Z")
	live.Obj.InitialList, live.Obj.Delta = false, DeltaAdded
	if out := c.handle(live); len(out) != 1 || out[0].Name != "web.d" {
		t.Errorf("a live Event: %v", summary(out))
	}
}

// The owned-resource planner never starts a second informer for a watched resource: with
// deploy,rs,pods watched, a Deployment's ReplicaSets come from the watched rs informer (issue
// #33: every ReplicaSet and Pod line was printed twice).
func TestStartOwnedSkipsWatched(t *testing.T) {
	owned := &discovery.Owned{Children: map[schema.GroupKind][]discovery.Resource{
		{Group: "apps", Kind: "Deployment"}: {rsRes},
		{Group: "apps", Kind: "ReplicaSet"}: {podRes},
	}}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		deployRes.GVR(): "DeploymentList", rsRes.GVR(): "ReplicaSetList", podRes.GVR(): "PodList"})
	cfg := Config{Client: client, Resources: []discovery.Resource{deployRes, rsRes}, Owned: owned}
	ctx, cancel := context.WithCancel(t.Context())
	c := newCausality(ctx, cfg, make(chan Event, 100))
	defer func() { cancel(); c.stop() }()
	for _, ev := range []Event{objEvent(Added, deployRes, "web", "d1"), objEvent(Added, rsRes, "web-1", "r1", ref{"Deployment", "apps/v1", "d1"})} {
		c.startOwned(&ev)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if want := map[schema.GroupVersionResource]bool{podRes.GVR(): true}; !maps.Equal(c.started, want) {
		t.Errorf("informers started for %v, want only pods (deployments and replicasets are watched)", c.started)
	}
}

// The simulated queue enqueues what a controller would (issue #33): an owned object's event
// enqueues the key of the watched root that owns it, with a trigger naming the owned object;
// an owned object outside every watched tree (--owned-resources lists the whole namespace)
// enqueues nothing, and neither does a KubeEvent.
func TestOwnedEventsEnqueueTheirOwner(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		deployRes.GVR(): "DeploymentList", rsRes.GVR(): "ReplicaSetList"})
	evRes := discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	owned := &discovery.Owned{Children: map[schema.GroupKind][]discovery.Resource{{Group: "apps", Kind: "Deployment"}: {rsRes}},
		Resources: []discovery.Resource{rsRes}}
	cfg := Config{Client: client, Resources: []discovery.Resource{deployRes}, Owned: owned, Events: &evRes}
	ctx, cancel := context.WithCancel(t.Context())
	c := newCausality(ctx, cfg, make(chan Event, 100))
	defer func() { cancel(); c.stop() }()
	root, err := newResourceInformer(cfg, deployRes, c.in)
	if err != nil {
		t.Fatal(err)
	}
	c.rootInformers["Deployment"] = root
	dep := ref{"Deployment", "apps/v1", "d1"}
	c.handle(objEvent(Added, deployRes, "web", "d1"))
	rs := objEvent(Updated, rsRes, "web-1", "r1", dep)
	rs.Obj.Delta, rs.ResourceVersion = DeltaUpdated, "7"
	out := c.handle(rs)
	c.handle(objEvent(Added, rsRes, "not-ours", "r2", ref{"Deployment", "apps/v1", "d9"}))
	c.handle(Event{Type: KubeEvent, Resource: evRes, Kube: &KubeEventInfo{Regarding: Regarding{Kind: "ReplicaSet", APIVersion: "apps/v1", UID: "r1"}}})

	if len(out) != 1 || out[0].Obj.Queue == nil {
		t.Fatalf("the owned ReplicaSet's line: %+v, want it with its owner's queue figures", out)
	}
	root.queue.mu.Lock()
	defer root.queue.mu.Unlock()
	var keys []string
	for k := range root.queue.waiting {
		keys = append(keys, k)
	}
	p := root.queue.waiting["demo/web"]
	if len(keys) != 1 || p == nil || p.count != 1 {
		t.Fatalf("queued keys %v, want only demo/web, once (the owned ReplicaSet's event)", keys)
	}
	want := Trigger{Type: Updated, Delta: DeltaUpdated, ResourceVersion: "7", Resource: "replicasets.apps", Key: "demo/web-1"}
	if diff := cmp.Diff(want, p.triggers[0], cmpopts.IgnoreFields(Trigger{}, "Time")); diff != "" {
		t.Errorf("trigger (-want +got):\n%s", diff)
	}
}

// Neither an Event nor an object of an owned resource enqueues its own key (issue #33: --events
// put every Event in the simulated queue, "93 reconciles" for one Foo; --owned-resources
// deployments reconciled Deployments nothing watched owned).
func TestOwnedAndEventsInformersEnqueueNothing(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		deployRes.GVR(): "DeploymentList"})
	evRes := discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
	cfg := Config{Client: client, Resources: []discovery.Resource{deployRes}, Events: &evRes}
	out := make(chan Event, 10)
	events, err := eventsInformer(cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	owned, err := ownedInformer(cfg, deployRes, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, ri := range []*resourceInformer{events, owned} {
		ri.ctx = t.Context()
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace("demo")
		u.SetName("x")
		ri.emitObject(Added, DeltaAdded, u, nil, false, false)
		ev := <-out
		if ev.Obj.Queue != nil || ri.queue.q.Len() != 0 {
			t.Errorf("%s: an object's event was enqueued (%+v)", ri.res, ev.Obj.Queue)
		}
	}
}
