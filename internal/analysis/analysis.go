// Package analysis is the one step between the informer (or a recording's reader) and every
// output: for each event it computes what an update changed (once, and only when a consumer
// needs it), who made it (replayed updates; the informer attributes live ones), marks noise
// (internal/noise's Filter) and finds hot loops, and hands the results on typed in the event
// (Changes, Attribution, Ignored, OutOfFocus, HotLoop). With metadata-only objects (top's
// informers) it reads the writers, their fields and heartbeats from managedFields instead
// (managed.go). The printer, the recorder, the report, top's ranking and the summary only read
// them. It never prints.
package analysis

import (
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Config says what the step does and which consumers need what.
type Config struct {
	// Filter marks noise (--ignore-path, --only-path); nil or inactive: updates keep the
	// marks they came with (a recording's).
	Filter *noise.Filter
	// HotLoopUpdates and HotLoopWindow configure hot-loop detection (NewHotLoops); off when
	// either is zero.
	HotLoopUpdates int
	HotLoopWindow  time.Duration
	// Redetect: the HotLoop lines that come in (a recording's) are left out, replaced by this
	// step's detection, even when it is off (replay --hot-loop-*).
	Redetect bool
	// Changes: an output shows what updates changed (--diff, replay --history, human output
	// that folds hot objects, the report), so every update gets its Changes even when no
	// filter or detector needs them.
	Changes bool
	// MetadataOnly: the objects are metadata only (top's informers), so an update's writers,
	// the fields they moved and whether it is a heartbeat are read from managedFields
	// (markManaged): its Attribution, Changes (paths without values) and Ignored.
	MetadataOnly bool
	// Heartbeats are the paths whose writes are heartbeats (Ignored) with MetadataOnly.
	Heartbeats []diff.Pattern
}

// Step analyzes one stream of events, in order. It is not safe for concurrent use.
type Step struct {
	filter *noise.Filter
	// ignore are the filter's ignored paths, matched as the changes are computed.
	ignore   []diff.Pattern
	hot      *HotLoops
	redetect bool
	changes  bool // every update needs its changes
	// metadataOnly: updates are read from managedFields (managed.go), heartbeats Ignored.
	metadataOnly bool
	heartbeats   []diff.Pattern
}

// New returns the step of a run.
func New(cfg Config) *Step {
	hot := NewHotLoops(cfg.HotLoopUpdates, cfg.HotLoopWindow)
	if hot != nil {
		hot.metadataOnly = cfg.MetadataOnly
	}
	return &Step{
		filter:       cfg.Filter,
		hot:          hot,
		redetect:     cfg.Redetect,
		changes:      cfg.Changes || cfg.Filter.Active() || hot != nil,
		metadataOnly: cfg.MetadataOnly,
		heartbeats:   cfg.Heartbeats,
		ignore:       cfg.Filter.Ignores(),
	}
}

// Detects reports whether the step detects hot loops itself.
func (s *Step) Detects() bool { return s.hot != nil }

// Analyze completes ev and appends to out what to hand on, in order: ev, then the HotLoop
// event it made, if any. With Redetect, a HotLoop or HotLoopEnded line that comes in is left out.
func (s *Step) Analyze(out []watch.Event, ev *watch.Event) []watch.Event {
	keep, started := s.Mark(ev)
	if keep {
		out = append(out, *ev)
	}
	if started != nil {
		out = append(out, *started)
	}
	return out
}

// Mark is Analyze in place: it marks ev, reports whether ev goes on, and returns the hot-loop
// line it starts (after ev), if any. The pipeline takes a line through it without a copy.
func (s *Step) Mark(ev *watch.Event) (keep bool, started *watch.Event) {
	// Detecting again replaces the recorded diagnoses, their ends included (issue #33: a
	// replay with --hot-loop-window 3s printed the recorded 30 s HotLoopEnded lines).
	if (ev.Type == watch.HotLoop || ev.Type == watch.HotLoopEnded) && s.redetect {
		return false, nil
	}
	computed := false // the changes computed here, with the filter's ignored paths
	switch {
	case s.metadataOnly && ev.IsChange():
		markManaged(ev, s.heartbeats)
	case ev.IsChange():
		if s.changes && ev.Obj.Changes == nil {
			ev.Obj.Changes, computed = diff.ComputeIgnoring(ev.Obj.OldObject.Object, ev.Obj.Object.Object, s.ignore), true
			if ev.Obj.Changes == nil {
				ev.Obj.Changes = []diff.Change{} // computed: nothing changed
			}
		}
		if ev.Obj.Attribution == nil {
			// A replayed update (the live informer attributes its own); the changes, when
			// computed, spare Attribute a second diff.
			a := diff.Attribute(ev.Obj.OldObject.Object, ev.Obj.Object.Object, ev.Obj.Changes)
			ev.Obj.Attribution = &a
		}
	}
	if computed {
		s.filter.MarkComputed(ev)
	} else {
		s.filter.Mark(ev)
	}
	return true, s.hot.Observe(ev)
}

// Rediagnose says an ongoing loop of an object over its window now (diff.HotLoopDetector's
// Rediagnose): an object first seen in the middle of its loop may have been found before any
// writer could be named. resource is discovery.Resource's String; ok is false without a loop.
func (s *Step) Rediagnose(resource, namespace, name string) (h diff.HotLoop, ok bool) {
	if s.hot == nil {
		return h, false
	}
	return s.hot.d.Rediagnose(loopID(resource, namespace, name))
}

// Ended returns the HotLoopEnded events of the loops that ended by now (a whole window without
// an update, or their object deleted).
func (s *Step) Ended(now time.Time) []watch.Event { return s.hot.Ended(now) }

// Ongoing returns the loops not ended by now, as HotLoopEnded-shaped events for the summary.
func (s *Step) Ongoing(now time.Time) []watch.Event { return s.hot.Ongoing(now) }
