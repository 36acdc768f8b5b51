package printer

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// History is one object's life as a compact table (`replay --history`): one row per event about
// it (adds, updates, deletes, reconciles, hot-loop diagnoses), with who made each update and what
// it changed. Changes under an --ignore-path are left out and counted. In a hot loop (after its
// HotLoop row, until its HotLoopEnded row), consecutive updates by the same writers that changed
// the same fields fold into one row, as human output folds them (unless Fold is off): "Updated
// ×N over D", the resourceVersions from the first to the last, each field from its first old
// value to its last new one. It is used from one goroutine; Write prints the table at the end.
type History struct {
	p         *Printer
	rows      [][]string
	resources map[string]bool
	// Fold folds a hot loop's alike updates (replay's --fold; off: one row per event).
	Fold bool
	// NoState leaves the STATE column out (a narrow view: top's drill into an object).
	NoState bool
	// MaxRows, when > 0, keeps only the newest rows (a live view that may run for hours).
	MaxRows int
	// Wide shows each STATE whole (replay --history -o wide); else it is cut at
	// historyStateWidth runes, so that a row fits a terminal.
	Wide bool
	// The newest update's BY and CHANGES, for Last.
	lastBy, lastChanges string
	// inLoop: between a HotLoop row and its HotLoopEnded row; fold is the row updates fold into.
	inLoop bool
	fold   *historyFold
}

// historyFold is a row of folded updates.
type historyFold struct {
	row         int
	res, key    string // the resource, and the writers and changed fields that make an update alike
	n           int
	first, last time.Time
	firstOld    string        // the first update's old resourceVersion
	changes     []diff.Change // each field's first old and last new value
}

// historyChangesShown is how many changes a row names; the rest are counted.
const historyChangesShown = 4

// historyStateWidth is the most a STATE cell shows (unless Wide): a kind with many printer
// columns, or a long condition message, would push BY and CHANGES off a terminal. The human
// line and -o json carry the whole state.
const historyStateWidth = 64

// clip cuts s to at most n runes, the last one "…" when it was longer.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// NewHistory returns an empty history; opts are the printer options it renders values with
// (time column, secrets).
func NewHistory(opts Options) *History {
	opts.Output, opts.Color, opts.Diff = "", false, "inline"
	return &History{p: New(io.Discard, opts), resources: map[string]bool{}}
}

// Len is the number of rows.
func (h *History) Len() int { return len(h.rows) }

// Last is the newest update's writers and changes, as its row says them (values redacted as
// they are there); "" before the first update.
func (h *History) Last() (by, changes string) { return h.lastBy, h.lastChanges }

// Add takes one event about the object.
func (h *History) Add(ev *watch.Event) {
	p := h.p
	if p.start.IsZero() {
		p.start = ev.Time
	}
	res := ev.Resource.String()
	h.resources[res] = true
	row := []string{p.timeColumn(ev.Time), string(ev.Type), "", "", "", ""}
	var what string
	var fold *historyFold // an update that may start a fold, or go into one
	switch {
	case ev.Type.IsObject():
		row[1] = historyEvent(ev)
		switch {
		case ev.Type == watch.Updated && ev.Obj.OldResourceVersion != ev.ResourceVersion:
			row[2] = ev.Obj.OldResourceVersion + "→" + ev.ResourceVersion
		default:
			row[2] = ev.ResourceVersion
		}
		var st strings.Builder
		p.writeState(&st, p.stateOf(ev))
		row[3] = strings.ReplaceAll(strings.TrimSpace(st.String()), "  ", ", ")
		if u := p.updateOf(ev); u != nil {
			var by strings.Builder
			p.writeAttribution(&by, u.attribution)
			row[4] = strings.TrimPrefix(strings.TrimSpace(by.String()), "by ")
			what = historyChanges(u.changes, false)
			h.lastBy, h.lastChanges = Escape(row[4]), Escape(what)
			if h.Fold && h.inLoop && ev.Obj.Delta == watch.DeltaUpdated {
				fold = &historyFold{res: res, key: row[4] + "\x00" + changedPaths(u.changes), n: 1, first: ev.Time, last: ev.Time,
					firstOld: ev.Obj.OldResourceVersion, changes: slices.Clone(u.changes)}
				if f := h.fold; f != nil && f.row == len(h.rows)-1 && f.res == fold.res && f.key == fold.key {
					h.foldInto(f, ev, u.changes, row[3])
					return
				}
			}
		}
	case ev.Type == watch.HotLoop:
		h.inLoop = true
		var b strings.Builder
		p.hotLoopDetail(&b, ev)
		what = strings.TrimPrefix(b.String(), Escape(ev.Key)+"  ")
	case ev.Type == watch.HotLoopEnded:
		h.inLoop = false
		var b strings.Builder
		p.hotLoopEndedDetail(&b, ev)
		what = strings.TrimPrefix(b.String(), Escape(ev.Key)+"  ")
	case ev.Type == watch.Reconciled:
		what = fmt.Sprintf("waited %s, worked %s, requeues %d", ms(ev.Queued.Wait), ms(ev.Queued.Work), ev.Queued.Requeues)
		if ev.Queued.Failed {
			what += ": failed, requeued with backoff"
		}
		if s := triggerSummary(ev); s != "" {
			what += "; " + s
		}
	default:
		return
	}
	row[5] = what
	for i := range row {
		row[i] = Escape(row[i])
	}
	h.rows = append(h.rows, append([]string{res}, row...))
	if h.MaxRows > 0 && len(h.rows) > h.MaxRows {
		h.rows = slices.Delete(h.rows, 0, len(h.rows)-h.MaxRows)
	}
	h.fold = fold
	if fold != nil {
		fold.row = len(h.rows) - 1
	}
}

