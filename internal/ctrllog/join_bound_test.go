package ctrllog

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// floodReconciles are n reconciles as a busy klog controller logs them (HOSTILE-CASES-2 F2's
// flood: "Successfully synced" of objects hl/o-0 ... hl/o-(objects-1) in turn), read at 100,000
// lines a second when live, all at once (a file read from its start) when not.
func floodReconciles(n, objects int, live bool) []Reconcile {
	rs := make([]Reconcile, n)
	for i := range rs {
		start := t0.Add(time.Duration(i) * 10 * time.Microsecond)
		read := t0
		if live {
			read = start
		}
		rs[i] = Reconcile{Controller: "configmap", Object: ObjectRef{Kind: "ConfigMap", Namespace: "hl", Name: fmt.Sprintf("o-%d", i%objects)},
			Start: start, End: start, Precise: true, Result: ResultOK, Read: read, LastRead: read, Lines: 1}
	}
	return rs
}

// The join's work per line is bounded (HOSTILE-CASES-2 F2: it was quadratic, each reconcile
// joined looked at every later one and every one still held, and 500,000 lines of a busy log
// kept a run going for minutes past --timeout): at 500,000 lines, read all at once (a file) or
// live at 100,000 a second, it takes a bounded number of steps per line, no more than
// MaxPending reconciles wait, and every reconcile is joined once. Under the race detector (make
// unit, ten times slower) it runs at 50,000 lines; make mutate and go test at 500,000.
func TestJoinWorkPerLineBounded(t *testing.T) {
	const objects, perLine = 1000, 64
	lines := 500_000
	if raceEnabled {
		lines = 50_000
	}
	cms := discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	for _, live := range []bool{false, true} {
		t.Run(fmt.Sprintf("live=%v", live), func(t *testing.T) {
			j := NewJoin(JoinConfig{Resources: []discovery.Resource{cms}, Skew: DefaultSkew, Hold: DefaultHold})
			// Every object was updated once before, so each object's first reconcile has a trigger.
			for o := range objects {
				j.Observe(&watch.Event{
					Type:            watch.Updated,
					Obj:             watch.ObjectInfo{Delta: watch.DeltaUpdated},
					Resource:        cms,
					Namespace:       "hl",
					Name:            fmt.Sprintf("o-%d", o),
					ResourceVersion: fmt.Sprint(o),
					Time:            t0.Add(-time.Millisecond),
				})
			}
			joined, triggered := 0, 0
			count := func(evs []watch.Event) {
				joined += len(evs)
				for i := range evs {
					triggered += evs[i].Queued.TriggerCount
				}
			}
			rs := floodReconciles(lines, objects, live)
			next := t0
			for i := range rs {
				count(j.Add(rs[i]))
				if j.work > perLine*(i+1) {
					t.Fatalf("%d steps by line %d, more than %d a line", j.work, i+1, perLine)
				}
				if j.Pending() > MaxPending {
					t.Fatalf("%d reconciles pending after line %d, more than MaxPending", j.Pending(), i)
				}
				if live && !rs[i].Read.Before(next) { // the runner's tick, every 100ms
					count(j.Due(rs[i].Read))
					next = rs[i].Read.Add(100 * time.Millisecond)
				}
			}
			count(j.Flush())
			if joined != lines {
				t.Fatalf("%d reconciles joined, want %d", joined, lines)
			}
			if triggered != objects {
				t.Errorf("%d triggers in all, want %d (each object's one update, to its first reconcile)", triggered, objects)
			}
			t.Logf("%d steps for %d lines (%.1f a line), %d joined early", j.work, lines, float64(j.work)/float64(lines), j.Early)
			if j.work > perLine*lines {
				t.Errorf("%d steps for %d lines (%.1f a line), want at most %d a line", j.work, lines, float64(j.work)/float64(lines), perLine)
			}
			if !live && j.Early != max(0, lines-MaxPending) {
				t.Errorf("Early = %d, want %d (every reconcile past MaxPending waiting)", j.Early, lines-MaxPending)
			}
			if live && j.Early != 0 {
				t.Errorf("Early = %d live at 100,000 lines/s, want 0 (MaxPending holds more than a hold's worth)", j.Early)
			}
		})
	}
}
