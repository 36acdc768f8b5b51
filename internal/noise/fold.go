package noise

import (
	"slices"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Folder folds, for human output, the updates of an object in a hot loop: from its HotLoop line
// (Loop) to its HotLoopEnded line (End), its updates are not shown one by one but counted into
// one Folded line per interval, which says how many, over how long, by whom, and what flipped.
// Time is the events' own (the same in watch and replay); Due lets a live run close an interval
// that no later event closes. It reads what the analysis step computed for each update
// (Changes, Attribution). It is not safe for concurrent use.
type Folder struct {
	interval time.Duration
	hot      map[objectKey]*fold // objects in a hot loop; nil fold: nothing folded yet
	order    []objectKey         // hot objects, in the order they became hot (stable output)
	// Updates and Lines count what was folded into what, for the summary.
	Updates, Lines int
}

type objectKey struct{ group, resource, namespace, name string }

func keyOf(ev *watch.Event) objectKey {
	return objectKey{ev.Resource.Group, ev.Resource.Resource, ev.Namespace, ev.Name}
}

// fold is one pending Folded line.
type fold struct {
	ev          watch.Event // the first folded update (resource, object, old resourceVersion)
	first, last time.Time
	lastRV      string
	count       int
	managers    []string
	paths       map[string]int
}

// NewFolder folds into one line per interval; interval <= 0 folds nothing.
func NewFolder(interval time.Duration) *Folder {
	return &Folder{interval: interval, hot: map[objectKey]*fold{}}
}

// Loop starts folding the updates of ev's object (ev is its HotLoop line).
func (f *Folder) Loop(ev *watch.Event) {
	if f == nil || f.interval <= 0 {
		return
	}
	k := keyOf(ev)
	if _, ok := f.hot[k]; !ok {
		f.hot[k] = nil
		f.order = append(f.order, k)
	}
}

// End stops folding ev's object (ev is its HotLoopEnded line) and returns its last Folded line,
// to print before ev.
func (f *Folder) End(ev *watch.Event) []watch.Event {
	if f == nil {
		return nil
	}
	k := keyOf(ev)
	out := f.flush(k)
	delete(f.hot, k)
	f.order = slices.DeleteFunc(f.order, func(o objectKey) bool { return o == k })
	return out
}

// Pass is what human output does with a line, in order: a HotLoop line starts folding its object
// (Loop) and a HotLoopEnded line ends it (End: its last Folded line first); a line marked as
// noise (Hidden) is not shown; an update of a hot object the output shows (shown) is folded
// (Fold). It appends to out the Folded lines to print before ev and says whether ev is shown.
func (f *Folder) Pass(out []watch.Event, ev *watch.Event, shown bool) ([]watch.Event, bool) {
	switch {
	case ev.Type == watch.HotLoop:
		f.Loop(ev)
	case ev.Type == watch.HotLoopEnded:
		out = append(out, f.End(ev)...)
	case Hidden(ev):
		return out, false
	case shown && ev.Type.IsObject():
		due, folded := f.Fold(ev)
		out = append(out, due...)
		if folded {
			return out, false
		}
	}
	return out, shown
}

// Fold takes an event on its way to human output. folded is true when it is an update of a hot
// object, counted into a Folded line instead of shown; before holds the Folded lines to print
// first: the object's pending one when its interval is over by ev's time, or when ev is another
// line about the object (a delete), so that lines keep their order.
func (f *Folder) Fold(ev *watch.Event) (before []watch.Event, folded bool) {
	if f == nil || len(f.hot) == 0 || !ev.Type.IsObject() {
		return nil, false
	}
	k := keyOf(ev)
	p, hot := f.hot[k]
	if !hot {
		return nil, false
	}
	// A resync or a relist's unchanged redelivery is not an update: shown as itself, after
	// what was folded before it.
	if ev.Type != watch.Updated || ev.Obj.Delta == watch.DeltaSync || (ev.Obj.OldResourceVersion != "" && ev.Obj.OldResourceVersion == ev.ResourceVersion) {
		return f.flush(k), false
	}
	if p != nil && ev.Time.Sub(p.first) >= f.interval {
		before = f.flush(k)
		p = nil
	}
	if p == nil {
		p = &fold{ev: *ev, first: ev.Time, paths: map[string]int{}}
		f.hot[k] = p
	}
	p.count++
	p.last, p.lastRV = ev.Time, ev.ResourceVersion
	names := managersOf(ev)
	for _, m := range names {
		if !slices.Contains(p.managers, m) {
			p.managers = append(p.managers, m)
		}
	}
	for _, c := range ev.Obj.Changes {
		if !c.Ignored && c.Path != "metadata.generation" {
			p.paths[c.Path]++
		}
	}
	f.Updates++
	return before, true
}

// Due returns the Folded lines whose interval is over by now.
func (f *Folder) Due(now time.Time) []watch.Event {
	if f == nil {
		return nil
	}
	var out []watch.Event
	for _, k := range f.order {
		if p := f.hot[k]; p != nil && now.Sub(p.first) >= f.interval {
			out = append(out, f.flush(k)...)
		}
	}
	return out
}

// Flush returns every pending Folded line (the run ends).
func (f *Folder) Flush() []watch.Event {
	if f == nil {
		return nil
	}
	var out []watch.Event
	for _, k := range f.order {
		out = append(out, f.flush(k)...)
	}
	return out
}

func (f *Folder) flush(k objectKey) []watch.Event {
	p := f.hot[k]
	if p == nil {
		return nil
	}
	f.hot[k] = nil
	f.Lines++
	paths := make([]string, 0, len(p.paths))
	for path := range p.paths {
		paths = append(paths, path)
	}
	// The most changed first: what flips in every update leads.
	slices.SortFunc(paths, func(a, b string) int {
		if p.paths[a] != p.paths[b] {
			return p.paths[b] - p.paths[a]
		}
		return strings.Compare(a, b)
	})
	ev := watch.Event{
		Type:            watch.Folded,
		Time:            p.last,
		Resource:        p.ev.Resource,
		Namespace:       p.ev.Namespace,
		Name:            p.ev.Name,
		Lifecycle:       watch.LifecycleInfo{FromResourceVersion: p.ev.Obj.OldResourceVersion},
		ResourceVersion: p.lastRV,
		HotLoop:         &watch.HotLoopInfo{Updates: p.count, Duration: p.last.Sub(p.first), Managers: p.managers, Fields: paths},
	}
	return []watch.Event{ev}
}

// managersOf names who made an update (the analysis step's attribution).
func managersOf(ev *watch.Event) []string {
	if ev.Obj.Attribution == nil {
		return nil
	}
	var out []string
	for _, m := range ev.Obj.Attribution.Managers {
		if !slices.Contains(out, m.Manager) {
			out = append(out, m.Manager)
		}
	}
	return out
}
