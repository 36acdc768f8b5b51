package audit

import (
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Limits of what a Joiner keeps.
const (
	// maxWrites bounds the writes kept to match, all objects together; beyond it the oldest go.
	maxWrites = 1 << 16
	// keepWrites is how long (by the audit log's clock) a write is kept after a newer one came.
	keepWrites = 10 * time.Minute
	// maxHeld bounds the lines held; beyond it the oldest are released unmatched.
	maxHeld = 8192
)

// DefaultWait is how long an object line waits for the audit event of its write: the API server
// writes the event when the response completes, about when the watch sends the change, and the
// file is read every 100ms.
const DefaultWait = 2 * time.Second

// DefaultWindow is how far apart (audit clock against this machine's) a write and its line may
// be for a match by time, where the audit level gives no resourceVersion.
const DefaultWindow = 5 * time.Second

// class is what a write does to its object, as a watch sees it.
type class uint8

const (
	classNone    class = iota
	classCreate        // an Added line
	classUpdate        // an Updated line
	classDelete        // a Deleted line (or, by resourceVersion, the Updated line of a delete that waits for finalizers)
	classCollect       // a deletecollection: Deleted lines of its namespace and resource
)

// classOf is what an event's request did to its object, classNone for a read or a request
// that changed nothing the watch sees.
func classOf(e *Event) class {
	sub := ""
	if e.ObjectRef != nil {
		sub = e.ObjectRef.Subresource
	}
	switch e.Verb {
	case "create":
		switch sub {
		case "":
			return classCreate
		case "eviction":
			return classDelete
		case "binding":
			return classUpdate
		}
	case "update", "patch":
		if e.Code() == 201 { // a server-side apply (or an update) that created its object
			return classCreate
		}
		return classUpdate
	case "delete":
		return classDelete
	case "deletecollection":
		return classCollect
	}
	return classNone
}

type objKey struct{ group, resource, namespace, name string }

type write struct {
	key   objKey
	class class
	rv    string
	at    time.Time
	info  watch.AuditInfo
	used  bool
}

type held struct {
	ev    watch.Event
	since time.Time
	id    string
	key   objKey
}

// Joiner matches the watch's object lines to the audit events of the writes that made them.
// Pure: no clock, no goroutine; not safe for concurrent use.
type Joiner struct {
	wait, window time.Duration
	writes       map[objKey][]*write
	fifo         []*write
	newest       time.Time
	held         []held
	heldBy       map[string]int // watch.Event.ObjectID → lines held
	heldKeys     map[objKey]int // the same, by the audit log's key
	ready        []watch.Event  // lines matched as they came, not held
}

// NewJoiner returns a Joiner holding a line up to wait for its write, matching by time within
// window where no resourceVersion tells.
func NewJoiner(wait, window time.Duration) *Joiner {
	return &Joiner{wait: wait, window: window, writes: map[objKey][]*write{}, heldBy: map[string]int{}, heldKeys: map[objKey]int{}}
}

// Add notes an audit event (only the completed, successful writes are kept) and reports
// whether it may match a held line.
func (j *Joiner) Add(e *Event) bool {
	c := classOf(e)
	if c == classNone || e.Stage != StageResponseComplete || !e.Succeeded() || e.ObjectRef == nil {
		return false
	}
	k := objKey{e.ObjectRef.APIGroup, e.ObjectRef.Resource, e.ObjectRef.Namespace, e.objectName()}
	if c == classCollect {
		k.name = ""
	} else if k.name == "" {
		return false
	}
	w := &write{key: k, class: c, rv: e.responseRV(), at: e.StageTime, info: *e.Info("")}
	j.writes[k] = append(j.writes[k], w)
	j.fifo = append(j.fifo, w)
	if w.at.After(j.newest) {
		j.newest = w.at
	}
	for len(j.fifo) > 0 && (len(j.fifo) > maxWrites || j.fifo[0].at.Before(j.newest.Add(-keepWrites))) {
		j.forget(j.fifo[0])
		j.fifo[0] = nil
		j.fifo = j.fifo[1:]
	}
	return j.heldKeys[k] > 0 || (c == classCollect && len(j.held) > 0)
}

// forget drops a write from its object's list.
func (j *Joiner) forget(w *write) {
	ws := j.writes[w.key]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(j.writes, w.key)
	} else {
		j.writes[w.key] = ws
	}
}

