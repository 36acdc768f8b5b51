package diff

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// MinAlternations is how many hand-overs between two managers (A→B→A→B→A is four) within the
// window make a hot loop, whatever the update count.
const MinAlternations = 4

// ConvergingFactor is how many times MaxUpdates converging updates (Update.Converging) a
// window must hold to make a hot loop on their own. A rollout's status updates
// are progress, not a loop; a status that churns without end still is.
const ConvergingFactor = 5

// Update is one observed update of an object.
type Update struct {
	At time.Time
	// Managers are the names of the managers that made it (ChangedManagers).
	Managers []string
	// Paths are the fields it changed.
	Paths []string
	// Converging marks an update that moves the object towards its spec (see Converging). It
	// counts towards MaxUpdates only when it also puts a field back to an earlier value.
	Converging bool
	// Changes, if set, are the update's changes (Compute), used to find values flipping back
	// (A→B→A) outside status. Only those outside status are kept.
	Changes []Change
	// GenerationChanged: the update changed metadata.generation (the spec).
	GenerationChanged bool

	suspect bool // counts towards MaxUpdates
}

// HotLoop is a report: one object rewritten too often, or two managers taking turns at it.
type HotLoop struct {
	Key string
	// Reason is "updates" (more than the allowed updates in the window: MaxUpdates that are not
	// converging, or ConvergingFactor times as many of any kind) or "alternating" (two managers
	// taking turns).
	Reason string
	// Managers are the managers of the episode's updates in the window, first seen first.
	Managers []string
	// Updates is how many updates the window held when the loop was found.
	Updates int
	Window  time.Duration
	// Fields are the paths changed by more than one update in the window (the ones that flip),
	// sorted; when no path changed twice, every changed path.
	Fields []string
	// Loop is the diagnosis: LoopFight, LoopSelf or LoopBusy.
	Loop string
	// Suggestion is one sentence on what usually fixes such a loop.
	Suggestion string
}

// The diagnoses of a hot loop (HotLoop.Loop).
const (
	// LoopFight: two managers taking turns on the object.
	LoopFight = "fight"
	// LoopSelf: one manager whose own writes re-trigger it: its updates change only status or
	// metadata, never the spec (metadata.generation unchanged).
	LoopSelf = "self"
	// LoopBusy: many updates without either pattern.
	LoopBusy = "busy"
)

// Diagnosis is what a window of one object's updates is: a fight, a self-triggered loop or
// just busy, with the writers and the field behind it and a suggestion.
type Diagnosis struct {
	// Loop is LoopFight, LoopSelf or LoopBusy.
	Loop string
	// Writers: for a fight, the two managers taking turns at Field (the one that started the
	// run first); for a self-triggered loop, its one writer.
	Writers []string
	// Field: for a fight, the field the two take turns at.
	Field string
	// Suggestion is one sentence on what usually fixes such a loop.
	Suggestion string
}

// Classify diagnoses the updates of one object within a window, oldest first. A fight is two
// writers flipping the same field, whoever else writes other fields in between (the deployment
// controller's status between kubectl scale's and a controller's spec.replicas); one writer
// whose updates never touch the spec, whoever else writes now and then (a person's kubectl
// annotate), re-triggers itself; anything else is busy.
func Classify(updates []Update) Diagnosis {
	if _, t := fieldTurns(updates); t.fight {
		return Diagnosis{Loop: LoopFight, Writers: t.pair, Field: t.field,
			Suggestion: fmt.Sprintf("%s and %s take turns at %s; fix: let only one of them write it", t.pair[0], t.pair[1], t.field)}
	}
	counts := map[string]int{}
	named := 0
	for _, u := range updates {
		if m := strings.Join(u.Managers, "+"); m != "" {
			counts[m]++
			named++
		}
	}
	// The one writer behind at least three quarters of the updates, if there is one (an update
	// that names several managers counts for none of them).
	dominant := ""
	for m, c := range counts {
		if !strings.Contains(m, "+") && 4*c >= 3*named {
			dominant = m
		}
	}
	if dominant != "" && selfTriggered(updates) {
		return Diagnosis{Loop: LoopSelf, Writers: []string{dominant},
			Suggestion: fmt.Sprintf("%s re-triggers itself (no spec change, each write wakes it again); fix: write status only when it changed, or filter its own updates (GenerationChangedPredicate)", dominant)}
	}
	if named == 0 {
		// No update names its writer (same-second writes a metadata-only watch cannot
		// attribute): nothing says it is neither a fight nor a self-loop.
		return Diagnosis{Loop: LoopBusy,
			Suggestion: "many writes whose writers no update names: watch the object with --diff to see who writes and what flips"}
	}
	return Diagnosis{Loop: LoopBusy,
		Suggestion: "many writes, neither a fight nor one writer re-triggering itself: see who writes (managers) and what flips (fields)"}
}

// turns is how two writers took turns at one field.
type turns struct {
	field string
	n     int      // hand-overs
	pair  []string // the one that started the run first
	// fight: at least two hand-overs, both writers wrote it, the lesser more than a quarter of
	// the two's writes (one write of a second writer makes two hand-overs, not a fight).
	fight bool
}

