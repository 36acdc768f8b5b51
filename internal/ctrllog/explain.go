package ctrllog

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Limits of what an Explainer keeps.
const (
	// maxSpans bounds the ended reconciles kept, all objects together; beyond it the oldest go.
	// A hot loop ends a reconcile every few milliseconds: they must outlive the hold.
	maxSpans = 1 << 16
	// maxHeld bounds the updates held; beyond it the oldest are released unexplained.
	maxHeld = 8192
	// inflightAge is how long a released update may keep its object's reconciles waiting for it to
	// be observed.
	inflightAge = 5 * time.Second
	// maxDeleters bounds the objects kept that ended reconciles said they deleted.
	maxDeleters = 4096
	// deleteHeard is how long after a reconcile ended a delete it said it made may be heard: a
	// graceful deletion ends (its Deleted line) when the kubelet is done, up to the pod's grace
	// period later.
	deleteHeard = time.Minute
)

// span is one reconcile's time on this machine's clock: the log's own timestamps when they have
// a fraction of a second, else when its first and last lines were read.
type span struct {
	controller, id string
	obj            objName
	kind           string // lower-cased; "" when neither the log nor the watch tells
	lo, hi         time.Time
	open           bool
	// deleted are the names its delete lines give (Reconcile.Deleted).
	deleted []string
}

func spanOf(r *Reconcile, kind string) span {
	lo, hi := r.Start, r.End
	if !r.Precise && !r.Read.IsZero() {
		lo, hi = r.Read, r.LastRead
		if hi.IsZero() {
			hi = lo
		}
	}
	return span{controller: r.Controller, id: r.ReconcileID, obj: objName{r.Object.Namespace, r.Object.Name}, kind: kind, lo: lo, hi: hi,
		deleted: r.Deleted}
}

// objName names an object by namespace and name; the kind is matched apart.
type objName struct{ ns, name string }

type heldUpdate struct {
	ev    watch.Event
	since time.Time
}

// Explainer holds the updates that managedFields attribute to nobody (an object created with no
// fields of its own never gets any) for up to hold, while the controllers' logs are read, and
// names the controller whose reconcile of that object was running when the update landed
// (diff.RuleReconcile). It holds the later lines of a held object too, so one object's lines
// keep their order. Pure: no clock, no goroutine; not safe for concurrent use.
type Explainer struct {
	skew, hold time.Duration
	spans      spanIndex[objName] // the ended reconciles, by the object reconciled
	held       []heldUpdate
	heldBy     map[string]int // watch.Event.ObjectID → lines held
	// deletedBy indexes the ended reconciles whose lines said they deleted an object by its
	// "kind/name" (Reconcile.Deleted).
	deletedBy spanIndex[string]
	inflight  map[string]inflight
}

// spanIndex holds spans by key, at most limit of them in all: past it, the oldest added goes.
type spanIndex[K comparable] struct {
	by    map[K][]span
	order []K // the key of each span kept, oldest first
	limit int
}

func newSpanIndex[K comparable](limit int) spanIndex[K] {
	return spanIndex[K]{by: map[K][]span{}, limit: limit}
}

func (ix *spanIndex[K]) add(k K, s span) {
	ix.by[k] = append(ix.by[k], s)
	ix.order = append(ix.order, k)
	if len(ix.order) <= ix.limit {
		return
	}
	old := ix.order[0]
	ix.order = ix.order[1:]
	if ss := ix.by[old]; len(ss) > 1 {
		ix.by[old] = ss[1:]
	} else {
		delete(ix.by, old)
	}
}

// inflight is a released line not yet observed: when it came, when it was released.
type inflight struct{ at, released time.Time }

// NewExplainer returns an explainer tolerating skew between the logs' clocks and the watch,
// holding an update up to hold.
func NewExplainer(skew, hold time.Duration) *Explainer {
	return &Explainer{skew: skew, hold: hold, spans: newSpanIndex[objName](maxSpans), heldBy: map[string]int{}, inflight: map[string]inflight{},
		deletedBy: newSpanIndex[string](maxDeleters)}
}

// Ended notes a reconcile read from a log (its end read, or its log quiet); kind is its object's
// lower-cased kind, "" when not known.
func (x *Explainer) Ended(r *Reconcile, kind string) {
	for _, d := range r.Deleted {
		if strings.Count(d, "/") != 1 { // its "kind/namespace/name" form: the span is under "kind/name"
			continue
		}
		x.deletedBy.add(d, spanOf(r, kind))
	}
	x.spans.add(objName{r.Object.Namespace, r.Object.Name}, spanOf(r, kind))
}

// Hold takes an informer line and reports whether it is held: an update no managedFields entry
// explains, or any line of an object that has one held.
func (x *Explainer) Hold(ev watch.Event, now time.Time) bool {
	id := ev.ObjectID()
	if x.heldBy[id] == 0 && !explainable(&ev) {
		return false
	}
	x.held = append(x.held, heldUpdate{ev: ev, since: now})
	x.heldBy[id]++
	return true
}