// Joins reports whether an object line is one a write made: a created (not listed), changed or
// deleted object.
func Joins(ev *watch.Event) bool {
	switch ev.Type {
	case watch.Added:
		return !ev.Obj.InitialList && ev.Obj.Delta != watch.DeltaSync
	case watch.Updated:
		return ev.Obj.OldResourceVersion != ev.ResourceVersion && ev.Obj.Delta != watch.DeltaSync
	case watch.Deleted:
		return true
	}
	return false
}

// Hold takes a line to match, and reports whether it is held: a line a write made, or any line
// of an object that has one held (its lines keep their order). Due hands it back (at once when
// its write was read already: Ready).
func (j *Joiner) Hold(ev watch.Event, now time.Time) bool {
	id := ev.ObjectID()
	if j.heldBy[id] == 0 {
		if !ev.Type.IsObject() || !Joins(&ev) {
			return false
		}
		if ev.Obj.Audit = j.match(&ev); ev.Obj.Audit != nil {
			j.ready = append(j.ready, ev)
			return true
		}
	}
	k := keyOf(&ev)
	j.held = append(j.held, held{ev: ev, since: now, id: id, key: k})
	j.heldBy[id]++
	j.heldKeys[k]++
	return true
}

// Ready hands back the lines matched as they came.
func (j *Joiner) Ready() []watch.Event {
	out := j.ready
	j.ready = nil
	return out
}

func keyOf(ev *watch.Event) objKey {
	return objKey{ev.Resource.Group, ev.Resource.Resource, ev.Namespace, ev.Name}
}

// Due hands back, in the order they came, the held lines matched by now (Event.Obj.Audit set) and
// those whose wait is over (unmatched); all of them when final. A line waiting keeps the later
// lines of its object waiting too.
func (j *Joiner) Due(now time.Time, final bool) []watch.Event {
	out := j.Ready()
	if len(j.held) == 0 {
		return out
	}
	var waiting map[string]bool
	kept := j.held[:0]
	over := len(j.held) - maxHeld
	for i := range j.held {
		h := j.held[i]
		if !waiting[h.id] {
			if Joins(&h.ev) && h.ev.Obj.Audit == nil {
				h.ev.Obj.Audit = j.match(&h.ev)
			}
			if h.ev.Obj.Audit != nil || !Joins(&h.ev) || final || i < over || now.Sub(h.since) >= j.wait {
				out = append(out, h.ev)
				if j.heldBy[h.id]--; j.heldBy[h.id] <= 0 {
					delete(j.heldBy, h.id)
				}
				if j.heldKeys[h.key]--; j.heldKeys[h.key] <= 0 {
					delete(j.heldKeys, h.key)
				}
				continue
			}
		}
		if waiting == nil {
			waiting = map[string]bool{}
		}
		waiting[h.id] = true
		kept = append(kept, h)
	}
	clear(j.held[len(kept):])
	j.held = kept
	return out
}

// Held is how many lines wait.
func (j *Joiner) Held() int { return len(j.held) }

// match finds the write that made an object line: the one whose response has the line's
// resourceVersion; for a delete, the object's last DELETE, else a deletecollection of its
// namespace; else, where no resourceVersion tells, the first write of the object close in time.
func (j *Joiner) match(ev *watch.Event) *watch.AuditInfo {
	k := keyOf(ev)
	ws := j.writes[k]
	want := classCreate
	switch ev.Type {
	case watch.Updated:
		want = classUpdate
	case watch.Deleted:
		want = classDelete
	}
	for _, w := range ws {
		if w.rv != "" && w.rv == ev.ResourceVersion && !w.used && (w.class == want || ev.Type == watch.Updated && w.class == classDelete) {
			return j.use(w, watch.AuditByResourceVersion)
		}
	}
	late := ev.Time.Add(j.window)
	if want == classDelete {
		if w := latest(ws, classDelete, late); w != nil {
			return j.use(w, watch.AuditByDelete)
		}
		if w := latest(j.writes[objKey{k.group, k.resource, k.namespace, ""}], classCollect, late); w != nil && ev.Time.Sub(w.at) <= keepWrites {
			return j.use(w, watch.AuditByCollection)
		}
		return nil
	}
	for _, w := range ws {
		if !w.used && w.class == want && w.rv == "" && absDur(w.at.Sub(ev.Time)) <= j.window {
			return j.use(w, watch.AuditByTime)
		}
	}
	return nil
}

// latest is the newest write of class c at or before until.
func latest(ws []*write, c class, until time.Time) *write {
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].class == c && !ws[i].at.After(until) {
			return ws[i]
		}
	}
	return nil
}

func (j *Joiner) use(w *write, how string) *watch.AuditInfo {
	w.used = true
	info := w.info
	info.Matched = how
	return &info
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
