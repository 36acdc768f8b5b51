package printer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// HotLoop is the type of a hot-loop report (recording.HotLoop).
const HotLoop = recording.HotLoop

// HotLoopEnded is the type of the line that closes a HotLoop (recording.HotLoopEnded).
const HotLoopEnded = recording.HotLoopEnded

// HotLoops watches the event stream for hot loops (diff.HotLoopDetector) and makes their
// HotLoop and HotLoopEnded events. It is used from one goroutine.
type HotLoops struct {
	d *diff.HotLoopDetector
	// The object of each reported loop, by detector key, for its HotLoopEnded line.
	objects map[string]watch.Event
}

// NewHotLoops reports an object updated more than maxUpdates times within window, or by two
// managers taking turns (diff.MinAlternations hand-overs) within it. maxUpdates < 1 or
// window <= 0 turns it off.
func NewHotLoops(maxUpdates int, window time.Duration) *HotLoops {
	return &HotLoops{d: diff.NewHotLoopDetector(maxUpdates, window), objects: map[string]watch.Event{}}
}

// Ended returns the HotLoopEnded events of the loops that ended by now.
func (h *HotLoops) Ended(now time.Time) []watch.Event {
	if h == nil {
		return nil
	}
	var out []watch.Event
	for _, e := range h.d.Ended(now) {
		out = append(out, h.endEvent(e, now))
		delete(h.objects, e.Key)
	}
	return out
}

// Ongoing returns the loops still going (not ended), as HotLoopEnded-shaped events for the
// summary at exit.
func (h *HotLoops) Ongoing(now time.Time) []watch.Event {
	if h == nil {
		return nil
	}
	var out []watch.Event
	for _, e := range h.d.Ongoing() {
		out = append(out, h.endEvent(e, now))
	}
	return out
}

func (h *HotLoops) endEvent(e diff.HotLoopEnd, now time.Time) watch.Event {
	o := h.objects[e.Key]
	managers := make([]any, len(e.Managers))
	for i, m := range e.Managers {
		managers[i] = m
	}
	return watch.Event{
		Type: HotLoopEnded, Time: now, Resource: o.Resource, Namespace: o.Namespace, Name: o.Name, Key: o.Key,
		Items: e.Updates, Duration: e.Duration, Reason: e.Loop,
		Object: &unstructured.Unstructured{Object: map[string]any{"managers": managers, "deleted": e.Deleted}},
	}
}

// Observe feeds one event and returns the HotLoop event to print after it, or nil. Only
// changes count (IsChange): not resyncs, not a relist's unchanged objects.
func (h *HotLoops) Observe(ev *watch.Event) *watch.Event {
	if h == nil {
		return nil
	}
	key := ev.Namespace + "/" + ev.Name
	if ev.Namespace == "" {
		key = ev.Name
	}
	id := ev.Resource.String() + " " + key
	if ev.Type == watch.Deleted {
		h.d.Forget(id)
		return nil
	}
	// An update of ignored fields only (a heartbeat) is noise, not a loop.
	if !IsChange(ev) || ev.Ignored || h.d.MaxUpdates < 1 || h.d.Window <= 0 {
		return nil
	}
	u := diff.Update{At: ev.Time}
	changes := ev.Changes
	if changes == nil {
		changes = diff.Compute(ev.OldObject.Object, ev.Object.Object)
	}
	for _, m := range attributionOf(ev, changes).Managers {
		if !slices.Contains(u.Managers, m.Manager) {
			u.Managers = append(u.Managers, m.Manager)
		}
	}
	for _, c := range changes {
		if c.Ignored {
			continue
		}
		// The API server bumps it on every spec change: it would "flip" in every loop.
		if c.Path == "metadata.generation" {
			u.GenerationChanged = true
		} else {
			u.Paths = append(u.Paths, c.Path)
			u.Changes = append(u.Changes, c)
		}
	}
	u.Converging = diff.Converging(changes)
	r := h.d.Observe(id, u)
	if r == nil {
		return nil
	}
	h.objects[id] = watch.Event{Resource: ev.Resource, Namespace: ev.Namespace, Name: ev.Name, Key: key}
	managers := make([]any, len(r.Managers))
	for i, m := range r.Managers {
		managers[i] = m
	}
	fields := make([]any, len(r.Fields))
	for i, f := range r.Fields {
		fields[i] = f
	}
	// The report's lists travel in Object; Items, Duration and Reason hold the rest.
	return &watch.Event{
		Type: HotLoop, Time: ev.Time, Resource: ev.Resource,
		Namespace: ev.Namespace, Name: ev.Name, Key: key,
		Items: r.Updates, Duration: r.Window, Reason: r.Reason,
		Object: &unstructured.Unstructured{Object: map[string]any{"managers": managers, "fields": fields, "loop": r.Loop, "suggestion": r.Suggestion}},
	}
}

