package recording

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// objectRecord is an object event in the JSON contract (docs/json.md). Field names are public:
// add fields, never rename them.
type objectRecord struct {
	eventHead
	Namespace          string      `json:"namespace"`
	Name               string      `json:"name"`
	ResourceVersion    string      `json:"resourceVersion"`
	OldResourceVersion *string     `json:"oldResourceVersion,omitempty"`
	InitialList        bool        `json:"initialList"`
	Delta              watch.Delta `json:"delta"`
	Tombstone          bool        `json:"tombstone"`
	// State: what state the object is in (kstatus and the kind's columns); absent for objects
	// that say nothing about it (docs/fields.md).
	State  *State       `json:"state,omitempty"`
	Object objectJSON   `json:"object"`
	Queue  *queueRecord `json:"queue,omitempty"`
	// Managers: Updated lines that changed the object; who made the update (diff.Attribute).
	Managers *[]diff.Manager `json:"managers,omitempty"`
	// Attribution: the same lines; how Managers was found: entry, ownership, binding, delete
	// or unknown.
	Attribution string `json:"attribution,omitempty"`
	// AttributionReason: why no manager is named (binding, delete, unknown, a no-op).
	AttributionReason string `json:"attributionReason,omitempty"`
	// Reconcile: attribution "reconcile"; the controller's reconcile, read from its log, that was
	// running when the update landed (managedFields named nobody).
	Reconcile *diff.ReconcileRef `json:"reconcile,omitempty"`
	// NoOp: the update changed nothing but metadata.resourceVersion and managedFields.
	NoOp bool `json:"noop,omitempty"`
	// Changes: with --diff, the same Updated lines; the changed fields.
	Changes *[]Change `json:"changes,omitempty"`
	// Diff: with --diff=full, a unified diff of the object as YAML.
	Diff string `json:"diff,omitempty"`
	// Filtered: the --predicate that kept this event out of the simulated workqueue.
	Filtered string `json:"filtered,omitempty"`
	// Owners: with --owned, an owned object's chain from the watched root down to its owner.
	Owners []watch.Owner `json:"owners,omitempty"`
	// Ignored: the update changed only --ignore-path fields; OutOfFocus: none of the
	// --only-path fields. Human output hides such lines (noise.Filter).
	Ignored    bool `json:"ignored,omitempty"`
	OutOfFocus bool `json:"outOfFocus,omitempty"`
	// Audit: with --audit-log, the request that made the line's write, from the API server's
	// audit log (docs/audit.md); absent when none was found.
	Audit *auditRecord `json:"audit,omitempty"`
	// objectJSON is the object encoded already (Derived.ObjectJSON), spliced in by Encode.
	objectJSON []byte
}

// auditRecord is the request that made an object line's write, from the audit log.
type auditRecord struct {
	User             string `json:"user"`
	ImpersonatedUser string `json:"impersonatedUser,omitempty"`
	ServiceAccount   string `json:"serviceAccount,omitempty"`
	UserAgent        string `json:"userAgent,omitempty"`
	AuditID          string `json:"auditID"`
	Verb             string `json:"verb"`
	Subresource      string `json:"subresource,omitempty"`
	Matched          string `json:"matched"`
}

// queueRecord is the workqueue's figures (the standard metrics) at one moment.
type queueRecord struct {
	Depth   int64 `json:"depth"`
	Adds    int64 `json:"adds"`
	Retries int64 `json:"retries"`
}

func queueOf(q *watch.QueueFigures) *queueRecord {
	if q == nil {
		return nil
	}
	return &queueRecord{Depth: q.Depth, Adds: q.Adds, Retries: q.Retries}
}

