package ctrllog

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Reasons a reconcile with no trigger ran (ControllerReconcile's reason).
const (
	ReasonRetry        = "retry"        // its previous reconcile of the object failed
	ReasonRequeue      = "requeue"      // its previous reconcile asked for a requeue
	ReasonRequeueAfter = "requeueAfter" // its previous reconcile asked for one after a delay
	ReasonFirst        = "first"        // its first reconcile of the object in this run
	ReasonNotWatched   = "notWatched"   // the object's resource is not watched
	ReasonNoEvent      = "noEvent"      // none of these: a resync, or an event not watched
	ReasonBeforeWatch  = "beforeWatch"  // it started before the watch began
)

// Defaults of JoinConfig.
const (
	DefaultSkew = 100 * time.Millisecond
	DefaultHold = time.Second
	// maxHistory bounds the events kept per object for reconciles still to come.
	maxHistory = 512
	maxAge     = 15 * time.Minute
	// MaxPending bounds the reconciles waiting for their hold. Beyond it the one read first is
	// joined at once, before its hold is over, with the events observed by then (an event still
	// on its way is not among its triggers); Join.Early counts them.
	MaxPending = 1 << 17
	// maxPrev bounds the previous reconciles remembered (per controller and object); beyond it
	// the least recently used half is forgotten: such an object's next reconcile is its "first".
	maxPrev = 1 << 17
)

// JoinConfig configures a Join.
type JoinConfig struct {
	// Resources are the watched resources, Owned those --owned follows below them.
	Resources, Owned []discovery.Resource
	// Skew is how far (by this machine's clock) a watched event may come after a reconcile's
	// start by the log's clock and still be its trigger: the controller's informer and the
	// plugin's hear of a write at slightly different times, and a pod's clock may differ.
	Skew time.Duration
	// Hold is how long a reconcile waits, after its line was read, for the watch's events that
	// may still be on their way (the plugin's --order-window among them).
	Hold time.Duration
	// Began is when the watch began: a reconcile that started before it (an old line of a
	// followed file) cannot be joined to its triggers.
	Began time.Time
	// Namespace is the watch's namespace ("" all): a reconcile of an object in another one is
	// not the watch's business (kube-controller-manager's log has every namespace's), counted
	// in OutOfScope.
	Namespace string
	// MaxPending bounds the reconciles waiting for their hold (0: MaxPending).
	MaxPending int
}

// objKey names an object by its lower-cased kind.
type objKey struct{ kind, ns, name string }

type noted struct {
	at       time.Time
	t        watch.Trigger
	filtered bool // a --predicate kept it out of the workqueue
	// writer is the reconcile that wrote it (controller + reconcileID), when a log named it.
	writer string
}

// last is what a controller's previous reconcile of an object was.
type last struct {
	cut          time.Time // events up to here belonged to it
	end          time.Time
	result       string
	requeueAfter time.Duration
}

// Join turns reconciles read from controllers' logs into ControllerReconcile events, each
// with the watched events that caused it: the events of its object (and, with --owned, of the
// objects that object owns) since the same controller's previous reconcile of it, up to its
// start plus Skew. It observes every watch event and every reconcile; it is pure (no clock, no
// goroutine) and not safe for concurrent use.
type Join struct {
	cfg   JoinConfig
	kinds map[string]discovery.Resource // lower-cased kind -> watched (or owned) resource
	hist  map[objKey][]noted
	seen  map[objKey]bool
	// prev and prevOld: what each controller's previous reconcile of an object was (controller +
	// objKey), in two generations: a key not used for maxPrev/2 new keys is forgotten.
	prev, prevOld map[string]last
	// pending are the reconciles waiting for their hold, from head on (those before it are gone).
	pending []Reconcile
	head    int
	due     []Reconcile // the reconciles being joined, kept for the next
	// starts indexes pending by controller and object: the start (startOf) of each, sorted.
	starts map[pendKey][]time.Time
	// OutOfScope counts the reconciles of objects outside the watched namespace, not emitted.
	OutOfScope int
	// Early counts the reconciles joined before their hold was over, MaxPending others waiting.
	Early int
	// work counts the steps of the join (a pending reconcile looked at, a trigger weighed): the
	// tests bound it per line.
	work int
}

// pendKey is a controller's object: its reconciles follow one another.
type pendKey struct {
	controller string
	obj        ObjectRef
}

func pendKeyOf(r *Reconcile) pendKey { return pendKey{r.Controller, r.Object} }

// NewJoin returns a join over the watched resources.
func NewJoin(cfg JoinConfig) *Join {
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = MaxPending
	}
	j := &Join{cfg: cfg, kinds: map[string]discovery.Resource{}, hist: map[objKey][]noted{}, seen: map[objKey]bool{},
		prev: map[string]last{}, prevOld: map[string]last{}, starts: map[pendKey][]time.Time{}}
	for _, r := range append(append([]discovery.Resource{}, cfg.Owned...), cfg.Resources...) {
		j.kinds[strings.ToLower(r.Kind)] = r
	}
	return j
}

