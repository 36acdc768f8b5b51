package reenact

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// playRecorded plays recordedEvents into a fake client (the writes only: no informer is fed
// from it) and returns the writes it made, as "verb subresource name manager".
func playRecorded(t *testing.T, skip ...string) ([]string, *Stats) {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets.GVR(): "WidgetList"})
	cfg := &Config{Name: "r1", NamespaceMap: map[string]string{"demo": "repro"}, SkipManagers: skip, Log: io.Discard}
	plan := NewPlan(recordedEvents())
	pl := newPlayer(&Clients{Dynamic: dyn}, cfg, &target{status: map[schema.GroupVersionResource]bool{widgets.GVR(): true}, namespaced: map[schema.GroupVersionResource]bool{widgets.GVR(): true}})
	ctx := context.Background()
	if err := pl.initial(ctx, plan.Initial); err != nil {
		t.Fatal(err)
	}
	if err := pl.play(ctx, plan); err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, a := range dyn.Actions() {
		if a.GetNamespace() != "repro" {
			t.Errorf("a write into namespace %q: %v", a.GetNamespace(), a)
		}
		switch a := a.(type) {
		case clienttesting.CreateActionImpl:
			writes = append(writes, fmt.Sprintf("create %s %s", a.CreateOptions.FieldManager, strings.Join(mapKeys(a.Object), "")))
		case clienttesting.PatchActionImpl:
			writes = append(writes, fmt.Sprintf("patch %q %s %s %s", a.Subresource, a.Name, a.PatchOptions.FieldManager, a.Patch))
		case clienttesting.DeleteActionImpl:
			writes = append(writes, "delete "+a.Name)
		}
	}
	return writes, pl.stats
}

func mapKeys(o runtime.Object) []string {
	type named interface{ GetName() string }
	if n, ok := o.(named); ok {
		return []string{n.GetName()}
	}
	return nil
}

// Each recorded write is made by its recorded writer, through the subresource it used, into the
// mapped namespace; --skip-manager leaves out exactly that manager's writes.
func TestPlayWriters(t *testing.T) {
	writes, stats := playRecorded(t)
	want := []string{
		"create kubectl-create calm",
		`patch "status" calm widget-operator {"status":{"phase":"Ready"}}`,
		"create kubectl-create loop",
		`patch "status" loop widget-operator {"status":{"t":"1"}}`,
		`patch "status" loop widget-operator {"status":{"t":"2"}}`,
		`patch "" loop kubectl-edit {"spec":{"size":2}}`,
		"delete loop",
	}
	if d := cmp.Diff(want, writes); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	if stats.Initial != 1 || stats.Created != 1 || stats.Updated != 3 || stats.Deleted != 1 {
		t.Errorf("stats %+v", stats)
	}
	if len(stats.RVs) == 0 || stats.RVs[0].Recorded != "10" {
		t.Errorf("resourceVersion map %+v", stats.RVs)
	}

	writes, stats = playRecorded(t, "widget-operator")
	want = []string{
		"create kubectl-create calm",
		"create kubectl-create loop",
		`patch "" loop kubectl-edit {"spec":{"size":2}}`,
		"delete loop",
	}
	if d := cmp.Diff(want, writes); d != "" {
		t.Errorf("writes with --skip-manager widget-operator (-want +got):\n%s", d)
	}
	if stats.Skipped["widget-operator"] != 3 {
		t.Errorf("skipped %v, want 3 by widget-operator", stats.Skipped)
	}
}

// Interrupted while it creates the initial objects (the signal cancels the request in flight),
// Play reports what it played and what it left, and returns no error: the run goes on to its
// summary and --compare as an interrupted watch does.
func TestPlayInterruptedInInitial(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets.GVR(): "WidgetList"})
	ctx, cancel := context.WithCancel(context.Background())
	dyn.PrependReactor("create", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
		cancel()
		return true, nil, ctx.Err()
	})
	var log strings.Builder
	cfg := &Config{Name: "r1", NamespaceMap: map[string]string{"demo": "repro"}, Log: &log}
	plan := NewPlan(recordedEvents())
	pl := newPlayer(&Clients{Dynamic: dyn}, cfg, &target{status: map[schema.GroupVersionResource]bool{widgets.GVR(): true}, namespaced: map[schema.GroupVersionResource]bool{widgets.GVR(): true}})
	r := &Reenactment{cfg: cfg, plan: plan, pl: pl}
	stats, err := r.Play(ctx)
	if err != nil {
		t.Fatalf("Play interrupted: %v, want no error", err)
	}
	if want := len(plan.Initial) + len(plan.Steps); stats.Unplayed != want {
		t.Errorf("unplayed %d, want %d", stats.Unplayed, want)
	}
	if !strings.Contains(log.String(), "reenact: stopped before the last") {
		t.Errorf("log:\n%s", log.String())
	}
}

// A recorded delete of an object the target does not have (its create left out) is stated, with
// why, and counted.
func TestPlayStatesUnplayedDelete(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets.GVR(): "WidgetList"})
	var log strings.Builder
	cfg := &Config{Name: "r1", NamespaceMap: map[string]string{"demo": "repro"}, SkipManagers: []string{"kubectl-create"}, Log: &log}
	plan := NewPlan(recordedEvents())
	pl := newPlayer(&Clients{Dynamic: dyn}, cfg, &target{status: map[schema.GroupVersionResource]bool{widgets.GVR(): true}, namespaced: map[schema.GroupVersionResource]bool{widgets.GVR(): true}})
	stats, err := (&Reenactment{cfg: cfg, plan: plan, pl: pl}).Play(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"reenact: not played delete widgets.example.com repro/loop: the target does not have it",
		"reenact: recorded creates 1: 0 played; recorded deletes 1: 0 played",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if stats.Deletes != 1 || stats.Missing == 0 {
		t.Errorf("stats %+v", stats)
	}
}
