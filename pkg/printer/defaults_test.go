package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

func printAll(t *testing.T, opts Options, evs ...watch.Event) string {
	t.Helper()
	var b bytes.Buffer
	p := New(&b, opts)
	for i := range evs {
		if !p.Shows(&evs[i]) {
			continue
		}
		if err := p.Print(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Lines of several resources align: the resource column is as wide as the longest watched one.
func TestResourceColumnAligned(t *testing.T) {
	deploy := discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments"}
	pods := discovery.Resource{Version: "v1", Resource: "pods"}
	t0 := time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC)
	out := printAll(t, Options{Timestamps: "none", NoHeaders: true},
		watch.Event{Type: watch.Informer, Time: t0, Lifecycle: watch.LifecycleInfo{Info: &watch.InformerInfo{Resources: []discovery.Resource{deploy, pods}}}},
		watch.Event{Type: watch.Added, Time: t0, Resource: deploy, Namespace: "d", Name: "web", ResourceVersion: "1", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}},
		watch.Event{Type: watch.Added, Time: t0, Resource: pods, Namespace: "d", Name: "web-1", ResourceVersion: "2", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}},
	)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines:\n%s", out)
	}
	if a, b := strings.Index(lines[0], "d/web"), strings.Index(lines[1], "d/web-1"); a != b || a < 0 {
		t.Errorf("object column at %d and %d, want aligned:\n%s", a, b, out)
	}
}

// Events say what they are about: type, reason, message, the object, the count.
func TestEventLines(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC)
	core := discovery.Resource{Version: "v1", Resource: "events"}
	newer := discovery.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
	out := printAll(t, Options{Timestamps: "none", NoHeaders: true},
		watch.Event{
			Type:            watch.Added,
			Time:            t0,
			Resource:        core,
			Namespace:       "d",
			Name:            "e1",
			ResourceVersion: "1",
			Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: &unstructured.Unstructured{Object: map[string]any{"type": "Normal", "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-5fc9 to 3",
				"involvedObject": map[string]any{"kind": "Deployment", "name": "web"}, "count": int64(1)}}},
		},
		watch.Event{
			Type:            watch.Added,
			Time:            t0,
			Resource:        newer,
			Namespace:       "d",
			Name:            "e2",
			ResourceVersion: "2",
			Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Object: &unstructured.Unstructured{Object: map[string]any{"type": "Warning", "reason": "BackOff", "note": "Back-off restarting \x1b[31mfailed",
				"regarding": map[string]any{"kind": "Pod", "name": "web-1"}, "series": map[string]any{"count": float64(7)}}}},
		},
	)
	for _, want := range []string{
		"d/e1  rv=1  Normal ScalingReplicaSet: Scaled up replica set web-5fc9 to 3 (Deployment/web)",
		`d/e2  rv=2  Warning BackOff: Back-off restarting ^[[31mfailed (Pod/web-1, x7)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Without simulated workers, human lines carry no queue=N and -o json no Reconciled lines.
func TestSimulatedQueueOnlyWhenAsked(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC)
	res := discovery.Resource{Version: "v1", Resource: "configmaps"}
	evs := []watch.Event{
		{Type: watch.Added, Time: t0, Resource: res, Namespace: "d", Name: "c", ResourceVersion: "1", Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, Queue: &watch.QueueFigures{Depth: 1, Adds: 1}}},
		{Type: watch.Reconciled, Time: t0, Resource: res, Key: "d/c", Obj: watch.ObjectInfo{Queue: &watch.QueueFigures{}}},
	}
	if out := printAll(t, Options{Timestamps: "none"}, evs...); strings.Contains(out, "queue=") || strings.Contains(out, "Reconciled") {
		t.Errorf("human output without workers shows the simulated queue:\n%s", out)
	}
	if out := printAll(t, Options{Timestamps: "none", ShowReconciles: true, QueueColumn: true}, evs...); !strings.Contains(out, "queue=1") || !strings.Contains(out, "Reconciled") {
		t.Errorf("human output with workers lacks the simulated queue:\n%s", out)
	}
	if out := printAll(t, Options{Output: "json", OmitReconciles: true}, evs...); strings.Contains(out, `"Reconciled"`) || !strings.Contains(out, `"queue":{"depth":1`) {
		t.Errorf("-o json without workers:\n%s", out)
	}
	if out := printAll(t, Options{Output: "json"}, evs...); !strings.Contains(out, `"Reconciled"`) {
		t.Errorf("-o json with workers lacks Reconciled lines:\n%s", out)
	}
}
