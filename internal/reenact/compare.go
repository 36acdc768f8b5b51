package reenact

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Tally is what one run (the original recording or the reenactment's) shows: updates per
// object and per writer, and its hot loops.
type Tally struct {
	// Objects: updates per object, "widgets.example.com ns/name" (the original's namespaces
	// mapped to the reenactment's).
	Objects map[string]int
	// Writers: updates per field manager ("(unknown)" when nobody can be named).
	Writers map[string]int
	// HotLoops: each object's first HotLoop, as "self by widget-operator: status.lastReconciled".
	HotLoops map[string]string
	// Reconciles: the controller's reconciles per object, "ns/name" (mapped as Objects), from
	// the ControllerReconcile lines its log gave (--controller-logs).
	Reconciles map[string]int
	// Updates is the number of updates; Span from the first object line to the last.
	Updates int
	Span    time.Duration
}

// NewTally counts events; mapNS maps their namespaces (nil: kept).
func NewTally(events []watch.Event, mapNS func(string) string) *Tally {
	t := &Tally{Objects: map[string]int{}, Writers: map[string]int{}, HotLoops: map[string]string{}, Reconciles: map[string]int{}}
	if mapNS == nil {
		mapNS = func(ns string) string { return ns }
	}
	var first, last time.Time
	for i := range events {
		ev := &events[i]
		key := objectKey(ev, mapNS)
		switch {
		case ev.Type == watch.HotLoop && ev.HotLoop != nil:
			if _, seen := t.HotLoops[key]; !seen {
				h := ev.HotLoop
				t.HotLoops[key] = fmt.Sprintf("%s by %s: %s", h.Loop, strings.Join(h.Managers, ", "), strings.Join(h.Fields, ", "))
			}
		case ev.Type == watch.ControllerReconcile:
			t.Reconciles[mapNS(ev.Namespace)+"/"+ev.Name]++
		case ev.Type.IsObject():
			if first.IsZero() {
				first = ev.Time
			}
			last = ev.Time
			if ev.Type != watch.Updated || ev.Obj.Delta == watch.DeltaSync || ev.ResourceVersion == ev.Obj.OldResourceVersion || ev.Obj.Object == nil || ev.Obj.OldObject == nil {
				continue
			}
			a := diff.Attribute(ev.Obj.OldObject.Object, ev.Obj.Object.Object, nil)
			if a.NoOp {
				continue
			}
			writer := "(unknown)"
			if len(a.Managers) > 0 {
				writer = a.Managers[0].Manager
			}
			t.Objects[key]++
			t.Writers[writer]++
			t.Updates++
		}
	}
	t.Span = last.Sub(first)
	return t
}

func objectKey(ev *watch.Event, mapNS func(string) string) string {
	gr := ev.Resource.Resource
	if ev.Resource.Group != "" {
		gr += "." + ev.Resource.Group
	}
	if ev.Namespace == "" {
		return gr + " " + ev.Name
	}
	return gr + " " + mapNS(ev.Namespace) + "/" + ev.Name
}

// Compare writes what differs between the original run and the reenactment: updates per
// object and per writer, the hot loops found in one and not the other, and how many updates
// the managers under test made in each (the writes a fix saved, or added). When either run
// has its controller's reconciles (ControllerReconcile lines), reconciles per object too.
func Compare(w io.Writer, original, reenacted *Tally, underTest []string) {
	fmt.Fprintf(w, "compare: the original recording (%s of object lines) and the reenactment (%s)\n", original.Span.Round(time.Millisecond), reenacted.Span.Round(time.Millisecond))
	table := func(title string, a, b map[string]int) {
		fmt.Fprintf(w, "  %-52s %9s %9s\n", title, "original", "reenacted")
		for _, k := range slices.Sorted(maps.Keys(union(a, b))) {
			fmt.Fprintf(w, "  %-52s %9d %9d\n", printer.Escape(k), a[k], b[k])
		}
	}
	table("updates per object", original.Objects, reenacted.Objects)
	table("updates per writer", original.Writers, reenacted.Writers)
	if len(original.Reconciles)+len(reenacted.Reconciles) > 0 {
		table("reconciles per object (controller's log)", original.Reconciles, reenacted.Reconciles)
	}
	for _, k := range slices.Sorted(maps.Keys(unionS(original.HotLoops, reenacted.HotLoops))) {
		o, inO := original.HotLoops[k]
		r, inR := reenacted.HotLoops[k]
		// Names, managers and fields come from recordings, which may come from anyone.
		k, o, r = printer.Escape(k), printer.Escape(o), printer.Escape(r)
		switch {
		case inO && !inR:
			fmt.Fprintf(w, "  hot loop gone: %s (%s) is in the original, not in the reenactment\n", k, o)
		case inR && !inO:
			fmt.Fprintf(w, "  hot loop new: %s (%s) is in the reenactment, not in the original\n", k, r)
		default:
			fmt.Fprintf(w, "  hot loop in both: %s (original: %s; reenacted: %s)\n", k, o, r)
		}
	}
	if len(original.HotLoops)+len(reenacted.HotLoops) == 0 {
		fmt.Fprintln(w, "  hot loops: none in either")
	}
	for _, m := range underTest {
		o, r := original.Writers[m], reenacted.Writers[m]
		m = printer.Escape(m)
		switch {
		case r < o:
			fmt.Fprintf(w, "  writes saved: %s made %d updates in the original, %d in the reenactment (%d fewer)\n", m, o, r, o-r)
		case r > o:
			fmt.Fprintf(w, "  writes added: %s made %d updates in the original, %d in the reenactment (%d more)\n", m, o, r, r-o)
		default:
			fmt.Fprintf(w, "  writes: %s made %d updates in each\n", m, o)
		}
	}
}

func union(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	for k, v := range b {
		out[k] += v
	}
	return out
}

func unionS(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
