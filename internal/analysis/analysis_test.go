package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var (
	cms = discovery.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	t0  = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
)

// cm is a ConfigMap at rv whose data.value is value and whose managedFields say manager wrote it
// at second sec.
func cm(rv int, value, manager string, sec int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "demo", "name": "c", "resourceVersion": fmt.Sprint(rv),
			"managedFields": []any{map[string]any{"manager": manager, "operation": "Update", "apiVersion": "v1",
				"time": fmt.Sprintf("2026-11-21T05:%02d:%02dZ", sec/60, sec%60), "fieldsV1": map[string]any{"f:data": map[string]any{"f:value": map[string]any{}}}}},
		},
		"data": map[string]any{"value": value},
	}}
}

// update is the Updated event from old to cur, at second sec.
func update(old, cur *unstructured.Unstructured, sec int) watch.Event {
	return watch.Event{
		Type: watch.Updated,
		Obj: watch.ObjectInfo{
			Delta:              watch.DeltaUpdated,
			OldResourceVersion: old.GetResourceVersion(),
			OldObject:          old,
			Object:             cur,
		},
		Time:            t0.Add(time.Duration(sec) * time.Second),
		Resource:        cms,
		Namespace:       "demo",
		Name:            "c",
		ResourceVersion: cur.GetResourceVersion(),
	}
}

// What an update changed is computed only when a consumer needs it, and then once; who made it
// always (a replayed update has no attribution), never again when the informer did.
func TestAnalyzeUpdate(t *testing.T) {
	heartbeat, _ := noise.NewFilter([]string{"data.value"}, nil)
	tests := []struct {
		name        string
		cfg         Config
		wantChanges bool
		wantIgnored bool
	}{
		{name: "no consumer", cfg: Config{}},
		{name: "an output shows changes", cfg: Config{Changes: true}, wantChanges: true},
		{name: "a filter", cfg: Config{Filter: heartbeat}, wantChanges: true, wantIgnored: true},
		{name: "hot-loop detection", cfg: Config{HotLoopUpdates: 10, HotLoopWindow: time.Minute}, wantChanges: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := update(cm(1, "a", "alice", 0), cm(2, "b", "bob", 1), 1)
			out := New(tt.cfg).Analyze(nil, &ev)
			if len(out) != 1 {
				t.Fatalf("handed on %d events, want the update only", len(out))
			}
			got := out[0]
			if (got.Obj.Changes != nil) != tt.wantChanges {
				t.Errorf("changes computed: %v, want %v", got.Obj.Changes != nil, tt.wantChanges)
			}
			if tt.wantChanges {
				if c := got.Obj.Changes; len(c) != 1 || c[0].Path != "data.value" || c[0].Old != "a" || c[0].New != "b" || c[0].Ignored != tt.wantIgnored {
					t.Errorf("changes %+v, want data.value a → b (ignored %v)", c, tt.wantIgnored)
				}
			}
			if got.Obj.Attribution == nil || len(got.Obj.Attribution.Managers) != 1 || got.Obj.Attribution.Managers[0].Manager != "bob" {
				t.Errorf("attribution %+v, want bob", got.Obj.Attribution)
			}
			if got.Obj.Ignored != tt.wantIgnored {
				t.Errorf("ignored %v, want %v", got.Obj.Ignored, tt.wantIgnored)
			}
		})
	}

	// The informer's attribution and changes computed before are kept, not computed again.
	ev := update(cm(1, "a", "alice", 0), cm(2, "b", "bob", 1), 1)
	informer := &diff.Attribution{Rule: diff.RuleEntry, Managers: []diff.Manager{{Manager: "informer"}}}
	ev.Obj.Attribution = informer
	ev.Obj.Changes = []diff.Change{{Path: "already.computed"}}
	New(Config{Changes: true}).Analyze(nil, &ev)
	if ev.Obj.Attribution != informer || len(ev.Obj.Changes) != 1 || ev.Obj.Changes[0].Path != "already.computed" {
		t.Errorf("analyzed again: %+v %+v", ev.Obj.Attribution, ev.Obj.Changes)
	}

	// A no-op write: changes computed and empty (not nil: nil means not computed).
	same := update(cm(1, "a", "alice", 0), cm(2, "a", "alice", 0), 1)
	New(Config{Changes: true}).Analyze(nil, &same)
	if same.Obj.Changes == nil || len(same.Obj.Changes) != 0 || same.Obj.Attribution == nil || !same.Obj.Attribution.NoOp {
		t.Errorf("no-op: changes %#v, attribution %+v", same.Obj.Changes, same.Obj.Attribution)
	}

	// Other events are handed on untouched: no changes, no attribution.
	for _, ev := range []watch.Event{
		{Type: watch.Added, Resource: cms, Obj: watch.ObjectInfo{Object: cm(1, "a", "alice", 0)}},
		{Type: watch.Updated, Obj: watch.ObjectInfo{Delta: watch.DeltaSync, OldResourceVersion: "1", Object: cm(1, "a", "alice", 0), OldObject: cm(1, "a", "alice", 0)}, Resource: cms, ResourceVersion: "1"},
		{Type: watch.Reconciled, Key: "demo/c"},
	} {
		out := New(Config{Changes: true}).Analyze(nil, &ev)
		if len(out) != 1 || out[0].Obj.Changes != nil || out[0].Obj.Attribution != nil {
			t.Errorf("%s (%s) analyzed: %+v", ev.Type, ev.Obj.Delta, out)
		}
	}
}

