// Package state reads what state an object is in, the way kstatus and kubectl read it: a generic
// status computed by kstatus (InProgress, Current, Failed, Terminating; Unknown when it cannot
// tell), with its message, and a short summary of the kind's own columns, as `kubectl get`
// shows them (pods `1/1 Running`, deployments `3/3 ready, 3 updated, 3 available`, custom
// resources their CRD's additionalPrinterColumns). It is pure: objects in, states out; it never
// talks to the API. docs/fields.md says how each part is derived.
package state

import (
	"fmt"
	"strings"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Statuses, as kstatus names them.
const (
	InProgress  = string(kstatus.InProgressStatus)
	Current     = string(kstatus.CurrentStatus)
	Failed      = string(kstatus.FailedStatus)
	Terminating = string(kstatus.TerminatingStatus)
	Unknown     = string(kstatus.UnknownStatus)
)

// State is what state one object is in.
type State struct {
	// Status is kstatus's: InProgress, Current, Failed, Terminating, or Unknown when kstatus
	// could not read the object.
	Status string
	// Summary is the kind's own columns in a few words ("1/1 Running"); "" for kinds without.
	Summary string
	// Message is kstatus's message, or for a Terminating object what still holds it.
	Message string
	// Finalizers are the finalizers still holding a Terminating object.
	Finalizers []string
}

// Field is one -o wide column of an object: a name and its value.
type Field struct {
	Name  string
	Value string
}

// Reader reads the states of one resource's objects: built-in kinds by their kind, custom
// resources by their CRD's printer columns (compiled once).
type Reader struct {
	columns []column
}

// NewReader returns a Reader for objects of a resource with these printer columns (none for a
// built-in resource). A column whose JSONPath does not parse is left out, as the API server
// would refuse it.
func NewReader(cols []discovery.PrinterColumn) *Reader {
	r := &Reader{}
	for _, c := range cols {
		if col, ok := compileColumn(c); ok {
			r.columns = append(r.columns, col)
		}
	}
	return r
}

// Of returns the state of obj at time at (the event's time: the one rule of kstatus that
// depends on the clock, a pod's 15 seconds to be scheduled, is read against it, so that a replay
// says what the live run said). It returns nil for an object that says nothing about its state:
// no status, no deletion requested, and nothing in its kind's columns (a ConfigMap, a Secret, an
// object seen through --metadata-only), where kstatus's "Current" would be noise.
func (r *Reader) Of(obj *unstructured.Unstructured, at time.Time) *State {
	if obj == nil || obj.Object == nil {
		return nil
	}
	return r.of(obj, r.summary(obj), at)
}

// of is Of with the kind's summary read already.
func (r *Reader) of(obj *unstructured.Unstructured, summary string, at time.Time) *State {
	terminating := obj.GetDeletionTimestamp() != nil
	st, _ := obj.Object["status"].(map[string]any)
	if !terminating && len(st) == 0 && summary == "" {
		return nil
	}
	s := &State{Summary: summary}
	res, err := kstatus.Compute(obj)
	switch {
	case err != nil:
		s.Status, s.Message = Unknown, err.Error()
	case res == nil:
		s.Status = Unknown
	default:
		s.Status, s.Message = string(res.Status), res.Message
		unschedulable(s, res, obj.GetCreationTimestamp().Time, at)
	}
	if terminating {
		s.Status = Terminating
		s.Finalizers = obj.GetFinalizers()
		s.Message = terminatingMessage(s.Finalizers, obj.GetDeletionGracePeriodSeconds())
	}
	return s
}

// Wide returns the -o wide columns of obj: the kind's own (a pod's node and IP, a workload's
// images, a node's address and kubelet version) or a custom resource's printer columns of
// priority above 0.
func (r *Reader) Wide(obj *unstructured.Unstructured) []Field {
	if obj == nil || obj.Object == nil {
		return nil
	}
	if len(r.columns) > 0 {
		return r.columnFields(obj, func(p int32) bool { return p > 0 })
	}
	return builtinWide(obj)
}

func (r *Reader) summary(obj *unstructured.Unstructured) string {
	if len(r.columns) > 0 {
		fields := r.columnFields(obj, func(p int32) bool { return p == 0 })
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = f.Name + "=" + f.Value
		}
		return strings.Join(parts, ", ")
	}
	return builtinSummary(obj)
}

// unschedulable redoes kstatus's one clock-dependent rule against the event's time: a pending
// pod the scheduler found no node for is InProgress for its first 15 seconds, Failed after.
func unschedulable(s *State, res *kstatus.Result, created, at time.Time) {
	if at.IsZero() || len(res.Conditions) == 0 {
		return
	}
	switch res.Conditions[0].Reason {
	case "PodNotScheduled", "PodUnschedulable":
	default:
		return
	}
	if at.Sub(created) < kstatus.ScheduleWindow {
		s.Status, s.Message = InProgress, "Pod has not been scheduled"
		return
	}
	s.Status, s.Message = Failed, "Pod could not be scheduled"
}

// terminatingMessage says what a Terminating object waits for: its finalizers, or a pod's
// grace period.
func terminatingMessage(fins []string, g *int64) string {
	msg := "deletion requested"
	if len(fins) > 0 {
		return msg + "; waiting for finalizers: " + strings.Join(fins, ", ")
	}
	if g != nil && *g > 0 {
		return msg + fmt.Sprintf("; grace period %ds", *g)
	}
	return msg
}
