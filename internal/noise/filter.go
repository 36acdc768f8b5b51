// Package noise decides which updates are noise, so that the signal survives a loop: updates
// that changed only ignored fields (--ignore-path), updates out of focus (--only-path), and the
// updates of an object in a hot loop, folded into one line per interval (--fold). It marks and
// folds events; it never prints, and human output is the only one that hides anything.
package noise

import (
	"fmt"
	"slices"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// DefaultIgnore are the fields ignored unless --ignore-path=- is given: pure heartbeats, renewed
// every few seconds, that say nothing but "still alive".
var DefaultIgnore = []string{
	// A Lease's renewal: leader election (kube-controller-manager, kube-scheduler, every
	// controller-runtime manager) every 2s, node heartbeats every 10s.
	"spec.renewTime",
	// The kubelet's heartbeat in a Node's conditions.
	"status.conditions[*].lastHeartbeatTime",
	// The leader election record of Endpoints and ConfigMap locks (before Leases).
	`metadata.annotations["control-plane.alpha.kubernetes.io/leader"]`,
}

// NoDefaults is the --ignore-path value that turns DefaultIgnore off.
const NoDefaults = "-"

// Filter marks the updates that are noise: Ignored (every changed field is under an ignored
// path) or OutOfFocus (with focus paths, none of them changed). It is pure and not safe for
// concurrent use.
type Filter struct {
	ignore []diff.Pattern
	only   []diff.Pattern
}

// NewFilter parses --ignore-path and --only-path values. An ignore value of "-" drops the
// defaults; without it, DefaultIgnore is added.
func NewFilter(ignore, only []string) (*Filter, error) {
	f := &Filter{}
	defaults := true
	for _, s := range ignore {
		if s == NoDefaults {
			defaults = false
			continue
		}
		p, err := diff.ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("--ignore-path: %w", err)
		}
		f.ignore = append(f.ignore, p)
	}
	if defaults {
		for _, s := range DefaultIgnore {
			p, _ := diff.ParsePattern(s)
			f.ignore = append(f.ignore, p)
		}
	}
	for _, s := range only {
		p, err := diff.ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("--only-path: %w", err)
		}
		f.only = append(f.only, p)
	}
	return f, nil
}

// Active reports whether the filter may mark anything.
func (f *Filter) Active() bool { return f != nil && (len(f.ignore) > 0 || len(f.only) > 0) }

// Focused reports whether --only-path paths were given.
func (f *Filter) Focused() bool { return f != nil && len(f.only) > 0 }

// Mark classifies an event: for an update that changed the object it computes the changes once
// (ev.Changes, ignored ones marked) and sets ev.Ignored when every change is ignored, and
// ev.OutOfFocus when focus paths were given and no change that is not ignored touches one. An
// update that changed nothing (a resync, an unchanged relist delivery) is out of focus too. A
// no-op write (no field changed) is never ignored.
func (f *Filter) Mark(ev *watch.Event) {
	if f.Active() && ev.Type == watch.Updated && ev.IsChange() {
		if ev.Obj.Changes == nil {
			ev.Obj.Changes = diff.ComputeIgnoring(ev.Obj.OldObject.Object, ev.Obj.Object.Object, f.ignore)
		} else {
			for i := range ev.Obj.Changes {
				c := &ev.Obj.Changes[i]
				c.Ignored = slices.ContainsFunc(f.ignore, func(p diff.Pattern) bool { return p.Covers(*c) })
			}
		}
	}
	f.MarkComputed(ev)
}

// MarkComputed is Mark of an update whose changes were computed with the filter's ignored paths
// (diff.ComputeIgnoring with Ignores): their Ignored marks are taken as they are.
func (f *Filter) MarkComputed(ev *watch.Event) {
	if !f.Active() || ev.Type != watch.Updated {
		return
	}
	if !ev.IsChange() {
		ev.Obj.OutOfFocus = f.Focused()
		return
	}
	f.classify(ev)
}

// Ignores are the ignored paths, for diff.ComputeIgnoring; nil without a filter.
func (f *Filter) Ignores() []diff.Pattern {
	if f == nil {
		return nil
	}
	return f.ignore
}

// classify sets an update's Ignored and OutOfFocus from its changes' Ignored marks.
func (f *Filter) classify(ev *watch.Event) {
	kept := 0
	focus := false
	for i := range ev.Obj.Changes {
		c := &ev.Obj.Changes[i]
		if c.Ignored {
			continue
		}
		kept++
		for _, p := range f.only {
			if p.Touches(*c) {
				focus = true
				break
			}
		}
	}
	ev.Obj.Ignored = kept == 0 && len(ev.Obj.Changes) > 0
	ev.Obj.OutOfFocus = !ev.Obj.Ignored && f.Focused() && !focus
}

// IgnoresAll reports whether changes is not empty and an ignore path covers every one of them:
// an update that only renewed a heartbeat. It marks nothing.
func (f *Filter) IgnoresAll(changes []diff.Change) bool {
	if f == nil || len(changes) == 0 {
		return false
	}
	for _, c := range changes {
		if !slices.ContainsFunc(f.ignore, func(p diff.Pattern) bool { return p.Covers(c) }) {
			return false
		}
	}
	return true
}

// Hidden reports whether human output leaves ev out (it is counted in the summary).
func Hidden(ev *watch.Event) bool { return ev.Obj.Ignored || ev.Obj.OutOfFocus }
