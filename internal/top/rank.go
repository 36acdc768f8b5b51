package top

import (
	"cmp"
	"slices"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
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

// Ranker counts writes in one-second buckets over a sliding window, and finds hot loops with
// the detector watch uses (diff.HotLoopDetector). It is pure (time comes with each write) and
// not safe for concurrent use.
type Ranker struct {
	Window time.Duration
	start  time.Time

	objects   map[objectKey]*objectState
	resources map[string]*resourceState
	loops     *diff.HotLoopDetector
	loopKeys  map[string]objectKey // detector key -> object, for the loops reported
	skipped   []Skipped
}

type objectKey struct{ resource, namespace, name string }

// detectorKey is the hot-loop detector's key for an object.
func (k objectKey) detectorKey() string { return k.resource + " " + k.namespace + "/" + k.name }

type objectState struct {
	buckets []bucket
	loop    *diff.HotLoop
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

// NewRanker ranks over window; hot loops are more than maxUpdates updates of one object within
// loopWindow, or two managers taking turns (watch's --hot-loop-updates and --hot-loop-window).
func NewRanker(window time.Duration, maxUpdates int, loopWindow time.Duration, start time.Time) *Ranker {
	return &Ranker{Window: window, start: start, objects: map[objectKey]*objectState{},
		resources: map[string]*resourceState{}, loops: diff.NewHotLoopDetector(maxUpdates, loopWindow), loopKeys: map[string]objectKey{}}
}

// Observe counts one write.
func (r *Ranker) Observe(w Write) {
	k := objectKey{w.Resource, w.Namespace, w.Name}
	o := r.objects[k]
	if o == nil {
		o = &objectState{}
		r.objects[k] = o
	}
	sec := w.At.Unix()
	if n := len(o.buckets); n == 0 || o.buckets[n-1].sec < sec {
		o.buckets = append(o.buckets, bucket{sec: sec, managers: map[string]int{}, paths: map[string]int{}})
	}
	b := &o.buckets[len(o.buckets)-1]
	managers := w.Managers
	if len(managers) == 0 {
		managers = []string{""}
	}
	if w.Heartbeat {
		b.heartbeats++
		if b.hbManagers == nil {
			b.hbManagers = map[string]int{}
		}
		for _, m := range managers {
			b.hbManagers[m]++
		}
	} else {
		b.writes++
		for _, p := range w.Paths {
			b.paths[p]++
		}
	}
	for _, m := range managers {
		b.managers[m]++
	}
	// Heartbeats are noise, not a loop, as watch's detector sees them (ignored updates).
	if w.Heartbeat {
		return
	}
	u := diff.Update{At: w.At, Managers: w.Managers, Paths: w.Paths, GenerationChanged: w.GenerationChanged}
	if h := r.loops.Observe(k.detectorKey(), u); h != nil {
		o.loop = h
		r.loopKeys[h.Key] = k
	}
}

// Created and Deleted count an object coming and going (not the initial list's).
func (r *Ranker) Created(resource string, at time.Time) { r.event(resource, at, 1, 0) }

// Deleted counts a delete and forgets the object's hot loop.
func (r *Ranker) Deleted(resource, namespace, name string, at time.Time) {
	r.event(resource, at, 0, 1)
	r.loops.Forget(objectKey{resource, namespace, name}.detectorKey())
	delete(r.loopKeys, objectKey{resource, namespace, name}.detectorKey())
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
// (heartbeats apart, after), writers and resources by writes.
func (r *Ranker) Rank(now time.Time) Ranking {
	for _, e := range r.loops.Ended(now) {
		if o := r.objects[r.loopKeys[e.Key]]; o != nil {
			o.loop = nil
		}
		delete(r.loopKeys, e.Key)
	}
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
		if o.loop != nil {
			if h, ok := r.loops.Rediagnose(k.detectorKey()); ok {
				o.loop = &h
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
		or.Loop, or.Suggestion, or.LoopManagers = o.loop.Loop, o.loop.Suggestion, slices.Clone(o.loop.Managers)
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
