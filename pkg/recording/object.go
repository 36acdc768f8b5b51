package recording

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// objectMembers are an object line's members after its head, in watch.LineMembers' syntax
// (lines.go): the event's own (its header, Obj) and, under Derived., what the printer derived
// of it (Options.Derive): the object as written, its state, the update's attribution, changes
// and diff. Field names are public: add members, never rename them (docs/json.md).
var objectMembers = []string{".namespace", ".name", ".resourceVersion", "Obj.oldResourceVersion,if=Type=Updated",
	"Obj.initialList", "Obj.delta", "Obj.tombstone", "Derived.state,omitempty", "Derived.object", "Obj.queue,omitempty",
	"Derived.Update.Attribution.managers,list,if=Derived.Update", "Derived.Update.Attribution.attribution,omitempty",
	"Derived.Update.Attribution.attributionReason,omitempty,if=!Derived.Update.Attribution.Managers",
	"Derived.Update.Attribution.reconcile,omitempty", "Derived.Update.Attribution.noop,omitempty",
	"Derived.Update.changes,omitempty", "Derived.Update.diff,omitempty", "Obj.filtered,omitempty",
	"Obj.owners,omitempty", "Obj.ignored,omitempty", "Obj.outOfFocus,omitempty", "Obj.audit,omitempty"}

// objectChecks finish an object line read back: what its members do not say of the event, and
// what it must have. What the printer derived (state, managers, changes) is not read back: a
// printer derives it again from the objects, but for an attribution a controller's log gave.
func objectChecks(ev *watch.Event, d *Derived) error {
	if ev.Resource.Resource == "" {
		return fmt.Errorf(`%s line without "resource"`, ev.Type)
	}
	if ev.Name == "" {
		return fmt.Errorf(`%s line without "name"`, ev.Type)
	}
	// A namespaced resource's objects have a namespace: the best guess a line allows.
	ev.Resource.Namespaced = ev.Namespace != ""
	if ev.Type != watch.Updated {
		ev.Obj.OldResourceVersion = ""
	}
	// The noise marks are the reader's to make again, with its own --ignore-path and --only-path.
	ev.Obj.Ignored, ev.Obj.OutOfFocus = false, false
	if d.Object != nil {
		ev.Obj.Object = &unstructured.Unstructured{Object: d.Object}
	}
	if d.Update == nil {
		return nil
	}
	a := &d.Update.Attribution
	fromLog := a.Reconcile != nil && (a.Rule == diff.RuleReconcile && ev.Type == watch.Updated ||
		a.Rule == diff.RuleDelete && (ev.Type == watch.Updated || ev.Type == watch.Deleted))
	if fromLog {
		// The one attribution the objects cannot give again: it came from a controller's log.
		rc := *a.Reconcile
		ev.Obj.Attribution = &diff.Attribution{Rule: a.Rule, NoOp: a.NoOp, Reconcile: &rc,
			Managers: []diff.Manager{{Manager: rc.Controller, Operation: "Reconcile"}}}
	}
	return nil
}

// objectJSON is an object line's object. It decodes the way the dynamic client does: integers
// as int64, other numbers as float64, so the object deep-copies and re-encodes as it was.
type objectJSON map[string]any

// UnmarshalJSON reads the object with the dynamic client's numbers.
func (o *objectJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = nil
		return nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil || m == nil {
		return &fieldError{field: "object", want: "a JSON object"}
	}
	*o = m
	return nil
}

// queueRecord is the workqueue's figures (the standard metrics) at one moment, as an object or
// Reconciled line reads them (watch.QueueFigures).
type queueRecord struct {
	Depth   int64 `json:"depth"`
	Adds    int64 `json:"adds"`
	Retries int64 `json:"retries"`
}

// UnmarshalJSON reads the figures, any other value being an error that says what they are.
func (q *queueRecord) UnmarshalJSON(b []byte) error {
	type plain queueRecord
	if err := json.Unmarshal(b, (*plain)(q)); err != nil {
		return &fieldError{field: "queue", want: `{"depth", "adds", "retries"} numbers`}
	}
	return nil
}