func hotLoopLists(ev *watch.Event) (managers, fields []string) {
	if ev.Object == nil {
		return []string{}, []string{}
	}
	return asStrings(ev.Object.Object["managers"]), asStrings(ev.Object.Object["fields"])
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func hotLoopString(ev *watch.Event, key string) string {
	if ev.Object == nil {
		return ""
	}
	s, _ := ev.Object.Object[key].(string)
	return s
}

// hotLoopFieldsShown is how many flipping fields the human line names.
const hotLoopFieldsShown = 5

func (p *Printer) hotLoopDetail(b *strings.Builder, ev *watch.Event) {
	managers, fields := hotLoopLists(ev)
	b.WriteString(Escape(ev.Key))
	b.WriteString("  ")
	var what string
	switch {
	case ev.Reason == "alternating" && len(managers) == 2:
		what = fmt.Sprintf("HOT LOOP: %s and %s taking turns, %d updates in %s", managers[0], managers[1], ev.Items, ev.Duration)
	case len(managers) > 0:
		what = fmt.Sprintf("HOT LOOP: %d updates in %s by %s", ev.Items, ev.Duration, strings.Join(managers, ", "))
	default:
		what = fmt.Sprintf("HOT LOOP: %d updates in %s", ev.Items, ev.Duration)
	}
	b.WriteString(p.paint(colorRed, Escape(what)))
	if len(fields) > 0 {
		shown := fields
		more := ""
		if len(shown) > hotLoopFieldsShown {
			more = fmt.Sprintf(" (+%d more)", len(shown)-hotLoopFieldsShown)
			shown = shown[:hotLoopFieldsShown]
		}
		b.WriteString("; flipping: ")
		b.WriteString(Escape(strings.Join(shown, ", ") + more))
	}
	if loop := hotLoopString(ev, "loop"); loop == diff.LoopSelf || loop == diff.LoopFight {
		b.WriteString(". ")
		b.WriteString(Escape(hotLoopString(ev, "suggestion")))
	}
}

func (p *Printer) hotLoopEndedDetail(b *strings.Builder, ev *watch.Event) {
	managers, _ := hotLoopLists(ev)
	b.WriteString(Escape(ev.Key))
	b.WriteString("  ")
	what := fmt.Sprintf("hot loop ended: %d updates in %s", ev.Items, ev.Duration.Round(time.Millisecond))
	if len(managers) > 0 {
		what += " by " + strings.Join(managers, ", ")
	}
	if ev.Reason != "" {
		what += " (" + ev.Reason + ")"
	}
	if ev.Object != nil && ev.Object.Object["deleted"] == true {
		what += "; the object was deleted"
	}
	b.WriteString(Escape(what))
}

// foldedDetail writes a Folded line: the updates of an object in a hot loop that human output
// counted instead of showing, `demo/loop  rv=2301→2813  512 more updates in 1s by
// widget-operator, flipping status.lastReconciled`.
func (p *Printer) foldedDetail(b *strings.Builder, ev *watch.Event) {
	managers, fields := hotLoopLists(ev)
	name := ev.Name
	if ev.Namespace != "" {
		name = ev.Namespace + "/" + ev.Name
	}
	what := fmt.Sprintf("%s  rv=%s→%s  %d more %s", name, ev.FromResourceVersion, ev.ResourceVersion, ev.Items, pluralWord(ev.Items, "update", "updates"))
	if ev.Duration > 0 {
		what += " in " + shortDuration(ev.Duration)
	}
	if len(managers) > 0 {
		what += " by " + strings.Join(managers, ", ")
	}
	if len(fields) > 0 {
		more := ""
		if len(fields) > hotLoopFieldsShown {
			more = fmt.Sprintf(" (+%d more)", len(fields)-hotLoopFieldsShown)
			fields = fields[:hotLoopFieldsShown]
		}
		what += ", flipping " + strings.Join(fields, ", ") + more
	}
	b.WriteString(Escape(what))
	b.WriteString("  ")
	b.WriteString(p.paint(colorDim, "[hot loop: folded; --fold=off shows each]"))
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// shortDuration rounds a duration for a line: milliseconds under a second, tenths above.
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
