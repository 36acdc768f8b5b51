package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var nodes = discovery.Resource{Version: "v1", Resource: "nodes", Kind: "Node"}

// nodeUpdate is a Node update whose heartbeat changed, and its Ready status when ready differs.
func nodeUpdate(i int, ready string) watch.Event {
	node := func(rv, beat, status string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "n1", "resourceVersion": rv},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status, "lastHeartbeatTime": beat}}},
		}}
	}
	old, cur := node("1", "t0", "True"), node("2", "t1", ready)
	ev := watch.UpdateOf(nodes, old, cur, time.Date(2026, 1, 1, 5, 0, i, 0, time.UTC))
	ev.Obj.Changes = diff.Compute(old.Object, cur.Object)
	p, _ := diff.ParsePattern("status.conditions[*].lastHeartbeatTime")
	for j := range ev.Obj.Changes {
		ev.Obj.Changes[j].Ignored = p.Covers(ev.Obj.Changes[j])
	}
	ev.Obj.Ignored = ready == "True"
	return ev
}

// Ignored fields leave the human diff (counted on the line) and are marked in JSON; an update of
// ignored fields only is marked "ignored"; a Folded line says what it stands for; the summary
// counts all of it.
func TestNoiseLines(t *testing.T) {
	beat, flip := nodeUpdate(0, "True"), nodeUpdate(1, "False")
	human := render(t, Options{Diff: "inline", Timestamps: "none"}, []watch.Event{flip})
	if want := `status.conditions[type=Ready].status: "True" → "False"; (+1 ignored)`; !strings.Contains(human, want) || strings.Contains(human, "lastHeartbeatTime") {
		t.Errorf("human diff %q, want %q without the heartbeat", human, want)
	}
	if full := render(t, Options{Diff: "full", Timestamps: "none"}, []watch.Event{flip}); strings.Contains(full, "lastHeartbeatTime: t1") || !strings.Contains(full, "+      status: \"False\"") {
		t.Errorf("--diff=full shows the ignored heartbeat or lacks the change:\n%s", full)
	}
	js := render(t, Options{Output: "json", Diff: "inline"}, []watch.Event{beat, flip})
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if !strings.HasSuffix(lines[0], `],"ignored":true}`) || !strings.Contains(lines[0], `{"path":"status.conditions[type=Ready].lastHeartbeatTime","old":"t0","new":"t1","ignored":true}`) {
		t.Errorf("JSON of a heartbeat: %s", lines[0])
	}
	if strings.HasSuffix(lines[1], `"ignored":true}`) {
		t.Errorf("JSON of a status flip marked ignored: %s", lines[1])
	}
	if !strings.Contains(lines[1], `{"path":"status.conditions[type=Ready].status","old":"True","new":"False"}`) {
		t.Errorf("JSON of a status flip lacks its change: %s", lines[1])
	}
	folded := watch.Event{
		Type:            watch.Folded,
		Time:            beat.Time,
		Resource:        nodes,
		Name:            "n1",
		Lifecycle:       watch.LifecycleInfo{FromResourceVersion: "100"},
		ResourceVersion: "612",
		HotLoop:         &watch.HotLoopInfo{Updates: 512, Duration: 990 * time.Millisecond, Managers: []string{"echoer"}, Fields: []string{`metadata.annotations["echo/last-seen"]`}},
	}
	got := render(t, Options{Timestamps: "none"}, []watch.Event{folded})
	if want := `Folded      nodes  n1  rv=100→612  512 more updates in 990ms by echoer, flipping metadata.annotations["echo/last-seen"]  [hot loop: folded; --fold=off shows each]` + "\n"; got != want {
		t.Errorf("Folded line\n%q, want\n%q", got, want)
	}

	for _, hides := range []bool{true, false} {
		s := summary.New()
		s.HidesNoise = hides
		unfocused := flip
		unfocused.Obj.OutOfFocus = true
		for _, ev := range []watch.Event{beat, beat, unfocused, folded} {
			s.Add(&ev)
		}
		var b bytes.Buffer
		_ = writeSummary(&b, s)
		want := "hidden: 512 updates of objects in a hot loop folded into 1 Folded lines (--fold=off shows each); 2 updates that changed only ignored paths (--ignore-path=- shows them); 1 updates out of focus (no --only-path path changed); -o json and --record keep every one"
		if !hides {
			want = "marked: " + strings.TrimSuffix(strings.TrimPrefix(want, "hidden: "), "; -o json and --record keep every one")
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary:\n%s\nlacks %q", b.String(), want)
		}
		if !strings.Contains(b.String(), "Updated 3 (Updated 3)") {
			t.Errorf("a Folded line counted as an event: %s", b.String())
		}
	}
}
