package pipeline

import (
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// run passes evs through a pipeline of cfg (Summary and Emit set here) and returns what it
// emitted.
func run(cfg Config, evs ...watch.Event) []watch.Event {
	var out []watch.Event
	cfg.Summary = summary.New()
	cfg.Emit = func(ev *watch.Event) error {
		out = append(out, *ev)
		return nil
	}
	p := New(cfg)
	for _, ev := range evs {
		p.Handle(ev)
	}
	p.Flush()
	return out
}

func TestNoiseHiddenFromHumanOutputOnly(t *testing.T) {
	now := time.Now()
	evs := []watch.Event{
		{Type: watch.Updated, Time: now, Name: "a", ResourceVersion: "2", Obj: watch.ObjectInfo{Ignored: true}},
		{Type: watch.Updated, Time: now, Name: "a", ResourceVersion: "3", Obj: watch.ObjectInfo{OutOfFocus: true}},
		{Type: watch.Updated, Time: now, Name: "a", ResourceVersion: "4"},
	}
	tests := []struct {
		name  string
		human bool
		want  []string
	}{
		{"human output hides noise", true, []string{"4"}},
		{"machine-readable output keeps every line", false, []string{"2", "3", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range run(Config{Human: tt.human, Fold: time.Second}, evs...) {
				got = append(got, ev.ResourceVersion)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("emitted resourceVersions %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("emitted resourceVersions %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestHotObjectsUpdatesFolded(t *testing.T) {
	now := time.Now()
	hot := watch.Event{Type: watch.HotLoop, Time: now, Name: "a", Namespace: "ns"}
	var evs []watch.Event
	evs = append(evs, hot)
	for i := range 5 {
		evs = append(evs, watch.Event{Type: watch.Updated, Time: now.Add(time.Duration(i) * time.Millisecond), Name: "a", Namespace: "ns", ResourceVersion: string(rune('2' + i))})
	}
	summary := summary.New()
	var folded int
	p := New(Config{Summary: summary, Human: true, Fold: time.Hour, Emit: func(ev *watch.Event) error {
		if ev.Type == watch.Folded {
			folded++
		}
		return nil
	}})
	for _, ev := range evs {
		p.Handle(ev)
	}
	p.Flush()
	if folded == 0 {
		t.Fatalf("no Folded line for a hot object's updates")
	}
}

func TestKeepAndShows(t *testing.T) {
	now := time.Now()
	evs := []watch.Event{
		{Type: watch.Added, Time: now, Name: "a"},
		{Type: watch.Deleted, Time: now, Name: "b"},
		{Type: watch.Added, Time: now, Name: "c"},
	}
	var observed int
	out := run(Config{
		Keep:    func(ev *watch.Event) bool { return ev.Name != "c" },
		Observe: func(*watch.Event) { observed++ },
		Shown:   NewShown(nil, []watch.Type{watch.Deleted}, false),
	}, evs...)
	if len(out) != 1 || out[0].Name != "a" {
		t.Fatalf("emitted %v, want only a", out)
	}
	if observed != 2 {
		t.Fatalf("observed %d kept lines, want 2 (a filtered line is not counted)", observed)
	}
}

// The tracing stage sees every kept line, the noise human output hides and the updates it
// folds included, and nothing a filter dropped.
func TestTraceSeesEveryKeptLine(t *testing.T) {
	now := time.Now()
	evs := []watch.Event{
		{Type: watch.Updated, Time: now, Name: "a", ResourceVersion: "2", Obj: watch.ObjectInfo{Ignored: true}},
		{Type: watch.Updated, Time: now, Name: "a", ResourceVersion: "3", Obj: watch.ObjectInfo{OutOfFocus: true}},
		{Type: watch.Updated, Time: now, Name: "dropped", ResourceVersion: "4"},
		{Type: watch.Updated, Time: now, Name: "a", ResourceVersion: "5"},
	}
	var traced []string
	emitted := run(Config{Human: true, Fold: time.Second,
		Keep:  func(ev *watch.Event) bool { return ev.Name != "dropped" },
		Trace: func(ev *watch.Event) { traced = append(traced, ev.ResourceVersion) }}, evs...)
	if len(emitted) != 1 || len(traced) != 3 || traced[0] != "2" || traced[1] != "3" || traced[2] != "5" {
		t.Errorf("traced %v (emitted %d), want [2 3 5]", traced, len(emitted))
	}
}

// With Observed, Observe sees the kept lines of those types only; Shown's table says what the
// output shows (Folded lines stand for updates; Only: the types it names).
func TestObservedAndShown(t *testing.T) {
	now := time.Now()
	evs := []watch.Event{
		{Type: watch.Added, Time: now, Name: "a"},
		{Type: watch.Synced, Time: now},
		{Type: watch.Updated, Time: now, Name: "a"},
	}
	var observed []watch.Type
	out := run(Config{
		Observe:  func(ev *watch.Event) { observed = append(observed, ev.Type) },
		Observed: []watch.Type{watch.Synced},
		Shown:    NewShown(map[watch.Type]bool{watch.Updated: true, watch.Synced: true}, []watch.Type{watch.Synced}, false),
	}, evs...)
	if len(observed) != 1 || observed[0] != watch.Synced {
		t.Errorf("observed %v, want [Synced]", observed)
	}
	if len(out) != 1 || out[0].Type != watch.Updated {
		t.Errorf("emitted %v, want the update only", out)
	}
	s := NewShown(map[watch.Type]bool{watch.Updated: true}, nil, true)
	for _, c := range []struct {
		ev   watch.Event
		want bool
	}{
		{watch.Event{Type: watch.Folded}, true},
		{watch.Event{Type: watch.Deleted}, false},
		{watch.Event{Type: watch.ApiStats}, false},
	} {
		if got := s.shows(&c.ev); got != c.want {
			t.Errorf("%s shown %v, want %v", c.ev.Type, got, c.want)
		}
	}
	all := NewShown(nil, []watch.Type{watch.Bookmark}, true)
	if !all.shows(&watch.Event{Type: watch.ApiStats}) || all.shows(&watch.Event{Type: watch.ApiStats, Stats: watch.StatsInfo{Final: true}}) || all.shows(&watch.Event{Type: watch.Bookmark}) {
		t.Errorf("every type but bookmarks and the last ApiStats lines: wrong table %+v", all)
	}
}