// Observe notes a watch event: an object event becomes a possible trigger of its object's
// reconciles, and of its owners' (Owners, with --owned).
func (j *Join) Observe(ev *watch.Event) {
	if !ev.Type.IsObject() || ev.Name == "" {
		return
	}
	kind := strings.ToLower(ev.Resource.Kind)
	k := objKey{kind, ev.Namespace, ev.Name}
	j.seen[k] = true
	if ev.Obj.InitialList {
		return // the state the run began with, not an event
	}
	t := watch.Trigger{Type: ev.Type, Delta: ev.Obj.Delta, ResourceVersion: ev.ResourceVersion, Time: ev.Time}
	if a := ev.Obj.Attribution; a != nil {
		t.Attribution = a.Rule
		for _, m := range a.Managers {
			if !contains(t.Managers, m.Manager) {
				t.Managers = append(t.Managers, m.Manager)
			}
		}
	}
	filtered := ev.Obj.Filtered != ""
	writer := ""
	if a := ev.Obj.Attribution; a != nil && a.Reconcile != nil && a.Reconcile.ReconcileID != "" {
		writer = a.Reconcile.Controller + "\x00" + a.Reconcile.ReconcileID
	}
	j.note(k, t, filtered, writer)
	// An owned object's event enqueues its owners, as Owns() and a map func on owner labels do.
	for _, o := range ev.Obj.Owners {
		ot := t
		ot.Resource, ot.Key = ev.Resource.String(), key(ev.Namespace, ev.Name)
		j.note(objKey{strings.ToLower(o.Kind), ev.Namespace, o.Name}, ot, filtered, "")
	}
}

// note keeps t for the object's reconciles to come, by every controller (each has its own cut):
// the newest maxHistory, none older than maxAge.
func (j *Join) note(k objKey, t watch.Trigger, filtered bool, writer string) {
	h := j.hist[k]
	drop := 0
	for drop < len(h) && (len(h)-drop >= maxHistory || t.Time.Sub(h[drop].at) > maxAge) {
		drop++
	}
	j.hist[k] = append(h[drop:], noted{at: t.Time, t: t, filtered: filtered, writer: writer})
}

// Add takes a reconcile read from a log; Due emits it once its hold is over. With MaxPending
// reconciles waiting already, the one read first is joined now: its event is returned.
func (j *Join) Add(r Reconcile) []watch.Event {
	j.pending = append(j.pending, r)
	j.index(&j.pending[len(j.pending)-1])
	if len(j.pending)-j.head <= j.cfg.MaxPending {
		return nil
	}
	first := j.pending[j.head]
	j.pending[j.head] = Reconcile{}
	if j.head++; j.head >= len(j.pending)/2 {
		// Compacted in place when half is gone: no new array for each reconcile taken.
		n := copy(j.pending, j.pending[j.head:])
		clear(j.pending[n:])
		j.pending, j.head = j.pending[:n], 0
	}
	j.Early++
	j.due = append(j.due[:0], first)
	return j.emit(j.due)
}

// Pending is how many reconciles wait for their hold.
func (j *Join) Pending() int { return len(j.pending) - j.head }

// index adds r's start to starts.
func (j *Join) index(r *Reconcile) {
	k, s := pendKeyOf(r), startOf(r)
	ss := j.starts[k]
	i := len(ss)
	if i > 0 && s.Before(ss[i-1]) {
		i = sort.Search(len(ss), func(n int) bool { return ss[n].After(s) })
	}
	ss = append(ss, time.Time{})
	copy(ss[i+1:], ss[i:])
	ss[i] = s
	j.starts[k] = ss
}

// unindex removes r's start from starts.
func (j *Join) unindex(r *Reconcile) {
	k, s := pendKeyOf(r), startOf(r)
	ss := j.starts[k]
	i := sort.Search(len(ss), func(n int) bool { return !ss[n].Before(s) })
	switch {
	case i == len(ss) || !ss[i].Equal(s):
		return
	case len(ss) == 1:
		delete(j.starts, k)
		return
	case i == 0:
		ss = ss[1:] // the usual case: the earliest of its object's goes first
	default:
		ss = append(ss[:i], ss[i+1:]...)
	}
	j.starts[k] = ss
}

