package printer

import (
	"slices"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Shows reports whether p prints anything for ev, so that hidden events (bookmarks and
// reconciles in human output, unless asked for) neither fill an outbox nor count as dropped.
func (p *Printer) Shows(ev *watch.Event) bool {
	omit, noFinalAPIStats := p.Omits()
	return !slices.Contains(omit, ev.Type) && (ev.Type != watch.ApiStats || !ev.Stats.Final || !noFinalAPIStats)
}

// Omits is what Shows leaves out, as a table: the line types p never shows, and whether it
// leaves out the run's last ApiStats lines (the others it shows).
func (p *Printer) Omits() (types []watch.Type, finalAPIStats bool) {
	if !p.opts.Output.IsHuman() {
		if p.opts.OmitReconciles {
			types = append(types, watch.Reconciled)
		}
		return types, false
	}
	if !p.opts.ShowBookmarks {
		types = append(types, watch.Bookmark)
	}
	if !p.opts.ShowReconciles {
		types = append(types, watch.Reconciled)
	}
	return types, !p.opts.ShowAPIStats
}
