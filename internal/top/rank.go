package top

import (
	"cmp"
	"slices"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Ranking is what the cluster wrote over the window, at one moment.
type Ranking struct {
	At time.Time
	// Window is the span the figures cover: --window, or less while the run is younger.
	Window time.Duration
	// Elapsed since the run began.
	Elapsed time.Duration
	// Writes and Heartbeats over the window, cluster-wide.
	Writes, Heartbeats int
	Objects            []ObjectRank
	Writers            []WriterRank
	Resources          []ResourceRank
	// Skipped are the resources the user may not list or watch, each named once.
	Skipped []Skipped
	// API is who hit the API server over the window by its audit log (--audit-log); nil
	// without one.
	API *audit.LoadRanking
}

// Count is a name with how many writes it made or took.
type Count struct {
	Name   string
	Writes int
}

// ObjectRank is one object's writes over the window.
type ObjectRank struct {
	Resource, Namespace, Name string
	// Ref is the resource, resolved (for a drill into the object); zero when not known.
	Ref discovery.Resource
	// Writes are the updates that are not heartbeats; Heartbeats the others.
	Writes, Heartbeats int
	// Rate is Writes per second over the window.
	Rate float64
	// Managers wrote it (heartbeats included), most writes first; "" when nobody could be named.
	Managers []Count
	// Paths are the fields of the writers' moved entries, most written first.
	Paths []Count
	// Loop is the hot-loop diagnosis (diff.LoopFight, LoopSelf, LoopBusy) while the loop goes
	// on, "" without one; Suggestion its fix; LoopManagers the managers the diagnosis names.
	Loop, Suggestion string
	LoopManagers     []string
	// LastBy and LastChanges are the newest update's writers and changed values (redacted for
	// Secrets), from a full informer of the object while it is among the first Config.Follow
	// objects; "" otherwise.
	LastBy, LastChanges string
}

// WriterRank is one field manager's writes over the window, across the cluster.
type WriterRank struct {
	Manager string
	// Writes include heartbeats, which are also counted apart.
	Writes, Heartbeats int
	Rate               float64
	// Objects: how many objects it wrote; Resources: of which resources, most written first.
	Objects   int
	Resources []Count
}

// ResourceRank is one resource's writes over the window.
type ResourceRank struct {
	Resource           string
	Writes, Heartbeats int
	Rate               float64
	// Written: objects written in the window; Objects: objects in the cache now.
	Written, Objects int
	// Creates and Deletes over the window.
	Creates, Deletes int
}

// Skipped is a resource top does not follow: the user may not list or watch it.
type Skipped struct {
	Resource string
	Message  string
}

// Ranker counts writes in one-second buckets over a sliding window. It ranks what the
// pipeline's analysis step made of the informers' lines (top's pipeline: newRanking): an
// update's writers, the fields they moved and whether it is a heartbeat, and the hot loops the
// step found. It is pure (time comes with each line) and not safe for concurrent use.
type Ranker struct {
	Window time.Duration
	start  time.Time

	objects   map[objectKey]*objectState
	resources map[string]*resourceState
	skipped   []Skipped
	// rediagnose says an ongoing loop over its window now (analysis.Step's Rediagnose); nil:
	// the diagnosis made when it was found.
	rediagnose func(resource, namespace, name string) (diff.HotLoop, bool)
}

type objectKey struct{ resource, namespace, name string }

type objectState struct {
	buckets []bucket
	loop    *loop
}

// loop is an object's ongoing hot loop, as the analysis step diagnosed it.
type loop struct {
	kind, suggestion string
	managers         []string
}

type resourceState struct {
	ref     discovery.Resource
	objects int
	events  []eventBucket
}

type eventBucket struct {
	sec              int64
	creates, deletes int
}

// bucket is one second of an object's writes.
type bucket struct {
	sec        int64
	writes     int
	heartbeats int
	managers   map[string]int // heartbeats included; "" for nobody named
	hbManagers map[string]int // heartbeats only
	paths      map[string]int
}

// NewRanker ranks over window from start.
func NewRanker(window time.Duration, start time.Time) *Ranker {
	return &Ranker{Window: window, start: start, objects: map[objectKey]*objectState{}, resources: map[string]*resourceState{}}
}

// Add counts one line of the pipeline (its Emit): an analyzed informer line, or a hot loop
// found or ended.
func (r *Ranker) Add(ev *watch.Event) {
	res := ev.Resource.String()
	switch ev.Type {
	case watch.Synced:
		r.Learn(ev.Resource)
	case watch.Added:
		if ev.Obj.InitialList {
			r.Listed(res, 1)
		} else {
			r.Created(res, ev.Time)
		}
	case watch.Deleted:
		r.Deleted(res, ev.Namespace, ev.Name, ev.Time)
	case watch.Updated:
		r.Learn(ev.Resource)
		if ev.IsChange() {
			r.observe(ev)
		}
	case watch.HotLoop:
		if o := r.objects[objectKey{res, ev.Namespace, ev.Name}]; o != nil {
			h := ev.HotLoopInfo()
			o.loop = &loop{kind: h.Loop, suggestion: h.Suggestion, managers: slices.Clone(h.Managers)}
		}
	case watch.HotLoopEnded:
		if o := r.objects[objectKey{res, ev.Namespace, ev.Name}]; o != nil {
			o.loop = nil
		}
	case watch.Error:
		if ev.Lifecycle.Reason == "Forbidden" {
			r.Skip(Skipped{Resource: res, Message: ev.Lifecycle.Message})
		}
	}
}

// observe counts one analyzed update: its writers (Attribution), the fields they moved
// (Changes) and whether it is a heartbeat (Ignored).
func (r *Ranker) observe(ev *watch.Event) {
	k := objectKey{ev.Resource.String(), ev.Namespace, ev.Name}
	o := r.objects[k]
	if o == nil {
		o = &objectState{}
		r.objects[k] = o
	}
	sec := ev.Time.Unix()
	if n := len(o.buckets); n == 0 || o.buckets[n-1].sec < sec {
		o.buckets = append(o.buckets, bucket{sec: sec, managers: map[string]int{}, paths: map[string]int{}})
	}
	b := &o.buckets[len(o.buckets)-1]
	var managers []string
	if ev.Obj.Attribution != nil {
		for _, m := range ev.Obj.Attribution.Managers {
			if !slices.Contains(managers, m.Manager) {
				managers = append(managers, m.Manager)
			}
		}
	}
	if len(managers) == 0 {
		managers = []string{""}
	}
	if ev.Obj.Ignored { // a heartbeat
		b.heartbeats++
		if b.hbManagers == nil {
			b.hbManagers = map[string]int{}
		}
		for _, m := range managers {
			b.hbManagers[m]++
		}
	} else {
		b.writes++
		for _, c := range ev.Obj.Changes {
			b.paths[c.Path]++
		}
	}
	for _, m := range managers {
		b.managers[m]++
	}
}

// Created and Deleted count an object coming and going (not the initial list's).
func (r *Ranker) Created(resource string, at time.Time) { r.event(resource, at, 1, 0) }

// Deleted counts a delete and forgets the object's hot loop (the analysis step forgets it too).
func (r *Ranker) Deleted(resource, namespace, name string, at time.Time) {
	r.event(resource, at, 0, 1)
	if o := r.objects[objectKey{resource, namespace, name}]; o != nil {
		o.loop = nil
	}
}

func (r *Ranker) event(resource string, at time.Time, creates, deletes int) {
	rs := r.resource(resource)
	rs.objects += creates - deletes
	sec := at.Unix()
	if n := len(rs.events); n == 0 || rs.events[n-1].sec < sec {
		rs.events = append(rs.events, eventBucket{sec: sec})
	}
	e := &rs.events[len(rs.events)-1]
	e.creates += creates
	e.deletes += deletes
}

// Listed counts the objects of a resource's initial list (or a relist's additions).
func (r *Ranker) Listed(resource string, n int) { r.resource(resource).objects += n }

// Learn keeps a resource's resolved form, for ObjectRank.Ref.
func (r *Ranker) Learn(res discovery.Resource) {
	if rs := r.resource(res.String()); rs.ref.Resource == "" {
		rs.ref = res
	}
}

// Skip names a resource top does not follow (once).
func (r *Ranker) Skip(s Skipped) {
	if !slices.ContainsFunc(r.skipped, func(o Skipped) bool { return o.Resource == s.Resource }) {
		r.skipped = append(r.skipped, s)
	}
}

func (r *Ranker) resource(name string) *resourceState {
	rs := r.resources[name]
	if rs == nil {
		rs = &resourceState{}
		r.resources[name] = rs
	}
	return rs
}

// Rank drops what fell out of the window and ranks what is left at now: objects by writes
// (heartbeats apart, after), writers and resources by writes. The loops that ended by now
// have had their HotLoopEnded lines (newRanking's rank).
func (r *Ranker) Rank(now time.Time) Ranking {
	window := max(min(r.Window, now.Sub(r.start)), time.Second)
	cutoff := now.Add(-r.Window).Unix() // a bucket of second s covers [s, s+1)
	out := Ranking{At: now, Window: window, Elapsed: now.Sub(r.start), Skipped: slices.Clone(r.skipped)}
	t := newTally()
	for k, o := range r.objects {
		i := 0
		for i < len(o.buckets) && o.buckets[i].sec < cutoff {
			i++
		}
		o.buckets = o.buckets[i:]
		if len(o.buckets) == 0 && o.loop == nil {
			delete(r.objects, k)
			continue
		}
		// The loop said over its window now, not as it was found: an object first seen in
		// the middle of its loop may have been found before any writer could be named.
		if o.loop != nil && r.rediagnose != nil {
			if h, ok := r.rediagnose(k.resource, k.namespace, k.name); ok {
				o.loop = &loop{kind: h.Loop, suggestion: h.Suggestion, managers: slices.Clone(h.Managers)}
			}
		}
		or := t.object(k, o)
		if or.Writes+or.Heartbeats == 0 && o.loop == nil {
			continue
		}
		if rs := r.resources[k.resource]; rs != nil {
			or.Ref = rs.ref
		}
		out.Objects = append(out.Objects, or)
		out.Writes += or.Writes
		out.Heartbeats += or.Heartbeats
	}
	for name, rs := range r.resources {
		i := 0
		for i < len(rs.events) && rs.events[i].sec < cutoff {
			i++
		}
		rs.events = rs.events[i:]
		rr := t.resource(name)
		rr.Objects = rs.objects
		for _, e := range rs.events {
			rr.Creates += e.creates
			rr.Deletes += e.deletes
		}
	}
	t.finish(&out, window.Seconds())
	sortRanking(&out)
	return out
}

// tally adds up one ranking's writers and resources from its objects' buckets.
type tally struct {
	writers         map[string]*WriterRank
	writerObjects   map[string]map[objectKey]bool
	writerResources map[string]map[string]int
	resources       map[string]*ResourceRank
}

func newTally() *tally {
	return &tally{writers: map[string]*WriterRank{}, writerObjects: map[string]map[objectKey]bool{},
		writerResources: map[string]map[string]int{}, resources: map[string]*ResourceRank{}}
}

func (t *tally) resource(name string) *ResourceRank {
	rr := t.resources[name]
	if rr == nil {
		rr = &ResourceRank{Resource: name}
		t.resources[name] = rr
	}
	return rr
}

// object sums one object's buckets (the window's), counting its writers and resource too.
func (t *tally) object(k objectKey, o *objectState) ObjectRank {
	or := ObjectRank{Resource: k.resource, Namespace: k.namespace, Name: k.name}
	managers, paths := map[string]int{}, map[string]int{}
	for _, b := range o.buckets {
		or.Writes += b.writes
		or.Heartbeats += b.heartbeats
		for m, n := range b.managers {
			managers[m] += n
			wr := t.writers[m]
			if wr == nil {
				wr = &WriterRank{Manager: m}
				t.writers[m], t.writerObjects[m], t.writerResources[m] = wr, map[objectKey]bool{}, map[string]int{}
			}
			wr.Writes += n
			wr.Heartbeats += b.hbManagers[m]
			t.writerObjects[m][k] = true
			t.writerResources[m][k.resource] += n
		}
		for p, n := range b.paths {
			paths[p] += n
		}
	}
	or.Managers, or.Paths = counts(managers), counts(paths)
	if o.loop != nil {
		or.Loop, or.Suggestion, or.LoopManagers = o.loop.kind, o.loop.suggestion, slices.Clone(o.loop.managers)
	}
	if or.Writes+or.Heartbeats > 0 {
		rr := t.resource(k.resource)
		rr.Writes += or.Writes
		rr.Heartbeats += or.Heartbeats
		rr.Written++
	}
	return or
}

// finish sets the rates over secs and puts the writers and resources in out.
func (t *tally) finish(out *Ranking, secs float64) {
	for i := range out.Objects {
		out.Objects[i].Rate = float64(out.Objects[i].Writes) / secs
	}
	for m, wr := range t.writers {
		wr.Rate = float64(wr.Writes) / secs
		wr.Objects = len(t.writerObjects[m])
		wr.Resources = counts(t.writerResources[m])
		out.Writers = append(out.Writers, *wr)
	}
	for _, rr := range t.resources {
		rr.Rate = float64(rr.Writes) / secs
		out.Resources = append(out.Resources, *rr)
	}
}

func sortRanking(out *Ranking) {
	slices.SortFunc(out.Objects, func(a, b ObjectRank) int {
		return cmp.Or(cmp.Compare(b.Writes, a.Writes), cmp.Compare(b.Heartbeats, a.Heartbeats),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(out.Writers, func(a, b WriterRank) int {
		return cmp.Or(cmp.Compare(b.Writes-b.Heartbeats, a.Writes-a.Heartbeats), cmp.Compare(b.Writes, a.Writes), cmp.Compare(a.Manager, b.Manager))
	})
	slices.SortFunc(out.Resources, func(a, b ResourceRank) int {
		return cmp.Or(cmp.Compare(b.Writes, a.Writes), cmp.Compare(b.Heartbeats, a.Heartbeats),
			cmp.Compare(b.Creates+b.Deletes, a.Creates+a.Deletes), cmp.Compare(a.Resource, b.Resource))
	})
}

// counts sorts a tally, most first, then by name.
func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{Name: k, Writes: n})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Writes, a.Writes), cmp.Compare(a.Name, b.Name)) })
	return out
}