// foldInto folds one more alike update (its changes, its state) into f's row.
func (h *History) foldInto(f *historyFold, ev *watch.Event, changes []diff.Change, state string) {
	f.n++
	f.last = ev.Time
	for i := range f.changes {
		for _, c := range changes {
			if c.Path == f.changes[i].Path {
				f.changes[i].New, f.changes[i].HasNew, f.changes[i].Sensitive = c.New, c.HasNew, f.changes[i].Sensitive || c.Sensitive
			}
		}
	}
	row := h.rows[f.row]
	row[2] = Escape(fmt.Sprintf("Updated ×%d over %s", f.n, ms(f.last.Sub(f.first))))
	row[3] = Escape(f.firstOld + "→" + ev.ResourceVersion)
	row[4] = Escape(state)
	row[6] = Escape(historyChanges(f.changes, true))
}

// changedPaths names the fields an update changed (the ignored ones too), in order.
func changedPaths(changes []diff.Change) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.Path)
		b.WriteByte(0)
	}
	return b.String()
}

// historyEvent names an object event with what caused it, when that is not a watch event.
func historyEvent(ev *watch.Event) string {
	t := string(ev.Type)
	switch {
	case ev.Obj.Tombstone:
		return t + " (tombstone)"
	case ev.Obj.Delta == watch.DeltaSync:
		return t + " (resync)"
	case ev.Obj.Delta == watch.DeltaReplaced && ev.Obj.InitialList:
		return t + " (initial list)"
	case ev.Obj.Delta == watch.DeltaReplaced:
		return t + " (relist)"
	}
	return t
}

// historyChanges is a row's CHANGES column: the first changes, the rest and the ignored counted.
// folded: a folded row's, each field from its first old value to its last new one, with "… →"
// between when they are the same (it changed, and changed back).
func historyChanges(changes []diff.Change, folded bool) string {
	var parts []string
	ignored, more := 0, 0
	for _, c := range changes {
		switch {
		case c.Ignored:
			ignored++
		case len(parts) == historyChangesShown:
			more++
		default:
			old, cur := humanValue(c.Old, c.HasOld, c.Sensitive), humanValue(c.New, c.HasNew, c.Sensitive)
			if folded && old == cur {
				old += " → …"
			}
			parts = append(parts, c.Path+": "+old+" → "+cur)
		}
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("(+%d more)", more))
	}
	if ignored > 0 {
		parts = append(parts, fmt.Sprintf("(+%d ignored)", ignored))
	}
	if len(changes) == 0 {
		return "(no field changed)"
	}
	return strings.Join(parts, "; ")
}

// Write prints the table: a RESOURCE column only when the name is found in several resources.
func (h *History) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	several := len(h.resources) > 1
	header := []string{"RESOURCE", "TIME", "EVENT", "RV", "STATE", "BY", "CHANGES"}
	for i, row := range append([][]string{header}, h.rows...) {
		if i > 0 && !h.Wide {
			row = slices.Clone(row)
			row[4] = clip(row[4], historyStateWidth)
		}
		if !several {
			row = row[1:]
		}
		if h.p.opts.Timestamps == "none" {
			row = append(row[:len(row)-6:len(row)-6], row[len(row)-5:]...)
		}
		if h.NoState { // STATE is the third column from the end
			row = append(row[:len(row)-3:len(row)-3], row[len(row)-2:]...)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}