// Holds reports whether a line of the object (namespace, name) that came by until is held, or
// released but not yet observed: a reconcile whose triggers may include it (until is its start
// plus the skew) must wait for it.
func (x *Explainer) Holds(ns, name string, until, now time.Time) bool {
	for _, h := range x.held {
		if h.ev.Namespace == ns && h.ev.Name == name && !h.ev.Time.After(until) {
			return true
		}
	}
	for k, f := range x.inflight {
		if now.Sub(f.released) >= inflightAge {
			delete(x.inflight, k)
			continue
		}
		if !f.at.After(until) && strings.HasPrefix(k, ns+"/"+name+"\x00") {
			return true
		}
	}
	return false
}

// Observed notes that a released line went through the pipeline.
func (x *Explainer) Observed(ev *watch.Event) {
	if len(x.inflight) > 0 {
		delete(x.inflight, inflightKey(ev))
	}
}

func inflightKey(ev *watch.Event) string {
	return ev.Namespace + "/" + ev.Name + "\x00" + ev.Resource.String() + "\x00" + ev.ResourceVersion
}

// Due releases, in the order they came, the held updates whose hold is over at now (explained by
// the reconciles known then: the ended ones and open, those still running) and the lines that
// waited only behind them; all of them when final.
func (x *Explainer) Due(now time.Time, open []span, final bool) []watch.Event {
	var out []watch.Event
	keep := x.held[:0]
	waiting := map[string]bool{} // objects with an earlier line still held
	for i, h := range x.held {
		id := h.ev.ObjectID()
		over := final || now.Sub(h.since) >= x.hold || len(x.held)-i > maxHeld
		explainable := explainable(&h.ev)
		if waiting[id] || (!over && explainable) {
			waiting[id] = true
			keep = append(keep, h)
			continue
		}
		if explainable {
			x.explain(&h.ev, open)
		}
		x.heldBy[id]--
		if x.heldBy[id] == 0 {
			delete(x.heldBy, id)
		}
		x.inflight[inflightKey(&h.ev)] = inflight{at: h.ev.Time, released: now}
		out = append(out, h.ev)
	}
	clear(x.held[len(keep):])
	x.held = keep
	return out
}

// explain names the controller whose reconcile of ev's object wrote it, when the logs allow one
// answer: per controller, the reconcile the update triggered is found as the join finds it (the
// first whose start plus the skew, or the next one's start, is not before the update came), and
// the writer is the one before it, if the update came by its end plus the skew; with no
// reconcile triggered, the last one begun before the update (its id left out when several of the
// controller's reconciles ran that close to the update). An update is never both a
// reconcile's trigger and its write: an outside write that wakes an idle controller stays
// unnamed. Writers of several controllers: nobody is named, and the line says so.
//
// A delete (a Deleted line, or the update a DELETE request made) is explained by explainDelete.
func (x *Explainer) explain(ev *watch.Event, open []span) {
	if isDelete(ev) {
		x.explainDelete(ev, open)
		return
	}
	kind, obj := strings.ToLower(ev.Resource.Kind), objName{ev.Namespace, ev.Name}
	byController := map[string][]span{}
	add := func(s span) {
		if s.obj == obj && (s.kind == "" || s.kind == kind) {
			byController[s.controller] = append(byController[s.controller], s)
		}
	}
	for _, s := range x.spans.by[obj] {
		add(s)
	}
	for _, s := range open {
		add(s)
	}
	var writers []span
	sure := true
	for _, ss := range byController {
		if w, one, ok := writerAmong(ss, ev.Time, x.skew); ok {
			writers = append(writers, w)
			sure = sure && one
		}
	}
	switch {
	case len(writers) == 0:
		return
	case len(writers) > 1:
		names := make([]string, 0, len(writers))
		for _, w := range writers {
			names = append(names, w.controller)
		}
		sort.Strings(names)
		a := *ev.Obj.Attribution
		a.Why += fmt.Sprintf("; reconciles of it by %s were all running when it landed: the logs cannot tell which wrote it", strings.Join(names, ", "))
		ev.Obj.Attribution = &a
		return
	}
	w := writers[0]
	a := *ev.Obj.Attribution
	a.Rule, a.Why = diff.RuleReconcile, ""
	a.Managers = []diff.Manager{{Manager: w.controller, Operation: "Reconcile"}}
	a.Reconcile = &diff.ReconcileRef{Controller: w.controller, ReconcileID: w.id}
	if !sure {
		a.Reconcile.ReconcileID = ""
		a.Why = "several of its reconciles of the object ran within --controller-logs-skew of the update: which of them wrote it is not known"
	}
	ev.Obj.Attribution = &a
}

