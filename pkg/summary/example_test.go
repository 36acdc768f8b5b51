package summary_test

import (
	"fmt"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// What a run saw, counted as its events pass: the objects by what caused them (a list or a
// watch event), the lists and the watches restarted, and the simulated reconciles with their
// waits in the workqueue, for the summary printed at exit and the report.
func Example() {
	pods := discovery.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	s := summary.New()
	for _, ev := range []watch.Event{
		{Type: watch.List},
		{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced}},
		{Type: watch.Added, Obj: watch.ObjectInfo{Delta: watch.DeltaReplaced}},
		{Type: watch.Watch},
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{Wait: 2 * time.Millisecond, TriggerCount: 2}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaUpdated}},
		{Type: watch.Watch}, // the watch ended and was started again
		{Type: watch.Reconciled, Queued: watch.QueuedInfo{Wait: 40 * time.Millisecond, TriggerCount: 1}},
	} {
		ev.Resource = pods
		s.Add(&ev)
	}
	fmt.Printf("objects %d: %d listed, %d updated\n", s.Objects,
		s.ByDelta[watch.Added][watch.DeltaReplaced], s.ByDelta[watch.Updated][watch.DeltaUpdated])
	fmt.Printf("lists %d, watch restarts %d\n", s.Lists(), s.WatchRestarts())
	fmt.Printf("reconciles %d of %d triggers, wait p50 %s, max %s\n", s.Reconciles, s.Triggers,
		summary.Percentile(s.Waits, 0.5), summary.Percentile(s.Waits, 1))
	// Output:
	// objects 3: 2 listed, 1 updated
	// lists 1, watch restarts 1
	// reconciles 2 of 3 triggers, wait p50 2ms, max 40ms
}
