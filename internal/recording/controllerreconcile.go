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
	// FilteredTriggers: the triggers a --predicate keeps out of the workqueue.
	FilteredTriggers int `json:"filteredTriggers,omitempty"`
}

func controllerReconcileOf(ev *watch.Event) any {
	r := ev.Reconcile
	if r == nil {
		r = &watch.ReconcileInfo{}
	}
	rec := controllerReconcileRecord{
		eventHead: headOf(ev), Namespace: ev.Namespace, Name: ev.Name, Key: ev.Key,
		Controller: r.Controller, ReconcileID: r.ReconcileID, ObjectKind: r.Kind, Result: r.Result, Message: r.Error,
		TriggerCount: ev.TriggerCount, Triggers: triggersOf(ev.Triggers), Reason: ev.Reason, ReasonMessage: r.ReasonMessage,
		Source: r.Source, Format: r.Format, Lines: r.Lines, FilteredTriggers: r.FilteredTriggers,
	}
	if r.RequeueAfter > 0 {
		rec.RequeueAfterSeconds = ptr(r.RequeueAfter.Seconds())
	}
	if r.DurationKnown {
		rec.DurationSeconds = ptr(r.Duration.Seconds())
	}
	return rec
}

// controllerReconcileWire are the wire fields only ControllerReconcile lines have.
type controllerReconcileWire struct {
	ReconcileID         string   `json:"reconcileID"`
	ObjectKind          string   `json:"objectKind"`
	Result              string   `json:"result"`
	RequeueAfterSeconds *float64 `json:"requeueAfterSeconds"`
	ReasonMessage       string   `json:"reasonMessage"`
	Source              string   `json:"source"`
	Format              string   `json:"format"`
	Lines               int      `json:"lines"`
	FilteredTriggers    int      `json:"filteredTriggers"`
}

// controllerReconcileFrom decodes a ControllerReconcile line.
func controllerReconcileFrom(w *wireLine, ev *watch.Event) error {
	if w.Result == "" {
		return fmt.Errorf(`ControllerReconcile line without "result"`)
	}
	ev.Namespace, ev.Name, ev.Key, ev.Reason = w.Namespace, w.Name, w.Key, w.Reason
	ev.Resource.Namespaced = w.Namespace != ""
	r := &watch.ReconcileInfo{Controller: w.Controller, ReconcileID: w.ReconcileID, Kind: w.ObjectKind, Result: w.Result,
		Error: w.Message, ReasonMessage: w.ReasonMessage, Source: w.Source, Format: w.Format, Lines: w.Lines,
		FilteredTriggers: w.FilteredTriggers}
	if w.RequeueAfterSeconds != nil {
		r.RequeueAfter = time.Duration(*w.RequeueAfterSeconds * float64(time.Second))
	}
	if w.DurationSeconds != nil {
		r.Duration, r.DurationKnown = time.Duration(*w.DurationSeconds*float64(time.Second)), true
	}
	ev.Reconcile = r
	ts, err := triggersFrom(w.Triggers)
	if err != nil {
		return err
	}
	ev.TriggerCount, ev.Triggers = w.TriggerCount, ts
	return nil
}

// triggersFrom decodes the triggers of a Reconciled or ControllerReconcile line.
func triggersFrom(rs []triggerRecord) ([]watch.Trigger, error) {
	var out []watch.Trigger
	for _, t := range rs {
		at, err := time.Parse(time.RFC3339Nano, t.Time)
		if err != nil {
			return nil, fmt.Errorf("trigger time: %w", err)
		}
		out = append(out, watch.Trigger{Type: t.Type, Delta: t.Delta, ResourceVersion: t.ResourceVersion, Managers: t.Managers, Attribution: t.Attribution, Time: at,
			Resource: t.Resource, Key: t.Key})
	}
	return out, nil
}