// Due returns the ControllerReconcile events of the reconciles whose hold is over at now (by
// this machine's clock), in the order of their start by the logs' clocks.
func (j *Join) Due(now time.Time) []watch.Event { return j.DueExcept(now, nil) }

// DueExcept is Due, but a reconcile whose object waits (a line of it is still on its way to
// the pipeline: an update held for explaining) stays held.
func (j *Join) DueExcept(now time.Time, waits func(*Reconcile) bool) []watch.Event {
	hold := j.cfg.Hold
	due := j.due[:0] // reused: emit keeps none of them
	keep := j.pending[:0]
	for _, r := range j.pending[j.head:] {
		j.work++
		if now.Sub(r.Read) >= hold && (waits == nil || !waits(&r)) {
			due = append(due, r)
		} else {
			keep = append(keep, r)
		}
	}
	clear(j.pending[len(keep):])
	j.pending, j.head = keep, 0
	evs := j.emit(due)
	clear(due)
	j.due = due[:0]
	return evs
}

// Flush returns every held reconcile's event (the run ends).
func (j *Join) Flush() []watch.Event {
	due := j.pending[j.head:]
	j.pending, j.head = nil, 0
	return j.emit(due)
}

// emit joins rs (no longer pending, still indexed) in the order of their start.
func (j *Join) emit(rs []Reconcile) []watch.Event {
	sort.SliceStable(rs, func(a, b int) bool { return startOf(&rs[a]).Before(startOf(&rs[b])) })
	out := make([]watch.Event, 0, len(rs))
	for i := range rs {
		j.unindex(&rs[i])
		if ns := rs[i].Object.Namespace; j.cfg.Namespace != "" && ns != "" && ns != j.cfg.Namespace {
			j.OutOfScope++
			continue
		}
		out = append(out, j.event(&rs[i], j.nextStart(&rs[i])))
	}
	return out
}

// nextStart is when the same controller's next reconcile of the same object started, among
// those not joined yet (due after r, or still held); zero when none is known yet.
func (j *Join) nextStart(r *Reconcile) time.Time {
	ss, start := j.starts[pendKeyOf(r)], startOf(r)
	if i := sort.Search(len(ss), func(n int) bool { return ss[n].After(start) }); i < len(ss) {
		return ss[i]
	}
	return time.Time{}
}

// startOf is when r started as this machine's clock most likely saw it: the log's time, or,
// when the log's timestamps have no fraction of a second (zap's default RFC 3339), the moment
// its first line was read, when that falls within the second the log names.
func startOf(r *Reconcile) time.Time {
	if !r.Precise && !r.Read.IsZero() && !r.Read.Before(r.Start) && r.Read.Sub(r.Start) < 2*time.Second {
		return r.Read
	}
	return r.Start
}

// event joins one reconcile to its triggers. next is when the same controller's next
// reconcile of the object started (zero: not known): an event after it is that one's.
func (j *Join) event(r *Reconcile, next time.Time) watch.Event {
	start := startOf(r)
	kind := strings.ToLower(r.Object.Kind)
	res, watched := j.kinds[kind]
	if kind == "" {
		kind, res, watched = j.kindSeen(r.Object)
	}
	k := objKey{kind, r.Object.Namespace, r.Object.Name}
	info := &watch.ReconcileInfo{Controller: r.Controller, ReconcileID: r.ReconcileID, Kind: r.Object.Kind, Result: r.Result,
		Error: r.Error, RequeueAfter: r.RequeueAfter, Duration: r.Duration, DurationKnown: r.DurationKnown,
		Source: r.Source, Format: string(r.Format), Lines: r.Lines, UntrustedTime: r.UntrustedTime, Bounds: r.Bounds}
	ev := watch.Event{Type: watch.ControllerReconcile, Time: r.Start, Namespace: r.Object.Namespace, Name: r.Object.Name,
		Key: r.Object.Key(), Reconcile: info}
	if watched {
		ev.Resource = res
	}
	pk := r.Controller + "\x00" + kind + "\x00" + r.Object.Key()
	prev, hadPrev := j.lastOf(pk)
	// Events up to Skew after the start may be its triggers (the plugin heard of them a little
	// later than the controller), but never one after the next reconcile began.
	cut := start.Add(j.cfg.Skew)
	if !next.IsZero() && next.Before(cut) {
		cut = next
	}
	cut = j.beforeOwnWrite(k, r, cut, hadPrev, prev)
	// The triggers: this object's events after the previous reconcile's cut, up to this one's
	// (with no previous reconcile in this run: since the watch began).
	for _, n := range j.hist[k] {
		j.work++
		if hadPrev && !n.at.After(prev.cut) || n.at.After(cut) {
			continue // the previous reconcile's, or a later one's
		}
		ev.Queued.TriggerCount++
		if n.filtered {
			info.FilteredTriggers++
		}
		if len(ev.Queued.Triggers) == watch.MaxTriggers {
			ev.Queued.Triggers = append(ev.Queued.Triggers[:2], ev.Queued.Triggers[3:]...)
		}
		ev.Queued.Triggers = append(ev.Queued.Triggers, n.t)
	}
	if hadPrev && prev.cut.After(cut) {
		cut = prev.cut // never move a cut back: a late line must not take earlier events again
	}
	j.setLast(pk, last{cut: cut, end: r.End, result: r.Result, requeueAfter: r.RequeueAfter})
	if ev.Queued.TriggerCount == 0 {
		ev.Lifecycle.Reason, info.ReasonMessage = j.reason(r, watched, hadPrev, prev)
	}
	return ev
}