// fieldTurns finds, for each changed path, the hand-overs between the writers of that path
// alone (the alternations of the updates that changed it), whoever wrote other paths in
// between. It returns the most hand-overs at any field two writers fight over, and the fight to name: at a field
// outside metadata before one in it (a controller's full Update that drops an annotation
// another controller puts back is a fight too, but rarely the one the user is after), then the
// most hand-overs, then the first path in order.
func fieldTurns(updates []Update) (most int, named turns) {
	var paths []string
	for _, u := range updates {
		for _, p := range u.Paths {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	rank := func(t turns) int {
		r := 2 * t.n
		if t.fight {
			r += 1 << 20
			if !strings.HasPrefix(t.field, "metadata") {
				r += 1 << 19
			}
		}
		return r
	}
	var of []Update
	for _, p := range paths {
		of = of[:0]
		for _, u := range updates {
			if slices.Contains(u.Paths, p) {
				of = append(of, u)
			}
		}
		k, two := alternations(of)
		if len(two) != 2 || k == 0 {
			continue
		}
		counts := map[string]int{}
		for _, u := range of {
			counts[strings.Join(u.Managers, "+")]++
		}
		a, b := counts[two[0]], counts[two[1]]
		t := turns{field: p, n: k, pair: two, fight: k >= 2 && 4*min(a, b) > a+b}
		if t.fight {
			most = max(most, k)
		}
		if named.field == "" || rank(t) > rank(named) {
			named = t
		}
	}
	return most, named
}

// diagnose fills in Loop and Suggestion.
func (h *HotLoop) diagnose(updates []Update) {
	d := Classify(updates)
	h.Loop, h.Suggestion = d.Loop, d.Suggestion
}

// selfTriggered: no update of the window changed the spec (generation) or a field outside
// status and metadata.
func selfTriggered(updates []Update) bool {
	for _, u := range updates {
		if u.GenerationChanged {
			return false
		}
		for _, p := range u.Paths {
			if !strings.HasPrefix(p, "status") && !strings.HasPrefix(p, "metadata") {
				return false
			}
		}
	}
	return true
}

// HotLoopDetector finds hot loops in a stream of updates. A key reports at most once per
// episode; an episode ends when a whole window passes without an update to its key. It is pure
// (time comes with each update) and not safe for concurrent use.
type HotLoopDetector struct {
	// MaxUpdates: more than this many updates of one key within Window is a hot loop.
	MaxUpdates int
	Window     time.Duration

	keys     map[string]*episode
	observed int
	ended    []HotLoopEnd // found by Observe or Forget, handed out by Ended
}

type episode struct {
	updates  []Update // within the window, oldest first
	last     time.Time
	reported bool
	// Over the whole episode, for its end: first update, count, managers, diagnosis.
	start    time.Time
	count    int
	managers []string
	loop     string
}

// HotLoopEnd reports the end of a hot loop: a whole window passed without an update to its
// object, or the object was deleted.
type HotLoopEnd struct {
	Key string
	// Updates over the whole episode (from its first update, before the loop was found).
	Updates int
	// Duration from the episode's first update to its last.
	Duration time.Duration
	// Managers of the episode's updates, first seen first.
	Managers []string
	// Loop is the diagnosis made when it was found.
	Loop string
	// Deleted: it ended because its object was deleted.
	Deleted bool
}

func (ep *episode) end(key string, deleted bool) HotLoopEnd {
	return HotLoopEnd{Key: key, Updates: ep.count, Duration: ep.last.Sub(ep.start), Managers: ep.managers, Loop: ep.loop, Deleted: deleted}
}

// NewHotLoopDetector returns a detector; maxUpdates < 1 or window <= 0 disables it.
func NewHotLoopDetector(maxUpdates int, window time.Duration) *HotLoopDetector {
	return &HotLoopDetector{MaxUpdates: maxUpdates, Window: window, keys: map[string]*episode{}}
}

// Observe records an update of key and returns a report when it makes this episode a hot loop
// for the first time, else nil.
func (d *HotLoopDetector) Observe(key string, u Update) *HotLoop {
	if d == nil || d.MaxUpdates < 1 || d.Window <= 0 {
		return nil
	}
	d.observed++
	if d.observed%1024 == 0 {
		d.sweep(u.At)
	}
	ep := d.keys[key]
	if ep == nil || u.At.Sub(ep.last) > d.Window {
		if ep != nil && ep.reported {
			d.ended = append(d.ended, ep.end(key, false))
		}
		ep = &episode{start: u.At}
		d.keys[key] = ep
	}
	ep.last = u.At
	ep.count++
	for _, m := range u.Managers {
		if !slices.Contains(ep.managers, m) {
			ep.managers = append(ep.managers, m)
		}
	}
	cutoff := u.At.Add(-d.Window)
	i := 0
	for i < len(ep.updates) && ep.updates[i].At.Before(cutoff) {
		i++
	}
	ep.updates = ep.updates[i:]
	u.Changes = outsideStatus(u.Changes)
	u.suspect = !u.Converging || reverts(u, ep.updates)
	ep.updates = append(ep.updates, u)
	if ep.reported {
		return nil
	}
	suspects := 0
	for _, e := range ep.updates {
		if e.suspect {
			suspects++
		}
	}
	n, t := fieldTurns(ep.updates)
	alternating := n >= MinAlternations
	if !alternating && suspects <= d.MaxUpdates && len(ep.updates) <= ConvergingFactor*d.MaxUpdates {
		return nil
	}
	h := d.describe(key, ep.updates, alternating, t)
	ep.reported, ep.loop = true, h.Loop
	return &h
}

// describe is the hot loop of key over its window's updates: why it is one (two managers taking
// turns, or too many updates), its managers, the fields that flip and the diagnosis.
func (d *HotLoopDetector) describe(key string, updates []Update, alternating bool, t turns) HotLoop {
	h := HotLoop{Key: key, Updates: len(updates), Window: d.Window, Fields: flipping(updates)}
	if alternating {
		h.Reason, h.Managers = "alternating", t.pair
	} else {
		h.Reason, h.Managers = "updates", managersOf(updates)
	}
	h.diagnose(updates)
	return h
}

// Rediagnose says key's hot loop again over the updates now in its window: a loop found while
// few of its writers could be named (an object first seen in the middle of its loop, whose
// same-second writes name nobody) is said as what it is once they are. ok is false when key has
// no reported loop.
func (d *HotLoopDetector) Rediagnose(key string) (HotLoop, bool) {
	if d == nil {
		return HotLoop{}, false
	}
	ep := d.keys[key]
	if ep == nil || !ep.reported || len(ep.updates) == 0 {
		return HotLoop{}, false
	}
	n, t := fieldTurns(ep.updates)
	return d.describe(key, ep.updates, n >= MinAlternations, t), true
}

// Forget drops a key (its object was deleted); a hot loop on it ends.
func (d *HotLoopDetector) Forget(key string) {
	if d == nil {
		return
	}
	if ep := d.keys[key]; ep != nil && ep.reported {
		d.ended = append(d.ended, ep.end(key, true))
	}
	delete(d.keys, key)
}

// Ended returns the hot loops that ended by now: a whole window without an update, or their
// object deleted. Each reported loop ends once.
func (d *HotLoopDetector) Ended(now time.Time) []HotLoopEnd {
	if d == nil {
		return nil
	}
	out := d.ended
	d.ended = nil
	for k, ep := range d.keys {
		if ep.reported && now.Sub(ep.last) > d.Window {
			out = append(out, ep.end(k, false))
			delete(d.keys, k)
		}
	}
	slices.SortFunc(out, func(a, b HotLoopEnd) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Ongoing returns the hot loops not ended yet, by key (for the summary at exit).
func (d *HotLoopDetector) Ongoing() []HotLoopEnd {
	if d == nil {
		return nil
	}
	var out []HotLoopEnd
	for k, ep := range d.keys {
		if ep.reported {
			out = append(out, ep.end(k, false))
		}
	}
	slices.SortFunc(out, func(a, b HotLoopEnd) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Len is the number of keys tracked.
func (d *HotLoopDetector) Len() int { return len(d.keys) }

// sweep drops keys whose episode ended, so a long watch does not keep every key ever updated.
func (d *HotLoopDetector) sweep(now time.Time) {
	for k, ep := range d.keys {
		if now.Sub(ep.last) > d.Window && !ep.reported { // a reported one waits for Ended
			delete(d.keys, k)
		}
	}
}

// alternations counts the hand-overs in the longest run at the end of updates that involves
// only two managers (updates that name no manager are skipped), and returns the two, the one
// that started the run first.
func alternations(updates []Update) (int, []string) {
	var a, b string
	n := 0
	prev := ""
	for i := len(updates) - 1; i >= 0; i-- {
		m := strings.Join(updates[i].Managers, "+")
		if m == "" {
			continue
		}
		if m != a && m != b {
			if a != "" && b != "" {
				break
			}
			if a == "" {
				a = m
			} else {
				b = m
			}
		}
		if prev != "" && m != prev {
			n++
		}
		prev = m
	}
	// prev is the run's first manager.
	if prev == b {
		a, b = b, a
	}
	if b == "" {
		return n, []string{a}
	}
	return n, []string{a, b}
}

// outsideStatus keeps the changes reverts looks at, so a hot key's window does not hold copies of
// its status.
func outsideStatus(changes []Change) []Change {
	var out []Change
	for _, c := range changes {
		if !strings.HasPrefix(c.Path, "status.") && c.Path != "status" {
			out = append(out, c)
		}
	}
	return out
}

func managersOf(updates []Update) []string {
	var out []string
	for _, u := range updates {
		for _, m := range u.Managers {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

func flipping(updates []Update) []string {
	count := map[string]int{}
	for _, u := range updates {
		for _, p := range u.Paths {
			count[p]++
		}
	}
	var twice, all []string
	for p, n := range count {
		all = append(all, p)
		if n > 1 {
			twice = append(twice, p)
		}
	}
	if len(twice) == 0 {
		twice = all
	}
	slices.Sort(twice)
	return twice
}