// explainDelete names the controller whose reconcile said, in a line of its log, that it deleted
// ev's object (a line speaking of a delete that gives the object's name as a value), when that
// reconcile ran as the delete was heard (from its start, less the skew, to deleteHeard after its
// end). Timing alone never names a deleter: a delete from outside wakes the owner's controller
// as surely as its own delete does. Reconciles of several controllers: nobody is named; several
// of one controller: the controller, not which reconcile.
func (x *Explainer) explainDelete(ev *watch.Event, open []span) {
	var found []span
	consider := func(s span) {
		kind := strings.ToLower(ev.Resource.Kind)
		named := slices.Contains(s.deleted, kind+"/"+ev.Name) && (s.obj.ns == "" || s.obj.ns == ev.Namespace) ||
			ev.Namespace != "" && slices.Contains(s.deleted, kind+"/"+ev.Namespace+"/"+ev.Name)
		if !named {
			return
		}
		if ev.Time.Before(s.lo.Add(-x.skew)) || !s.open && ev.Time.After(s.hi.Add(x.skew+deleteHeard)) {
			return
		}
		found = append(found, s)
	}
	for _, s := range x.deletedBy.by[strings.ToLower(ev.Resource.Kind)+"/"+ev.Name] {
		consider(s)
	}
	for _, s := range open {
		consider(s)
	}
	if len(found) == 0 || slices.ContainsFunc(found, func(s span) bool { return s.controller != found[0].controller }) {
		return
	}
	w := found[0]
	a := diff.Attribution{Rule: diff.RuleDelete}
	if ev.Obj.Attribution != nil {
		a = *ev.Obj.Attribution
	}
	a.Rule, a.Why = diff.RuleDelete, ""
	a.Managers = []diff.Manager{{Manager: w.controller, Operation: "Reconcile"}}
	a.Reconcile = &diff.ReconcileRef{Controller: w.controller}
	if len(found) == 1 {
		a.Reconcile.ReconcileID = w.id
		if w.obj != (objName{ev.Namespace, ev.Name}) || w.kind != "" && w.kind != strings.ToLower(ev.Resource.Kind) {
			a.Reconcile.Kind, a.Reconcile.Namespace, a.Reconcile.Name = w.kind, w.obj.ns, w.obj.name
		}
	} else {
		a.Why = "several of its reconciles said they deleted it: which of them did is not known"
	}
	ev.Obj.Attribution = &a
}

// explainable reports whether ev is a line the Explainer may name a writer for: an update
// managedFields attribute to nobody, a DELETE request's update (deletes record no manager),
// or a Deleted line (not a relist's tombstone: when it was deleted is not known).
func explainable(ev *watch.Event) bool {
	if ev.Type == watch.Deleted {
		return ev.Obj.Attribution == nil && !ev.Obj.Tombstone && !ev.Obj.InitialList
	}
	a := ev.Obj.Attribution
	return ev.IsChange() && a != nil && (a.Explainable() || a.Rule == diff.RuleDelete && len(a.Managers) == 0)
}

// isDelete reports whether ev is a Deleted line or the update a DELETE request made.
func isDelete(ev *watch.Event) bool {
	return ev.Type == watch.Deleted || ev.Obj.Attribution != nil && ev.Obj.Attribution.Rule == diff.RuleDelete
}

// writerAmong finds, among one controller's reconciles of an object, the one that wrote an
// update heard at t (see explain). sure is false when another of its reconciles ran within the
// skew of t (a hot loop's, every few milliseconds): the controller is known, not which of its
// reconciles, since the watch delivers a write a varying few milliseconds after it landed.
func writerAmong(ss []span, t time.Time, skew time.Duration) (w span, sure, ok bool) {
	sort.Slice(ss, func(i, j int) bool { return ss[i].lo.Before(ss[j].lo) })
	// The reconciles begun before t: the writer is among them (a write lands inside its reconcile,
	// and is heard after it lands).
	n := sort.Search(len(ss), func(i int) bool { return !ss[i].lo.Before(t) })
	triggered := -1
	for k := range ss {
		cut := ss[k].lo.Add(skew)
		if k+1 < len(ss) && ss[k+1].lo.Before(cut) {
			cut = ss[k+1].lo
		}
		if !t.After(cut) {
			n, triggered = k, k // the update is reconcile k's trigger: its writer began before k
			break
		}
	}
	if n == 0 {
		return span{}, false, false
	}
	w = ss[n-1]
	if !w.open && t.After(w.hi.Add(skew)) {
		return span{}, false, false
	}
	sure = triggered < 0 || !ss[triggered].lo.Before(w.hi)
	for j := range ss {
		if j != n-1 && j != triggered && !ss[j].lo.After(t.Add(skew)) && (ss[j].open || !ss[j].hi.Before(t.Add(-skew))) {
			sure = false
		}
	}
	return w, sure, true
}
