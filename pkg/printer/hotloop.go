package printer

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// hotLoopFieldsShown is how many flipping fields the human line names.
const hotLoopFieldsShown = 5

func (p *Printer) hotLoopDetail(b *strings.Builder, ev *watch.Event) {
	h := ev.HotLoopInfo()
	managers, fields := h.Managers, h.Fields
	b.WriteString(Escape(ev.Key))
	b.WriteString("  ")
	var what string
	switch {
	case h.Reason == "alternating" && len(managers) == 2:
		what = fmt.Sprintf("HOT LOOP: %s and %s taking turns, %d updates in %s", managers[0], managers[1], h.Updates, h.Window)
	case len(managers) > 0:
		what = fmt.Sprintf("HOT LOOP: %d updates in %s by %s", h.Updates, h.Window, strings.Join(managers, ", "))
	default:
		what = fmt.Sprintf("HOT LOOP: %d updates in %s", h.Updates, h.Window)
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
	if h.Loop == diff.LoopSelf || h.Loop == diff.LoopFight {
		b.WriteString(". ")
		b.WriteString(Escape(h.Suggestion))
	}
}

func (p *Printer) hotLoopEndedDetail(b *strings.Builder, ev *watch.Event) {
	h := ev.HotLoopInfo()
	b.WriteString(Escape(ev.Key))
	b.WriteString("  ")
	b.WriteString(Escape(HotLoopEndedText(h)))
}

// HotLoopEndedText words how a hot loop ended, unescaped: `hot loop ended: 512 updates in 3s by
// widget-operator (self)`.
func HotLoopEndedText(h watch.HotLoopInfo) string {
	s := fmt.Sprintf("hot loop ended: %d updates in %s", h.Updates, h.Duration.Round(time.Millisecond))
	if len(h.Managers) > 0 {
		s += " by " + strings.Join(h.Managers, ", ")
	}
	if h.Loop != "" {
		s += " (" + h.Loop + ")"
	}
	if h.Deleted {
		s += "; the object was deleted"
	}
	return s
}

// foldedDetail writes a Folded line: the updates of an object in a hot loop that human output
// counted instead of showing, `demo/loop  rv=2301→2813  512 more updates in 1s by
// widget-operator, flipping status.lastReconciled`.
func (p *Printer) foldedDetail(b *strings.Builder, ev *watch.Event) {
	h := ev.HotLoopInfo()
	managers, fields := h.Managers, h.Fields
	name := ev.Name
	if ev.Namespace != "" {
		name = ev.Namespace + "/" + ev.Name
	}
	what := fmt.Sprintf("%s  rv=%s→%s  %d more %s", name, ev.Lifecycle.FromResourceVersion, ev.ResourceVersion, h.Updates, pluralWord(h.Updates, "update", "updates"))
	if h.Duration > 0 {
		what += " in " + shortDuration(h.Duration)
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