// objectRecordOf is an object event's line: the object as the options show it, its state, and
// what an update changed and who made it.
func objectRecordOf(ev *watch.Event, o Options) objectRecord {
	r := objectRecord{
		eventHead: headOf(ev),
		Namespace: ev.Namespace, Name: ev.Name, ResourceVersion: ev.ResourceVersion,
		InitialList: ev.Obj.InitialList, Delta: ev.Obj.Delta, Tombstone: ev.Obj.Tombstone,
	}
	if ev.Type == watch.Updated {
		r.OldResourceVersion = ptr(ev.Obj.OldResourceVersion)
	}
	d := o.derive(ev)
	r.Object, r.State, r.objectJSON = d.Object, d.State, d.ObjectJSON
	r.Queue = queueOf(ev.Obj.Queue)
	r.Filtered = ev.Obj.Filtered
	r.Owners = ev.Obj.Owners
	r.Ignored, r.OutOfFocus = ev.Obj.Ignored, ev.Obj.OutOfFocus
	if ev.Obj.Audit != nil {
		a := auditRecord(*ev.Obj.Audit)
		r.Audit = &a
	}
	if u := d.Update; u != nil {
		managers := append([]diff.Manager{}, u.Attribution.Managers...)
		r.Managers = &managers
		r.Attribution, r.NoOp = u.Attribution.Rule, u.Attribution.NoOp
		if len(u.Attribution.Managers) == 0 {
			r.AttributionReason = u.Attribution.Why
		}
		r.Reconcile = u.Attribution.Reconcile
		r.Changes, r.Diff = u.Changes, u.Diff
	}
	if a := ev.Obj.Attribution; ev.Type == watch.Deleted && a != nil && a.Reconcile != nil {
		// Deleted by a controller, as its log shows.
		managers := append([]diff.Manager{}, a.Managers...)
		r.Managers, r.Attribution, r.Reconcile = &managers, a.Rule, a.Reconcile
	}
	return r
}

// event is the inverse of objectRecordOf. What the caller derived (state, managers, changes) is
// not read back: the printer derives it again from the objects.
func (r *objectRecord) event(ev *watch.Event) error {
	if r.Resource == "" {
		return fmt.Errorf(`%s line without "resource"`, ev.Type)
	}
	if r.Name == "" {
		return fmt.Errorf(`%s line without "name"`, ev.Type)
	}
	ev.Namespace, ev.Name, ev.ResourceVersion = r.Namespace, r.Name, r.ResourceVersion
	// A namespaced resource's objects have a namespace: the best guess a line allows.
	ev.Resource.Namespaced = r.Namespace != ""
	if ev.Type == watch.Updated && r.OldResourceVersion != nil {
		ev.Obj.OldResourceVersion = *r.OldResourceVersion
	}
	ev.Obj.InitialList, ev.Obj.Delta, ev.Obj.Tombstone, ev.Obj.Filtered = r.InitialList, r.Delta, r.Tombstone, r.Filtered
	if len(r.Owners) > 0 { // an empty list reads back as none
		ev.Obj.Owners = r.Owners
	}
	if r.Object != nil {
		ev.Obj.Object = &unstructured.Unstructured{Object: r.Object}
	}
	ev.Obj.Queue = r.Queue.figures()
	if r.Audit != nil {
		a := watch.AuditInfo(*r.Audit)
		ev.Obj.Audit = &a
	}
	fromLog := r.Reconcile != nil && (r.Attribution == diff.RuleReconcile && ev.Type == watch.Updated ||
		r.Attribution == diff.RuleDelete && (ev.Type == watch.Updated || ev.Type == watch.Deleted))
	if fromLog {
		// The one attribution the objects cannot give again: it came from a controller's log.
		rc := *r.Reconcile
		ev.Obj.Attribution = &diff.Attribution{Rule: r.Attribution, NoOp: r.NoOp, Reconcile: &rc,
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

// UnmarshalJSON reads the figures, any other value being an error that says what they are.
func (q *queueRecord) UnmarshalJSON(b []byte) error {
	type plain queueRecord
	if err := json.Unmarshal(b, (*plain)(q)); err != nil {
		return &fieldError{field: "queue", want: `{"depth", "adds", "retries"} numbers`}
	}
	return nil
}

// figures is the inverse of queueOf.
func (q *queueRecord) figures() *watch.QueueFigures {
	if q == nil {
		return nil
	}
	return &watch.QueueFigures{Depth: q.Depth, Adds: q.Adds, Retries: q.Retries}
}
