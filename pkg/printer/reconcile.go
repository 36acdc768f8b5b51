package printer

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// shortReconcileID is a reconcileID as human lines show it: its first 8 characters (a UUID's
// first group); the JSON has it whole.
func shortReconcileID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// controllerReconcileDetail renders a reconcile read from a controller's log: the object, the
// controller and its reconcile, the result (an error in red), how long it took, and what
// triggered it or why it ran without a trigger.
func (p *Printer) controllerReconcileDetail(b *strings.Builder, ev *watch.Event) {
	r := ev.Reconcile
	if r == nil {
		r = &watch.ReconcileInfo{}
	}
	fmt.Fprintf(b, "%s  by %s", Escape(ev.Key), Escape(r.Controller))
	if id := shortReconcileID(r.ReconcileID); id != "" {
		fmt.Fprintf(b, " (reconcile %s)", Escape(id))
	}
	b.WriteString(": ")
	switch r.Result {
	case "error":
		b.WriteString(p.paint(colorRed, "error: "+Escape(r.Error)))
	case "ok":
		b.WriteString(p.paint(colorGreen, "ok"))
	case "requeueAfter":
		fmt.Fprintf(b, "requeue after %s", r.RequeueAfter)
	default:
		b.WriteString(Escape(r.Result))
	}
	if r.DurationKnown {
		// A reconcile often takes a few milliseconds: a tenth of one is kept.
		fmt.Fprintf(b, " in %s", r.Duration.Round(100*time.Microsecond))
	}
	if r.UntrustedTime {
		b.WriteString(" (its log's time was far from this machine's: the time it was read stands for it)")
	}
	if r.Bounds == "lines" {
		// A controller logging at info: its start and end are not in the log.
		if r.Lines == 1 {
			b.WriteString(" (from 1 line of it; its start and end not logged)")
		} else {
			fmt.Fprintf(b, " (from %d lines of it; its start and end not logged)", r.Lines)
		}
	}
	if s := triggerSummary(ev); s != "" {
		b.WriteString("; " + s)
	} else if r.ReasonMessage != "" {
		b.WriteString("; no trigger: " + Escape(r.ReasonMessage))
	}
}

// ControllerReconcileText words a ControllerReconcile line as its human line does after the
// type and resource, without color: `demo/shop  by widget (reconcile 6af6b3d9): error: boom in
// 14.6ms; trigger: Updated rv=6277 (by widget-operator)` (the HTML report's histories).
func ControllerReconcileText(ev *watch.Event) string {
	var b strings.Builder
	(&Printer{}).controllerReconcileDetail(&b, ev)
	return b.String()
}
