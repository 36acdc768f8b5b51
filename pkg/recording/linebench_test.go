package recording

import (
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
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

// lifecycleBenchLines are a List, Synced, Watch, Bookmark, Throttled and ControllerQueue line, as
// a watch with --metrics writes them.
var lifecycleBenchLines = []string{
	`{"time":"2026-11-21T05:00:01.123456789Z","type":"List","group":"apps","version":"v1","resource":"deployments","kind":"Deployment","resourceVersion":"100","items":5,"durationMs":12,"initial":true,"pages":3,"flowSchema":"global-default","priorityLevel":"global-default","flowSchemaUID":"fs-1","priorityLevelUID":"pl-1"}`,
	`{"time":"2026-11-21T05:00:01.123456789Z","type":"Synced","group":"apps","version":"v1","resource":"deployments","kind":"Deployment","resourceVersion":"100","items":5,"durationMs":20,"listMode":"list","fellBack":true}`,
	`{"time":"2026-11-21T05:00:01.123456789Z","type":"Watch","group":"apps","version":"v1","resource":"deployments","kind":"Deployment","resourceVersion":"100","sendInitialEvents":false,"timeoutSeconds":300}`,
	`{"time":"2026-11-21T05:00:02.123456789Z","type":"Bookmark","group":"apps","version":"v1","resource":"deployments","kind":"Deployment","resourceVersion":"104","initialEventsEnd":false}`,
	`{"time":"2026-11-21T05:00:05.123456789Z","type":"Throttled","group":"apps","version":"v1","resource":"deployments","kind":"Deployment","reason":"ClientThrottled","verb":"WATCH","delayMs":180}`,
	`{"time":"2026-11-28T14:26:36.340921463Z","type":"ControllerQueue","url":"http://127.0.0.1:43247/metrics","name":"widget","controller":"widget","depth":0,"adds":4,"retries":0,"unfinishedSeconds":0,"longestRunningSeconds":0,"queueP50Seconds":0.004,"queueP99Seconds":0.00988,"workP50Seconds":0.0325,"workP99Seconds":0.09864999999999999,"reconciles":{"success":3,"error":0,"requeue":0,"requeue_after":0},"reconcileErrors":0,"terminalReconcileErrors":0,"reconcilePanics":0,"activeWorkers":1,"maxConcurrentReconciles":1,"reconcileP50Seconds":0.0175,"reconcileP99Seconds":0.049249999999999995,"addsPerSecond":16.004018096815532,"retriesPerSecond":0,"reconcilesPerSecond":12.003013572611648,"reconcileErrorsPerSecond":0,"foldedScrapes":9,"logShows":0}`,
}

// objectBenchLines are a pod's Added line as -o json writes it (the object encoded already) and
// an Updated line with its attribution and changes.
func objectBenchLines(b *testing.B) ([]watch.Event, []Options) {
	pod := benchPod(b)
	obj, err := EncodeObject(pod)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	res := discovery.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	added := watch.Event{Type: watch.Added, Time: at, Resource: res, Namespace: pod.Namespace, Name: pod.Name, ResourceVersion: "7",
		Obj: watch.ObjectInfo{Delta: watch.DeltaAdded, InitialList: true}}
	updated := added
	updated.Type, updated.Obj.OldResourceVersion, updated.Obj.Delta, updated.Obj.InitialList = watch.Updated, "6", watch.DeltaUpdated, false
	changes := []Change{{Path: "status.phase", Old: []byte(`"Pending"`), New: []byte(`"Running"`)}}
	return []watch.Event{added, updated}, []Options{
		{Derived: &Derived{ObjectJSON: obj, State: &State{Status: "InProgress"}}},
		{Derived: &Derived{ObjectJSON: obj, State: &State{Status: "Current"}, Update: &Update{Changes: &changes,
			Attribution: diff.Attribution{Rule: "entry", Managers: []diff.Manager{{Manager: "kubelet", Operation: "Update", Subresource: "status"}}}}}},
	}
}

func BenchmarkEncodeLines(b *testing.B) { benchEncode(b, benchLines(), nil) }
func BenchmarkDecodeLines(b *testing.B) { benchDecode(b, benchLines(), nil) }

func BenchmarkEncodeObjectLines(b *testing.B) {
	evs, opts := objectBenchLines(b)
	benchEncode(b, evs, opts)
}

func BenchmarkDecodeObjectLines(b *testing.B) {
	evs, opts := objectBenchLines(b)
	benchDecode(b, evs, opts)
}

func BenchmarkEncodeLifecycleLines(b *testing.B) { benchEncode(b, lifecycleEvents(b), nil) }
func BenchmarkDecodeLifecycleLines(b *testing.B) { benchDecode(b, lifecycleEvents(b), nil) }

// lifecycleEvents are lifecycleBenchLines read back.
func lifecycleEvents(b *testing.B) []watch.Event {
	var evs []watch.Event
	for _, l := range lifecycleBenchLines {
		d, err := DecodeLine([]byte(l))
		if err != nil {
			b.Fatal(err)
		}
		evs = append(evs, d.Event)
	}
	return evs
}

// benchEncode encodes evs, each with its options (none: the zero Options).
func benchEncode(b *testing.B, evs []watch.Event, opts []Options) {
	b.ReportAllocs()
	for b.Loop() {
		for i := range evs {
			if _, err := Encode(&evs[i], optionsAt(opts, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchDecode decodes the lines of evs, each encoded with its options.
func benchDecode(b *testing.B, evs []watch.Event, opts []Options) {
	var lines [][]byte
	for i := range evs {
		l, err := Encode(&evs[i], optionsAt(opts, i))
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

func optionsAt(opts []Options, i int) Options {
	if opts == nil {
		return Options{}
	}
	return opts[i]
}
