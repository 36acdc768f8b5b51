package printer

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	replicaSets = discovery.Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	eventsRes   = discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event", Namespaced: true}
)

// causalityEvents are the lines of `watch deploy web --owned --events`: owned objects with their
// chains, a Normal and a Warning KubeEvent.
func causalityEvents() []watch.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	web := watch.Owner{Kind: "Deployment", Name: "web", UID: "d-1"}
	rs := watch.Owner{Kind: "ReplicaSet", Name: "web-5fc9", UID: "r-1"}
	object := func(kind, name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind}}
		u.SetNamespace("demo")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	}
	return []watch.Event{
		{
			Type: watch.Informer,
			Time: at(0),
			Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{ClientGoVersion: "v0.37.1", Queue: "RealFIFO", AtomicEvents: true, WatchList: true, Namespace: "demo",
				FieldSelector: "metadata.name=web", Resources: []discovery.Resource{deploy}, OwnedResources: []discovery.Resource{replicaSets, pods}, Events: true}},
		},
		{Type: watch.Added, Time: at(1), Resource: deploy, Namespace: "demo", Name: "web", ResourceVersion: "270", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: obj("demo", "web", "270")}},
		{
			Type:            watch.Added,
			Time:            at(1),
			Resource:        replicaSets,
			Namespace:       "demo",
			Name:            "web-5fc9",
			ResourceVersion: "271",
			Obj: watch.ObjectInfo{
				Delta:  watch.DeltaAdded,
				Object: object("ReplicaSet", "web-5fc9", "271"),
				Owners: []watch.Owner{web},
			},
		},
		{
			Type:            watch.Added,
			Time:            at(1),
			Resource:        pods,
			Namespace:       "demo",
			Name:            "web-5fc9-x7k2p",
			ResourceVersion: "273",
			Obj: watch.ObjectInfo{
				Delta:  watch.DeltaAdded,
				Object: object("Pod", "web-5fc9-x7k2p", "273"),
				Owners: []watch.Owner{web, rs},
			},
		},
		{
			Type:            watch.KubeEvent,
			Time:            at(1),
			Resource:        eventsRes,
			Namespace:       "demo",
			Name:            "web.187a",
			ResourceVersion: "274",
			Obj:             watch.ObjectInfo{Delta: watch.DeltaAdded},
			Kube: &watch.KubeEventInfo{Reason: "ScalingReplicaSet", Note: "Scaled up replica set web-5fc9 from 0 to 2", EventType: "Normal",
				ReportingController: "deployment-controller", ReportingInstance: "kcm-1",
				Regarding: watch.Regarding{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", UID: "d-1"}, Count: 1},
		},
		{
			Type:            watch.KubeEvent,
			Time:            at(9),
			Resource:        eventsRes,
			Namespace:       "demo",
			Name:            "web-5fc9-x7k2p.187b",
			ResourceVersion: "290",
			Obj: watch.ObjectInfo{
				Delta:       watch.DeltaUpdated,
				InitialList: false,
				Owners:      []watch.Owner{web, rs},
			},
			Kube: &watch.KubeEventInfo{Reason: "BackOff", Note: "Back-off pulling image \"example.com/web:2\"", EventType: "Warning",
				ReportingController: "kubelet", Action: "Pulling",
				Regarding: watch.Regarding{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "web-5fc9-x7k2p", UID: "p-1", FieldPath: "spec.containers{web}"}, Count: 4},
		},
		{
			Type:            watch.KubeEvent,
			Time:            at(0),
			Resource:        eventsRes,
			Namespace:       "demo",
			Name:            "old.1",
			ResourceVersion: "100",
			Obj:             watch.ObjectInfo{Delta: watch.DeltaReplaced, InitialList: true},
			Kube: &watch.KubeEventInfo{Reason: "ScalingReplicaSet", Note: "Scaled down replica set web-1 from 1 to 0", EventType: "Normal", Count: 1,
				EventTime: at(-205).Add(-250 * time.Microsecond), Regarding: watch.Regarding{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", UID: "d-1"}},
		},
	}
}

func TestCausalityGolden(t *testing.T) {
	t.Setenv("TZ", "UTC")
	time.Local = time.UTC
	golden(t, "human-owned.txt", render(t, Options{}, causalityEvents()))
	golden(t, "human-owned-color.txt", render(t, Options{Color: true}, causalityEvents()))
	golden(t, "events-owned.ndjson", render(t, Options{Output: "json", PluginVersion: "v1.0.0"}, causalityEvents()))
}

// A Warning stands out (red) only with color; a Normal Event does not.
func TestKubeEventWarningColor(t *testing.T) {
	evs := causalityEvents()
	for _, tt := range []struct {
		ev    watch.Event
		color bool
		red   bool
	}{{evs[4], true, false}, {evs[5], true, true}, {evs[5], false, false}} {
		out := render(t, Options{Color: tt.color, Timestamps: "none"}, []watch.Event{tt.ev})
		if got := strings.Contains(out, colorRed); got != tt.red {
			t.Errorf("%s %s (color %v): red %v, want %v: %q", tt.ev.Kube.EventType, tt.ev.Kube.Reason, tt.color, got, tt.red, out)
		}
		if !tt.color && strings.Contains(out, "\x1b") {
			t.Errorf("escape sequence without color: %q", out)
		}
	}
}
