package printer

import (
	"fmt"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// lifecycleDetail writes the detail of a line about the informers and the plugin rather than
// an object: lists, watches, syncs, relists, reconciles, errors, the API's figures.
func (p *Printer) lifecycleDetail(b *strings.Builder, ev *watch.Event) {
	switch ev.Type {
	case watch.List:
		fmt.Fprintf(b, "LIST returned %d items at rv=%s in %s", ev.Lifecycle.Items, Escape(ev.ResourceVersion), ms(ev.Lifecycle.Duration))
		if ev.Lifecycle.Pages > 1 {
			fmt.Fprintf(b, ", %d pages", ev.Lifecycle.Pages)
		}
		if ev.Lifecycle.Initial {
			b.WriteString(" (initial list)")
		}
		if ev.Stats.APF != nil {
			b.WriteString("; " + Escape(apfText(ev.Stats.APF)))
		}
	case watch.Watch:
		from := "now"
		if ev.ResourceVersion != "" {
			from = "rv=" + Escape(ev.ResourceVersion)
		}
		fmt.Fprintf(b, "WATCH from %s", from)
		if ev.Lifecycle.SendInitialEvents {
			b.WriteString(" (streaming list: the server sends every object first)")
		}
		if ev.Stats.APF != nil {
			b.WriteString("; " + Escape(apfText(ev.Stats.APF)))
		}
	case watch.WatchClosed:
		fmt.Fprintf(b, "watch ended at rv=%s: %s", Escape(ev.ResourceVersion), Escape(ev.Lifecycle.Reason))
	case watch.Bookmark:
		fmt.Fprintf(b, "bookmark rv=%s", Escape(ev.ResourceVersion))
		if ev.Lifecycle.InitialEventsEnd {
			b.WriteString(" (end of the streaming list)")
		}
	case watch.Synced:
		syncedDetail(b, ev)
	case watch.Resync:
		fmt.Fprintf(b, "periodic resync: %d cached objects redelivered as Sync", ev.Lifecycle.Items)
	case watch.Relist:
		fmt.Fprintf(b, "RELIST from rv=%s to rv=%s: %d added, %d updated, %d deleted, %d unchanged",
			Escape(ev.Lifecycle.FromResourceVersion), Escape(ev.ResourceVersion),
			ev.Lifecycle.Counts.Added, ev.Lifecycle.Counts.Updated, ev.Lifecycle.Counts.Deleted, ev.Lifecycle.Counts.Unchanged)
		if ev.Lifecycle.Reason != "" {
			fmt.Fprintf(b, " (after: %s)", Escape(ev.Lifecycle.Reason))
		}
	case watch.Dropped:
		fmt.Fprintf(b, "%d lines not shown: the output did not keep up (adds, updates, reconciles; never a delete or a lifecycle line; -o json and --record keep everything)", ev.Lifecycle.Items)
	case watch.Reconciled:
		p.reconciledDetail(b, ev)
	case watch.Error:
		if ev.Lifecycle.Verb != "" {
			b.WriteString(Escape(ev.Lifecycle.Verb) + " ")
		}
		fmt.Fprintf(b, "%s: %s", Escape(ev.Lifecycle.Reason), Escape(ev.Lifecycle.Message))
		if ev.Lifecycle.Backoff > 0 {
			fmt.Fprintf(b, " (tried %s after the previous failure)", roundMs(ev.Lifecycle.Backoff))
		}
	case watch.Recovered:
		b.WriteString(Escape(ev.Lifecycle.Message))
		if ev.Lifecycle.Backoff > 0 {
			fmt.Fprintf(b, " (tried %s after the previous failure)", roundMs(ev.Lifecycle.Backoff))
		}
	case watch.ApiStats:
		apiStatsDetail(b, ev)
	case watch.Throttled:
		throttledDetail(b, ev)
	}
}

// syncedDetail writes a Synced line: how many objects, how they were listed, and whether a
// named object was missing.
func syncedDetail(b *strings.Builder, ev *watch.Event) {
	fmt.Fprintf(b, "cache synced: %d objects in %s", ev.Lifecycle.Items, ms(ev.Lifecycle.Duration))
	switch {
	case ev.Lifecycle.ListMode == "watchlist":
		b.WriteString(" by a streaming list")
	case ev.Lifecycle.ListMode == "list" && ev.Lifecycle.FellBack:
		b.WriteString(" by LIST (the streaming list failed; fell back)")
	case ev.Lifecycle.ListMode == "list":
		b.WriteString(" by LIST")
	}
	if nf := ev.Lifecycle.NotFound; nf != nil {
		// kubectl's words for a missing object, and that the watch goes on.
		fmt.Fprintf(b, "; %s %q not found", Escape(ev.Resource.String()), Escape(nf.Name))
		if nf.Namespace != "" {
			fmt.Fprintf(b, " in namespace %q", Escape(nf.Namespace))
		}
		b.WriteString(" (yet): waiting for it")
	}
}

// reconciledDetail writes a Reconciled line of the simulated workqueue.
func (p *Printer) reconciledDetail(b *strings.Builder, ev *watch.Event) {
	result := p.paint(colorGreen, "ok")
	if ev.Queued.Failed {
		result = p.paint(colorRed, "failed, requeued with backoff")
	}
	fmt.Fprintf(b, "%s  waited %s, worked %s, requeues %d: %s", Escape(ev.Key), ms(ev.Queued.Wait), ms(ev.Queued.Work), ev.Queued.Requeues, result)
	if ev.Obj.Queue != nil {
		fmt.Fprintf(b, "  queue=%d", ev.Obj.Queue.Depth)
	}
	if s := triggerSummary(ev); s != "" {
		b.WriteString("  ")
		b.WriteString(s)
	}
}
