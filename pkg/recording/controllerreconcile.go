package recording

import (
	"fmt"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// controllerReconcileRecord is a reconcile read from a controller's log (docs/json.md,
// ControllerReconcile). The head's resource is the watched resource of the reconciled object,
// empty when it is not watched.
type controllerReconcileRecord struct {
	eventHead
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Key         string `json:"key"`
	Controller  string `json:"controller"`
	ReconcileID string `json:"reconcileID,omitempty"`
	// ObjectKind is the object's kind as the log names it ("" when it does not).
	ObjectKind string `json:"objectKind,omitempty"`
	// Result: ok, error, requeue, requeueAfter or unknown; Message: a failed one's error.
	Result              string   `json:"result"`
	Message             string   `json:"message,omitempty"`
	RequeueAfterSeconds *float64 `json:"requeueAfterSeconds,omitempty"`
	// DurationSeconds: how long it took, when the log says.
	DurationSeconds *float64        `json:"durationSeconds,omitempty"`
	TriggerCount    int             `json:"triggerCount"`
	Triggers        []triggerRecord `json:"triggers,omitempty"`
	// Reason and ReasonMessage: why a reconcile with no trigger ran.
	Reason        string `json:"reason,omitempty"`
	ReasonMessage string `json:"reasonMessage,omitempty"`
	Source        string `json:"source"`
	Format        string `json:"format"`
	Lines         int    `json:"lines"`
	// Bounds: logged (its start and end lines), lines (its first and last lines seen).
	Bounds string `json:"bounds,omitempty"`
	// FilteredTriggers: the triggers a --predicate keeps out of the workqueue.
	FilteredTriggers int `json:"filteredTriggers,omitempty"`
	// UntrustedTime: a timestamp of the log was not trusted; time is when it was read.
	UntrustedTime bool `json:"untrustedTime,omitempty"`
}

func controllerReconcileOf(ev *watch.Event) any {
	r := ev.Reconcile
	if r == nil {
		r = &watch.ReconcileInfo{}
	}
	rec := controllerReconcileRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key,
		Controller: r.Controller, ReconcileID: r.ReconcileID, ObjectKind: r.Kind, Result: r.Result, Message: r.Error,
		TriggerCount: ev.Queued.TriggerCount, Triggers: triggersOf(ev.Queued.Triggers), Reason: ev.Lifecycle.Reason, ReasonMessage: r.ReasonMessage,
		Source: r.Source, Format: r.Format, Lines: r.Lines, FilteredTriggers: r.FilteredTriggers, UntrustedTime: r.UntrustedTime, Bounds: r.Bounds,
	}
	if r.RequeueAfter > 0 {
		rec.RequeueAfterSeconds = ptr(r.RequeueAfter.Seconds())
	}
	if r.DurationKnown {
		rec.DurationSeconds = ptr(r.Duration.Seconds())
	}
	return rec
}

// event is the inverse of controllerReconcileOf.
func (r *controllerReconcileRecord) event(ev *watch.Event) error {
	if r.Result == "" {
		return fmt.Errorf(`ControllerReconcile line without "result"`)
	}
	ev.Namespace, ev.Name, ev.Key, ev.Lifecycle.Reason = r.Namespace, r.Name, r.Key, r.Reason
	ev.Resource.Namespaced = r.Namespace != ""
	info := &watch.ReconcileInfo{Controller: r.Controller, ReconcileID: r.ReconcileID, Kind: r.ObjectKind, Result: r.Result,
		Error: r.Message, ReasonMessage: r.ReasonMessage, Source: r.Source, Format: r.Format, Lines: r.Lines,
		FilteredTriggers: r.FilteredTriggers, UntrustedTime: r.UntrustedTime, Bounds: r.Bounds}
	if r.RequeueAfterSeconds != nil {
		info.RequeueAfter = time.Duration(*r.RequeueAfterSeconds * float64(time.Second))
	}
	if r.DurationSeconds != nil {
		info.Duration, info.DurationKnown = time.Duration(*r.DurationSeconds*float64(time.Second)), true
	}
	ev.Reconcile = info
	ts, err := triggersFrom(r.Triggers)
	if err != nil {
		return err
	}
	ev.Queued.TriggerCount, ev.Queued.Triggers = r.TriggerCount, ts
	return nil
}
