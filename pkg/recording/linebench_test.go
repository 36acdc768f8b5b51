package recording

import (
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// benchLines are one line of each family whose payload is its line (lines.go).
func benchLines() []watch.Event {
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	res := discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	tr := []watch.Trigger{{Type: watch.Updated, Delta: watch.DeltaUpdated, ResourceVersion: "12", Managers: []string{"kube-controller-manager"}, Attribution: "entry", Time: at}}
	return []watch.Event{
		{Type: watch.HotLoop, Time: at, Resource: res, Namespace: "demo", Name: "web", Key: "demo/web",
			HotLoop: &watch.HotLoopInfo{Reason: "updates", Loop: "self", Managers: []string{"a"}, Fields: []string{"status.x"}, Updates: 30, Window: 10 * time.Second}},
		{Type: watch.HotLoopEnded, Time: at, Resource: res, Namespace: "demo", Name: "web", Key: "demo/web",
			HotLoop: &watch.HotLoopInfo{Loop: "self", Managers: []string{"a"}, Updates: 40, Duration: 31 * time.Second}},
		{Type: watch.KubeEvent, Time: at, Resource: res, Namespace: "demo", Name: "web.1", ResourceVersion: "7",
			Obj: watch.ObjectInfo{Delta: watch.DeltaAdded}, Kube: &watch.KubeEventInfo{Reason: "ScalingReplicaSet", Note: "Scaled up", EventType: "Normal",
				ReportingController: "deployment-controller", Regarding: watch.Regarding{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", UID: "u"}, Count: 1, EventTime: at}},
		{Type: watch.Reconciled, Time: at, Resource: res, Key: "demo/web", Obj: watch.ObjectInfo{Queue: &watch.QueueFigures{Depth: 1, Adds: 4}},
			Queued: watch.QueuedInfo{Wait: 1500 * time.Microsecond, Work: 2 * time.Millisecond, TriggerCount: 1, Triggers: tr}},
		{Type: watch.ControllerReconcile, Time: at, Resource: res, Namespace: "demo", Name: "web", Key: "demo/web",
			Reconcile: &watch.ReconcileInfo{Controller: "deployment", ReconcileID: "r1", Result: "ok", Duration: 3 * time.Millisecond, DurationKnown: true, Source: "-", Format: "json", Lines: 2},
			Queued:    watch.QueuedInfo{TriggerCount: 1, Triggers: tr}},
	}
}

func BenchmarkEncodeLines(b *testing.B) {
	evs := benchLines()
	b.ReportAllocs()
	for b.Loop() {
		for i := range evs {
			if _, err := Encode(&evs[i], Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkDecodeLines(b *testing.B) {
	evs := benchLines()
	var lines [][]byte
	for i := range evs {
		l, err := Encode(&evs[i], Options{})
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, l)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, err := DecodeLine(l); err != nil {
				b.Fatal(err)
			}
		}
	}
}