// lastOf is what the controller's previous reconcile of an object was (pk), if remembered.
func (j *Join) lastOf(pk string) (last, bool) {
	if l, ok := j.prev[pk]; ok {
		return l, true
	}
	l, ok := j.prevOld[pk]
	return l, ok
}

// setLast remembers l for pk; past maxPrev/2 keys the older generation is forgotten.
func (j *Join) setLast(pk string, l last) {
	if _, ok := j.prev[pk]; !ok && len(j.prev) >= maxPrev/2 {
		j.prevOld, j.prev = j.prev, make(map[string]last, maxPrev/2)
	}
	delete(j.prevOld, pk)
	j.prev[pk] = l
}

// beforeOwnWrite moves cut back to just before the first update of k that r itself wrote (a log
// named it, Explainer): r read the object before writing it, so neither that update nor a later
// one is its trigger; they are the next reconcile's.
func (j *Join) beforeOwnWrite(k objKey, r *Reconcile, cut time.Time, hadPrev bool, prev last) time.Time {
	if r.ReconcileID == "" {
		return cut
	}
	own := r.Controller + "\x00" + r.ReconcileID
	for _, n := range j.hist[k] {
		j.work++
		if hadPrev && !n.at.After(prev.cut) || n.at.After(cut) {
			continue
		}
		if n.writer == own {
			return n.at.Add(-time.Nanosecond)
		}
	}
	return cut
}

// kindOf is the lower-cased kind of the object a reconcile names: the log's, else the watched
// resource the object was seen in; "" when neither tells.
func (j *Join) kindOf(o ObjectRef) string {
	if o.Kind != "" {
		return strings.ToLower(o.Kind)
	}
	kind, _, _ := j.kindSeen(o)
	return kind
}

// kindSeen finds the kind of an object the log names without one: the watched resource the
// plugin saw an object of that namespace and name in (the watched resources first).
func (j *Join) kindSeen(o ObjectRef) (string, discovery.Resource, bool) {
	for _, r := range append(append([]discovery.Resource{}, j.cfg.Resources...), j.cfg.Owned...) {
		kind := strings.ToLower(r.Kind)
		if j.seen[objKey{kind, o.Namespace, o.Name}] {
			return kind, r, true
		}
	}
	if len(j.cfg.Resources) == 1 {
		r := j.cfg.Resources[0]
		return strings.ToLower(r.Kind), r, true
	}
	return "", discovery.Resource{}, false
}

// reason says why a reconcile with no trigger ran.
func (j *Join) reason(r *Reconcile, watched, hadPrev bool, prev last) (string, string) {
	switch {
	case !j.cfg.Began.IsZero() && startOf(r).Before(j.cfg.Began):
		return ReasonBeforeWatch, "it started before the watch began (an earlier line of the log): its triggers were not seen"
	case !watched:
		what := r.Object.Kind
		if what == "" {
			what = "its resource"
		}
		return ReasonNotWatched, fmt.Sprintf("%s %s is not watched: add %s to the watched resources (or to --owned-resources) to see what triggers it", what, r.Object.Key(), strings.ToLower(what))
	case hadPrev && prev.result == ResultError:
		return ReasonRetry, "a retry: its previous reconcile of it failed and the key was requeued rate-limited"
	case hadPrev && prev.result == ResultRequeueAfter:
		return ReasonRequeueAfter, fmt.Sprintf("its previous reconcile asked to be requeued after %s", prev.requeueAfter)
	case hadPrev && prev.result == ResultRequeue:
		return ReasonRequeue, "its previous reconcile asked to be requeued"
	case !hadPrev:
		return ReasonFirst, "its first reconcile of the object in this run: its informer's initial list, or an event from before the watch began"
	}
	return ReasonNoEvent, "no watched event since its previous reconcile: a resync, or an event of a resource not watched (--owned, --owned-resources)"
}

func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
