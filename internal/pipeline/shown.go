package pipeline

import (
	"maps"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Shown is what the output shows, as a table the pipeline reads itself (no call per line): the
// line types it names are shown or not as it says, the others unless Only. A Folded line stands
// for updates. The zero value shows every line.
type Shown struct {
	Types map[watch.Type]bool
	// Only: a type Types does not name is not shown (--types).
	Only bool
	// NoFinalAPIStats leaves out the run's last ApiStats lines (human output without
	// --api-stats).
	NoFinalAPIStats bool
}

// NewShown is the table of an output that shows only the given types (nil: every type) but
// those its printer omits (printer.Printer.Omits), and the run's last ApiStats lines unless
// noFinalAPIStats.
func NewShown(only map[watch.Type]bool, omit []watch.Type, noFinalAPIStats bool) Shown {
	s := Shown{Types: maps.Clone(only), Only: only != nil, NoFinalAPIStats: noFinalAPIStats}
	if s.Types == nil && len(omit) > 0 {
		s.Types = make(map[watch.Type]bool, len(omit))
	}
	for _, t := range omit {
		s.Types[t] = false
	}
	return s
}

// shows says whether the output shows ev.
func (s *Shown) shows(ev *watch.Event) bool {
	t := ev.Type
	switch t {
	case watch.Folded:
		t = watch.Updated
	case watch.ApiStats:
		if ev.Stats.Final && s.NoFinalAPIStats {
			return false
		}
	}
	if shown, named := s.Types[t]; named {
		return shown
	}
	return !s.Only
}