// Two managers taking turns: a HotLoop event right after the update that made it one, with its
// report typed; its end a window later, and at a delete.
func TestAnalyzeHotLoop(t *testing.T) {
	run := func(s *Step) (events []watch.Event, prev *unstructured.Unstructured) {
		prev = cm(1, "a", "alice", 0)
		for i := 1; i <= 6; i++ {
			who, value := "bob", "b"
			if i%2 == 0 {
				who, value = "alice", "a"
			}
			cur := cm(1+i, value, who, i)
			ev := update(prev, cur, i)
			events = s.Analyze(events, &ev)
			prev = cur
		}
		return events, prev
	}
	s := New(Config{HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second})
	events, _ := run(s)
	var types []string
	for _, ev := range events {
		types = append(types, string(ev.Type))
	}
	if want := "Updated Updated Updated Updated Updated HotLoop Updated"; strings.Join(types, " ") != want {
		t.Fatalf("events %s, want %s", strings.Join(types, " "), want)
	}
	hl := events[5]
	want := &watch.HotLoopInfo{Reason: "alternating", Loop: diff.LoopFight, Managers: []string{"bob", "alice"}, Fields: []string{"data.value"},
		Updates: 5, Window: 30 * time.Second}
	if hl.HotLoop == nil {
		t.Fatal("a HotLoop event without its report")
	}
	hl.HotLoop.Suggestion = ""
	if diff := cmp.Diff(want, hl.HotLoop); diff != "" || hl.Key != "demo/c" || hl.Namespace != "demo" || hl.Name != "c" || hl.Resource.String() != cms.String() {
		t.Errorf("HotLoop %s %s/%s (-want +got):\n%s", hl.Key, hl.Namespace, hl.Name, diff)
	}
	if got := s.Ended(t0.Add(20 * time.Second)); len(got) != 0 {
		t.Errorf("ended within the window: %+v", got)
	}
	if got := s.Ongoing(t0.Add(20 * time.Second)); len(got) != 1 || got[0].HotLoop.Updates != 6 {
		t.Errorf("ongoing %+v, want the loop of 6 updates", got)
	}
	ended := s.Ended(t0.Add(time.Minute))
	if len(ended) != 1 || ended[0].Type != watch.HotLoopEnded || ended[0].Key != "demo/c" {
		t.Fatalf("ended %+v", ended)
	}
	if h := ended[0].HotLoop; h.Loop != diff.LoopFight || h.Updates != 6 || h.Duration != 5*time.Second || h.Deleted {
		t.Errorf("HotLoopEnded %+v", h)
	}

	// A delete ends the loop at once.
	s = New(Config{HotLoopUpdates: 10, HotLoopWindow: 30 * time.Second})
	_, prev := run(s)
	del := watch.Event{Type: watch.Deleted, Time: t0.Add(7 * time.Second), Resource: cms, Namespace: "demo", Name: "c", Obj: watch.ObjectInfo{Object: prev}}
	s.Analyze(nil, &del)
	if ended := s.Ended(t0.Add(8 * time.Second)); len(ended) != 1 || !ended[0].HotLoop.Deleted {
		t.Errorf("ended at a delete: %+v", ended)
	}
}

// Replay's --hot-loop-*: the recorded HotLoop lines are replaced, also when detection is off;
// without it they pass.
func TestAnalyzeRedetect(t *testing.T) {
	recorded := watch.Event{Type: watch.HotLoop, Resource: cms, Key: "demo/c", HotLoop: &watch.HotLoopInfo{Updates: 11}}
	for _, tt := range []struct {
		cfg  Config
		want int
	}{
		{Config{}, 1},
		{Config{Redetect: true}, 0},
		{Config{Redetect: true, HotLoopUpdates: 3, HotLoopWindow: time.Minute}, 0},
	} {
		if got := New(tt.cfg).Analyze(nil, &recorded); len(got) != tt.want {
			t.Errorf("%+v: %d events handed on, want %d", tt.cfg, len(got), tt.want)
		}
		ended := watch.Event{Type: watch.HotLoopEnded, Resource: cms, Key: "demo/c", HotLoop: &watch.HotLoopInfo{Updates: 40, Duration: 30 * time.Second}}
		if got := New(tt.cfg).Analyze(nil, &ended); len(got) != tt.want {
			t.Errorf("%+v: the recorded HotLoopEnded: %d events handed on, want %d", tt.cfg, len(got), tt.want)
		}
	}
}

// Heartbeats are not a hot loop: updates of ignored fields only do not count.
func TestHotLoopSkipsIgnored(t *testing.T) {
	heartbeat, _ := noise.NewFilter([]string{"data.value"}, nil)
	for _, f := range []*noise.Filter{heartbeat, nil} {
		s := New(Config{Filter: f, HotLoopUpdates: 3, HotLoopWindow: time.Minute})
		prev := cm(1, "0", "kubelet", 0)
		found := 0
		for i := 1; i <= 20; i++ {
			cur := cm(1+i, fmt.Sprint(i), "kubelet", i)
			ev := update(prev, cur, i)
			found += len(s.Analyze(nil, &ev)) - 1
			prev = cur
		}
		if f != nil && found != 0 {
			t.Errorf("%d HotLoop events for heartbeats", found)
		}
		if f == nil && found != 1 {
			t.Errorf("%d HotLoop events for 20 updates that are not ignored, want 1", found)
		}
	}
}
