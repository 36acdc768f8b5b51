package printer

import "github.com/kubectl-informer/kubectl-informer/pkg/watch"

// Shows reports whether p prints anything for ev, so that hidden events (bookmarks and
// reconciles in human output, unless asked for) neither fill an outbox nor count as dropped.
func (p *Printer) Shows(ev *watch.Event) bool {
	if !p.opts.Output.IsHuman() {
		return ev.Type != watch.Reconciled || !p.opts.OmitReconciles
	}
	switch ev.Type {
	case watch.Bookmark:
		return p.opts.ShowBookmarks
	case watch.Reconciled:
		return p.opts.ShowReconciles
	case watch.ApiStats:
		return !ev.Stats.Final || p.opts.ShowAPIStats
	}
	return true
}
