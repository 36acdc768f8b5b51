package noise

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var leases = discovery.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease"}

// update is an Updated event from old to new (JSON), managed by manager.
func update(t *testing.T, old, cur string, at time.Time, rv int) watch.Event {
	t.Helper()
	dec := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"Lease","metadata":{"name":"l","namespace":"ns"},` + s + `}`)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	return watch.Event{
		Type: watch.Updated,
		Obj: watch.ObjectInfo{
			Delta:              watch.DeltaUpdated,
			Object:             dec(cur),
			OldObject:          dec(old),
			OldResourceVersion: fmt.Sprint(rv - 1),
		},
		Time:            at,
		Resource:        leases,
		Namespace:       "ns",
		Name:            "l",
		ResourceVersion: fmt.Sprint(rv),
	}
}

func TestFilterMark(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name            string
		ignore, only    []string
		old, cur        string
		wantIgnored     bool
		wantOutOfFocus  bool
		wantIgnoredPath []string
	}{
		{name: "a renewal is a default heartbeat", old: `"spec":{"renewTime":"1"}`, cur: `"spec":{"renewTime":"2"}`, wantIgnored: true, wantIgnoredPath: []string{"spec.renewTime"}},
		{name: "--ignore-path=- shows it", ignore: []string{"-"}, old: `"spec":{"renewTime":"1"}`, cur: `"spec":{"renewTime":"2"}`},
		{name: "a new holder is not noise", old: `"spec":{"holderIdentity":"a","renewTime":"1"}`, cur: `"spec":{"holderIdentity":"b","renewTime":"2"}`, wantIgnoredPath: []string{"spec.renewTime"}},
		{name: "a user's path adds to the defaults", ignore: []string{"status.seen"}, old: `"spec":{"renewTime":"1"},"status":{"seen":"a"}`, cur: `"spec":{"renewTime":"2"},"status":{"seen":"b"}`, wantIgnored: true, wantIgnoredPath: []string{"spec.renewTime", "status.seen"}},
		{name: "a no-op write is not ignored", old: `"spec":{"renewTime":"1"}`, cur: `"spec":{"renewTime":"1"}`},
		{name: "in focus", only: []string{"spec.replicas"}, old: `"spec":{"replicas":1,"x":1}`, cur: `"spec":{"replicas":2,"x":2}`},
		{name: "out of focus", only: []string{"spec.replicas"}, old: `"spec":{"x":1}`, cur: `"spec":{"x":2}`, wantOutOfFocus: true},
		{name: "focus under a path", only: []string{"spec"}, old: `"spec":{"x":1}`, cur: `"spec":{"x":2}`},
		{name: "ignored beats focus", only: []string{"spec"}, old: `"spec":{"renewTime":"1"}`, cur: `"spec":{"renewTime":"2"}`, wantIgnored: true, wantIgnoredPath: []string{"spec.renewTime"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFilter(tt.ignore, tt.only)
			if err != nil {
				t.Fatal(err)
			}
			ev := update(t, tt.old, tt.cur, now, 2)
			f.Mark(&ev)
			if ev.Obj.Ignored != tt.wantIgnored || ev.Obj.OutOfFocus != tt.wantOutOfFocus {
				t.Errorf("ignored %v, outOfFocus %v; want %v, %v", ev.Obj.Ignored, ev.Obj.OutOfFocus, tt.wantIgnored, tt.wantOutOfFocus)
			}
			var ignored []string
			for _, c := range ev.Obj.Changes {
				if c.Ignored {
					ignored = append(ignored, c.Path)
				}
			}
			if strings.Join(ignored, " ") != strings.Join(tt.wantIgnoredPath, " ") {
				t.Errorf("ignored changes %v, want %v", ignored, tt.wantIgnoredPath)
			}
			if Hidden(&ev) != (tt.wantIgnored || tt.wantOutOfFocus) {
				t.Errorf("Hidden = %v", Hidden(&ev))
			}
		})
	}
	// A resync changes nothing: out of focus when focused, untouched otherwise.
	f, _ := NewFilter(nil, []string{"spec.replicas"})
	sync := update(t, `"spec":{}`, `"spec":{}`, now, 2)
	sync.Obj.Delta, sync.Obj.OldResourceVersion = watch.DeltaSync, sync.ResourceVersion
	f.Mark(&sync)
	if !sync.Obj.OutOfFocus {
		t.Errorf("a resync is in focus of --only-path")
	}
	f, _ = NewFilter(nil, nil)
	sync.Obj.OutOfFocus = false
	f.Mark(&sync)
	if sync.Obj.OutOfFocus || sync.Obj.Ignored {
		t.Errorf("a resync marked without --only-path")
	}
}

func TestNewFilterErrors(t *testing.T) {
	if _, err := NewFilter([]string{"status.conditions[*"}, nil); err == nil || !strings.HasPrefix(err.Error(), `--ignore-path: invalid path "status.conditions[*": unclosed [`) {
		t.Errorf("err = %v", err)
	}
	if _, err := NewFilter(nil, []string{"spec..x"}); err == nil || !strings.HasPrefix(err.Error(), `--only-path: invalid path "spec..x"`) {
		t.Errorf("err = %v", err)
	}
	for _, p := range DefaultIgnore {
		if _, err := NewFilter([]string{p}, nil); err != nil {
			t.Errorf("default %s: %v", p, err)
		}
	}
}

// A hot object's updates fold into one line per interval, by the events' time; its other lines,
// the loop's end and other objects pass, each after what was folded before it.
func TestFolder(t *testing.T) {
	start := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	f := NewFolder(time.Second)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	ann := func(i int) string { return fmt.Sprintf(`"metadata":{"annotations":{"echo/last-seen":"%d"}}`, i) }
	var lines []string
	note := func(evs []watch.Event) {
		for _, e := range evs {
			lines = append(lines, fmt.Sprintf("Folded %d rv=%s→%s in %s fields=%v", e.HotLoop.Updates, e.Lifecycle.FromResourceVersion, e.ResourceVersion, e.HotLoop.Duration, e.HotLoop.Fields))
		}
	}
	feed := func(ev watch.Event) {
		if ev.IsChange() { // as the analysis step hands them on
			ev.Obj.Changes = diff.Compute(ev.Obj.OldObject.Object, ev.Obj.Object.Object)
		}
		before, folded := f.Fold(&ev)
		note(before)
		if !folded {
			lines = append(lines, fmt.Sprintf("%s rv=%s", ev.Type, ev.ResourceVersion))
		}
	}
	feed(update(t, ann(0), ann(1), at(0), 11)) // not hot yet: shown
	hot := update(t, ann(1), ann(2), at(10), 12)
	feed(hot)
	f.Loop(&hot)
	rv := 13
	for ms := 20; ms < 2500; ms += 10 {
		feed(update(t, ann(rv-11), ann(rv-10), at(ms), rv))
		rv++
	}
	note(f.Due(at(2600))) // not due: the third interval started at 2020ms
	other := update(t, ann(0), ann(1), at(2700), 500)
	other.Name = "other"
	feed(other)
	note(f.Due(at(3100)))
	end := watch.Event{Type: "HotLoopEnded", Resource: leases, Namespace: "ns", Name: "l"}
	note(f.End(&end))
	feed(update(t, ann(0), ann(1), at(3200), 600)) // the loop ended: shown again
	want := []string{
		"Updated rv=11",
		"Updated rv=12",
		"Folded 100 rv=12→112 in 990ms fields=[metadata.annotations[\"echo/last-seen\"]]",
		"Folded 100 rv=112→212 in 990ms fields=[metadata.annotations[\"echo/last-seen\"]]",
		"Updated rv=500",
		"Folded 48 rv=212→260 in 470ms fields=[metadata.annotations[\"echo/last-seen\"]]",
		"Updated rv=600",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if f.Updates != 248 || f.Lines != 3 {
		t.Errorf("counted %d updates in %d lines, want 248 in 3", f.Updates, f.Lines)
	}
	// A delete of a hot object comes after what was folded before it.
	f = NewFolder(time.Second)
	f.Loop(&hot)
	lines = nil
	feed(update(t, ann(1), ann(2), at(0), 20))
	del := watch.Event{Type: watch.Deleted, Time: at(5), Resource: leases, Namespace: "ns", Name: "l", ResourceVersion: "21"}
	feed(del)
	note(f.Flush())
	if want := "Folded 1 rv=19→20 in 0s fields=[metadata.annotations[\"echo/last-seen\"]]\nDeleted rv=21"; strings.Join(lines, "\n") != want {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), want)
	}
	// A resync of a hot object (and a relist's unchanged redelivery) is no update: shown as
	// itself after what was folded before it, never counted as "1 more update" (issue #33).
	f = NewFolder(time.Second)
	f.Loop(&hot)
	lines = nil
	feed(update(t, ann(1), ann(2), at(0), 30))
	sync := update(t, ann(2), ann(2), at(5), 30)
	sync.Obj.Delta, sync.Obj.OldResourceVersion = watch.DeltaSync, "30"
	feed(sync)
	relisted := update(t, ann(2), ann(2), at(6), 30)
	relisted.Obj.Delta, relisted.Obj.OldResourceVersion = watch.DeltaReplaced, "30"
	feed(relisted)
	note(f.Flush())
	if want := "Folded 1 rv=29→30 in 0s fields=[metadata.annotations[\"echo/last-seen\"]]\nUpdated rv=30\nUpdated rv=30"; strings.Join(lines, "\n") != want || f.Updates != 1 {
		t.Errorf("lines (%d updates folded):\n%s\nwant (1):\n%s", f.Updates, strings.Join(lines, "\n"), want)
	}
}

// Changes computed with the filter's ignored paths (diff.ComputeIgnoring) come marked: Mark and
// MarkComputed agree on them.
func TestMarkComputedAgreesWithMark(t *testing.T) {
	f, err := NewFilter([]string{"status.renewTime"}, []string{"spec"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		old, new     map[string]any
		ignored, foc bool
	}{
		{"heartbeat only", map[string]any{"status": map[string]any{"renewTime": "1"}}, map[string]any{"status": map[string]any{"renewTime": "2"}}, true, false},
		{"spec and heartbeat", map[string]any{"spec": map[string]any{"x": 1}, "status": map[string]any{"renewTime": "1"}}, map[string]any{"spec": map[string]any{"x": 2}, "status": map[string]any{"renewTime": "2"}}, false, false},
		{"out of focus", map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "1"}}}, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "2"}}}, false, true},
	} {
		mk := func() watch.Event {
			return watch.Event{Type: watch.Updated, ResourceVersion: "2", Obj: watch.ObjectInfo{OldResourceVersion: "1",
				OldObject: &unstructured.Unstructured{Object: tc.old}, Object: &unstructured.Unstructured{Object: tc.new}}}
		}
		marked := mk()
		f.Mark(&marked)
		computed := mk()
		computed.Obj.Changes = diff.ComputeIgnoring(tc.old, tc.new, f.Ignores())
		f.MarkComputed(&computed)
		for _, ev := range []watch.Event{marked, computed} {
			if ev.Obj.Ignored != tc.ignored || ev.Obj.OutOfFocus != tc.foc {
				t.Errorf("%s: ignored %v out of focus %v, want %v %v (changes %+v)", tc.name, ev.Obj.Ignored, ev.Obj.OutOfFocus, tc.ignored, tc.foc, ev.Obj.Changes)
			}
		}
	}
}

// Pass hides a line marked as noise, also an update of a hot object (nothing folded for it),
// and folds the other updates of a hot object the output shows.
func TestFolderPass(t *testing.T) {
	f := NewFolder(time.Second)
	t0 := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	obj := func(typ watch.Type, rv string) *watch.Event {
		return &watch.Event{Type: typ, Time: t0, Resource: discovery.Resource{Resource: "configmaps"}, Namespace: "demo", Name: "c", ResourceVersion: rv,
			Obj: watch.ObjectInfo{OldResourceVersion: "1"}}
	}
	if _, show := f.Pass(nil, obj(watch.HotLoop, ""), true); !show {
		t.Fatal("a HotLoop line not shown")
	}
	noise := obj(watch.Updated, "2")
	noise.Obj.Ignored = true
	if before, show := f.Pass(nil, noise, true); show || len(before) != 0 || f.Updates != 0 {
		t.Errorf("an ignored update: shown %v, before %d, folded %d; want hidden, nothing folded", show, len(before), f.Updates)
	}
	if _, show := f.Pass(nil, obj(watch.Updated, "3"), true); show || f.Updates != 1 {
		t.Errorf("a hot object's update: shown %v, folded %d; want folded", show, f.Updates)
	}
	if _, show := f.Pass(nil, obj(watch.Updated, "4"), false); show || f.Updates != 1 {
		t.Errorf("an update the output does not show: shown %v, folded %d; want neither", show, f.Updates)
	}
	if before, show := f.Pass(nil, obj(watch.HotLoopEnded, ""), true); !show || len(before) != 1 {
		t.Errorf("the loop's end: shown %v, %d Folded lines before it; want shown after one", show, len(before))
	}
}
