package analysis

import (
	"slices"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// HotLoops watches the event stream for hot loops (diff.HotLoopDetector) and makes their
// HotLoop and HotLoopEnded events. It reads what the step computed for an update (Changes,
// Attribution). It is used from one goroutine.
type HotLoops struct {
	d *diff.HotLoopDetector
	// The object of each reported loop, by detector key, for its HotLoopEnded line.
	objects map[string]watch.Event
	// metadataOnly: the updates' Changes are the fields their writers' entries moved, without
	// values (markManaged): no value flips back, no progress is read from them.
	metadataOnly bool
}

// NewHotLoops reports an object updated more than maxUpdates times within window, or by two
// managers taking turns (diff.MinAlternations hand-overs) within it. maxUpdates < 1 or
// window <= 0 turns it off (nil).
func NewHotLoops(maxUpdates int, window time.Duration) *HotLoops {
	if maxUpdates < 1 || window <= 0 {
		return nil
	}
	return &HotLoops{d: diff.NewHotLoopDetector(maxUpdates, window), objects: map[string]watch.Event{}}
}

// Ended returns the HotLoopEnded events of the loops that ended by now.
func (h *HotLoops) Ended(now time.Time) []watch.Event {
	if h == nil {
		return nil
	}
	var out []watch.Event
	for _, e := range h.d.Ended(now) {
		out = append(out, h.endEvent(e, now))
		delete(h.objects, e.Key)
	}
	return out
}

// Ongoing returns the loops still going (not ended), as HotLoopEnded-shaped events for the
// summary at exit.
func (h *HotLoops) Ongoing(now time.Time) []watch.Event {
	if h == nil {
		return nil
	}
	var out []watch.Event
	for _, e := range h.d.Ongoing() {
		out = append(out, h.endEvent(e, now))
	}
	return out
}

func (h *HotLoops) endEvent(e diff.HotLoopEnd, now time.Time) watch.Event {
	o := h.objects[e.Key]
	return watch.Event{
		Type: watch.HotLoopEnded, Time: now, Resource: o.Resource, Namespace: o.Namespace, Name: o.Name, Key: o.Key,
		HotLoop: &watch.HotLoopInfo{Loop: e.Loop, Updates: e.Updates, Duration: e.Duration,
			Managers: slices.Clone(e.Managers), Deleted: e.Deleted},
	}
}

// loopID is the detector's key of an object.
func loopID(resource, namespace, name string) string {
	if namespace == "" {
		return resource + " " + name
	}
	return resource + " " + namespace + "/" + name
}

// objectKey is namespace/name, or name for a cluster-scoped object.
func objectKey(ev *watch.Event) string {
	if ev.Namespace == "" {
		return ev.Name
	}
	return ev.Namespace + "/" + ev.Name
}

// Observe feeds one analyzed event and returns the HotLoop event to hand on after it, or nil.
// Only changes count (IsChange): not resyncs, not a relist's unchanged objects, not an update
// of ignored fields only.
func (h *HotLoops) Observe(ev *watch.Event) *watch.Event {
	if h == nil {
		return nil
	}
	// An update of ignored fields only (a heartbeat) is noise, not a loop. (Checked before the
	// object's id is made: most lines of a large list are not changes.)
	if ev.Type != watch.Deleted && (!ev.IsChange() || ev.Obj.Ignored) {
		return nil
	}
	key := objectKey(ev)
	id := loopID(ev.Resource.String(), ev.Namespace, ev.Name)
	if ev.Type == watch.Deleted {
		h.d.Forget(id)
		return nil
	}
	r := h.d.Observe(id, h.update(ev))
	if r == nil {
		return nil
	}
	h.objects[id] = watch.Event{Resource: ev.Resource, Namespace: ev.Namespace, Name: ev.Name, Key: key}
	return &watch.Event{
		Type: watch.HotLoop, Time: ev.Time, Resource: ev.Resource,
		Namespace: ev.Namespace, Name: ev.Name, Key: key,
		HotLoop: &watch.HotLoopInfo{Reason: r.Reason, Loop: r.Loop, Suggestion: r.Suggestion,
			Managers: slices.Clone(r.Managers), Fields: slices.Clone(r.Fields), Updates: r.Updates, Window: r.Window},
	}
}

// update is what the detector reads of an analyzed update: its writers, the fields it
// changed, whether the spec changed and whether it makes progress.
func (h *HotLoops) update(ev *watch.Event) diff.Update {
	u := diff.Update{At: ev.Time}
	if ev.Obj.Attribution != nil {
		for _, m := range ev.Obj.Attribution.Managers {
			if !slices.Contains(u.Managers, m.Manager) {
				u.Managers = append(u.Managers, m.Manager)
			}
		}
	}
	if h.metadataOnly {
		for _, c := range ev.Obj.Changes {
			u.Paths = append(u.Paths, c.Path)
		}
		u.GenerationChanged = ev.Obj.Object.GetGeneration() != ev.Obj.OldObject.GetGeneration()
		return u
	}
	for _, c := range ev.Obj.Changes {
		if c.Ignored {
			continue
		}
		// The API server bumps it on every spec change: it would "flip" in every loop.
		if c.Path == "metadata.generation" {
			u.GenerationChanged = true
		} else {
			u.Paths = append(u.Paths, c.Path)
			u.Changes = append(u.Changes, c)
		}
	}
	u.Converging = diff.Converging(ev.Obj.Changes)
	return u
}
