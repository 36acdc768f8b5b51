package watch

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Predicates are the --predicate names: controller-runtime's predicates for update events
// (predicate.GenerationChangedPredicate, LabelChangedPredicate, AnnotationChangedPredicate,
// ResourceVersionChangedPredicate).
var Predicates = []string{"generation", "labels", "annotations", "resourceVersion"}

// Predicate is one --predicate value: an update passes when any of its alternatives passes
// (`generation|labels` is predicate.Or of the two). Several Predicates must all pass, as
// several predicates given to controller-runtime's WithPredicates or WithEventFilter.
type Predicate struct {
	Any []string
}

// String is the value as the user gives it.
func (p Predicate) String() string { return strings.Join(p.Any, "|") }

// ParsePredicates reads --predicate values.
func ParsePredicates(values []string) ([]Predicate, error) {
	var out []Predicate
	for _, v := range values {
		var p Predicate
		for name := range strings.SplitSeq(v, "|") {
			name = strings.TrimSpace(name)
			if !slices.Contains(Predicates, name) {
				return nil, fmt.Errorf("--predicate must be one of %s (alternatives joined by |), got %q", strings.Join(Predicates, ", "), v)
			}
			p.Any = append(p.Any, name)
		}
		out = append(out, p)
	}
	return out, nil
}

// Filter returns the predicate that drops ev before it reaches a controller's workqueue, or ""
// when ev is enqueued. As in controller-runtime, creates and deletes always pass (the update
// predicates' Create and Delete are true); an update passes a predicate when the field it
// compares differs between the old and new object. Resyncs and a relist's unchanged
// deliveries are updates too: every one of these predicates drops them.
func Filter(ps []Predicate, ev *Event) string {
	if ev.Type != Updated || len(ps) == 0 {
		return ""
	}
	for _, p := range ps {
		if !p.passes(ev) {
			return p.String()
		}
	}
	return ""
}

func (p Predicate) passes(ev *Event) bool {
	if ev.Obj.Object == nil || ev.Obj.OldObject == nil {
		// controller-runtime's update predicates reject an event without both objects.
		return false
	}
	old, cur := ev.Obj.OldObject, ev.Obj.Object
	for _, name := range p.Any {
		var changed bool
		switch name {
		case "generation":
			changed = old.GetGeneration() != cur.GetGeneration()
		case "labels":
			changed = !maps.Equal(old.GetLabels(), cur.GetLabels())
		case "annotations":
			changed = !maps.Equal(old.GetAnnotations(), cur.GetAnnotations())
		case "resourceVersion":
			changed = old.GetResourceVersion() != cur.GetResourceVersion()
		}
		if changed {
			return true
		}
	}
	return false
}
