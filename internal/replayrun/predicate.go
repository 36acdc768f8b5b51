package replayrun

import (
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// predicateCheck applies `replay --predicate` to a recording: object lines the predicates drop
// are marked filtered, and each recorded reconcile is checked against its triggers: one whose
// every trigger would have been filtered would not have run.
type predicateCheck struct {
	preds []watch.Predicate
	// filtered: resource, resourceVersion and delta of every object event, and whether the
	// predicates drop it (a resync has its object's resourceVersion, so the delta is needed).
	filtered map[string]bool

	reconciles, saved, unknown int
}

func newPredicateCheck(ps []watch.Predicate) *predicateCheck {
	return &predicateCheck{preds: ps, filtered: map[string]bool{}}
}

func triggerID(res, rv string, d watch.Delta) string { return res + " " + rv + " " + string(d) }

// observe sees every line of the recording, in order, before replay's filters.
func (c *predicateCheck) observe(ev *watch.Event) {
	switch {
	case ev.Type.IsObject():
		ev.Obj.Filtered = watch.Filter(c.preds, ev)
		c.filtered[triggerID(ev.Resource.String(), ev.ResourceVersion, ev.Obj.Delta)] = ev.Obj.Filtered != ""
	case ev.Type == watch.Reconciled:
		c.reconciles++
		c.reconcile(ev)
	}
}

func (c *predicateCheck) reconcile(ev *watch.Event) {
	// A retry after a failure runs whatever its triggers were.
	if ev.Queued.Requeue || ev.Queued.TriggerCount == 0 {
		return
	}
	for _, t := range ev.Queued.Triggers {
		drop, known := c.filtered[triggerID(ev.Resource.String(), t.ResourceVersion, t.Delta)]
		if known && !drop {
			return // one trigger passes: the reconcile runs
		}
		if !known {
			c.unknown++
			return
		}
	}
	if len(ev.Queued.Triggers) < ev.Queued.TriggerCount {
		c.unknown++ // the triggers the recording left out may pass
		return
	}
	c.saved++
}

// report is the summary's account of the predicates, said as list.
func (c *predicateCheck) report(list string) *summary.PredicateReport {
	return &summary.PredicateReport{Predicates: list, Replay: true,
		Reconciles: c.reconciles, Saved: c.saved, Unknown: c.unknown}
}
