package analysis

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Write is one update of a metadata-only object (top's informers see no values), read from
// the objects' managedFields: who made it, which fields their entries hold, and whether it is
// a heartbeat. The step hands it on in the event (markManaged).
type Write struct {
	// Managers made it (field manager names, Attribution's), empty when nobody can be named.
	Managers []string
	// Inferred: diff.Attribute named nobody (a second write within the same second to fields
	// the writer already owned) and the one entry stamped latest was taken (see inferLatest).
	Inferred bool
	// Paths are the fields of the writers' entries that moved: those they gained, or, when they
	// gained none, every field the entries hold (metadata-only informers see no values).
	Paths []string
	// Heartbeat: the writers' entries hold a heartbeat path (Config.Heartbeats) and gained
	// nothing else, and the spec did not change.
	Heartbeat bool
	// GenerationChanged: metadata.generation moved (the spec changed).
	GenerationChanged bool
	// changes are Paths as changes without values (markManaged's Changes).
	changes []diff.Change
}

// Heartbeats are the default heartbeat paths (internal/noise's defaults), parsed.
func Heartbeats() []diff.Pattern {
	var out []diff.Pattern
	for _, s := range noise.DefaultIgnore {
		p, err := diff.ParsePattern(s)
		if err == nil {
			out = append(out, p)
		}
	}
	return out
}

// inferredWhy is the Attribution's Why of a writer named by inferLatest.
const inferredWhy = "no entry moved; the one managedFields entry stamped latest made it (metadata only)"

// markManaged analyzes an update of a metadata-only object: its writers (inferred from the
// newest entry when managedFields name nobody) become its Attribution, the fields their
// entries moved its Changes (paths, no values), a heartbeat is Ignored.
func markManaged(ev *watch.Event, heartbeats []diff.Pattern) {
	if ev.Obj.Attribution == nil { // a replayed update (the live informer attributes its own)
		a := diff.Attribute(ev.Obj.OldObject.Object, ev.Obj.Object.Object, nil)
		ev.Obj.Attribution = &a
	}
	w, ms := WriteOf(ev, heartbeats)
	if w.Inferred {
		a := *ev.Obj.Attribution
		a.Managers, a.Why = ms, inferredWhy
		ev.Obj.Attribution = &a
	}
	ev.Obj.Changes = w.changes
	if ev.Obj.Changes == nil {
		ev.Obj.Changes = []diff.Change{} // computed: no entry moved
	}
	ev.Obj.Ignored = w.Heartbeat
}

// WriteOf makes the Write of an update (watch.Event.IsChange) from the attribution the
// informer computed (diff.Attribute, as watch does) and the objects' managedFields, with the
// managers it names; a zero Write for any other event.
func WriteOf(ev *watch.Event, heartbeats []diff.Pattern) (Write, []diff.Manager) {
	if !ev.IsChange() {
		return Write{}, nil
	}
	w := Write{GenerationChanged: ev.Obj.Object.GetGeneration() != ev.Obj.OldObject.GetGeneration()}
	var ms []diff.Manager
	if ev.Obj.Attribution != nil {
		ms = ev.Obj.Attribution.Managers
	} else {
		ms = diff.Attribute(ev.Obj.OldObject.Object, ev.Obj.Object.Object, nil).Managers
	}
	if len(ms) == 0 && (ev.Obj.Attribution == nil || ev.Obj.Attribution.Rule == diff.RuleUnknown) {
		if m, ok := inferLatest(ev.Obj.Object); ok {
			ms, w.Inferred = []diff.Manager{m}, true
		}
	}
	holdsHeartbeat := len(ms) > 0 && !w.GenerationChanged
	for _, m := range ms {
		if !slices.Contains(w.Managers, m.Manager) {
			w.Managers = append(w.Managers, m.Manager)
		}
		cur, old := entryFields(ev.Obj.Object, m), entryFields(ev.Obj.OldObject, m)
		all := fieldPaths(cur)
		gained := slices.DeleteFunc(slices.Clone(all), func(c diff.Change) bool { return containsPath(fieldPaths(old), c.Path) })
		if !anyCovered(heartbeats, all) || !allCovered(heartbeats, gained) {
			holdsHeartbeat = false
		}
		moved := gained
		if len(moved) == 0 {
			moved = all
		}
		for _, c := range moved {
			if !slices.Contains(w.Paths, c.Path) {
				w.Paths = append(w.Paths, c.Path)
				// The values are fieldPaths' placeholders: metadata-only objects hold none.
				c.Old, c.New, c.HasOld, c.HasNew = nil, nil, false, false
				w.changes = append(w.changes, c)
			}
		}
	}
	w.Heartbeat = holdsHeartbeat
	return w, ms
}

// inferLatest names the writer of an update diff.Attribute could not attribute: the API server
// stamps its author's entry with the time of the write (to the second), so the author's entry
// holds the newest time of all; when exactly one entry holds it, that is the author.
func inferLatest(obj *unstructured.Unstructured) (diff.Manager, bool) {
	var newest time.Time
	var out diff.Manager
	n := 0
	for _, e := range obj.GetManagedFields() {
		if e.Time == nil {
			continue
		}
		switch t := e.Time.Time; {
		case t.After(newest):
			newest, n = t, 1
			out = diff.Manager{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource}
		case t.Equal(newest):
			n++
		}
	}
	return out, n == 1
}

// entryFields returns the fieldsV1 tree of m's entry in obj (nil when it has none).
func entryFields(obj *unstructured.Unstructured, m diff.Manager) map[string]any {
	md, _ := obj.Object["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	for _, e := range list {
		em, _ := e.(map[string]any)
		str := func(k string) string { s, _ := em[k].(string); return s }
		if str("manager") == m.Manager && str("operation") == m.Operation && str("subresource") == m.Subresource {
			tree, _ := em["fieldsV1"].(map[string]any)
			return tree
		}
	}
	return nil
}

// fieldPaths lists the fields a fieldsV1 tree holds, as diff.Change paths (`spec.replicas`,
// `status.conditions[type=Ready].lastHeartbeatTime`), so the noise patterns match them: the tree
// is made into two objects that differ at every leaf, and diff.Compute names the leaves.
func fieldPaths(tree map[string]any) []diff.Change {
	if len(tree) == 0 {
		return nil
	}
	a, _ := materialize(tree, "a").(map[string]any)
	b, _ := materialize(tree, "b").(map[string]any)
	return diff.Compute(a, b)
}

// materialize turns a fieldsV1 node into an object whose leaves are leaf: "f:" children are
// map keys, "k:" children list elements holding their key fields, "i:" and "v:" children list
// elements.
func materialize(node map[string]any, leaf string) any {
	var m map[string]any
	var l []any
	for k, child := range node {
		cm, _ := child.(map[string]any)
		switch {
		case strings.HasPrefix(k, "f:"):
			if m == nil {
				m = map[string]any{}
			}
			m[k[2:]] = materialize(cm, leaf)
		case strings.HasPrefix(k, "k:"):
			var keys map[string]any
			if json.Unmarshal([]byte(k[2:]), &keys) != nil {
				continue
			}
			el, _ := materialize(cm, leaf).(map[string]any)
			if el == nil {
				el = map[string]any{}
			}
			for kk, v := range keys {
				el[kk] = v
			}
			l = append(l, el)
		case strings.HasPrefix(k, "i:"), strings.HasPrefix(k, "v:"):
			l = append(l, leaf+strconv.Itoa(len(l)))
		}
	}
	switch {
	case m != nil:
		return m
	case l != nil:
		// A stable element order, so both sides pair their elements alike.
		slices.SortFunc(l, func(x, y any) int { return strings.Compare(elemKey(x), elemKey(y)) })
		return l
	}
	return leaf
}

func elemKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func containsPath(cs []diff.Change, path string) bool {
	return slices.ContainsFunc(cs, func(c diff.Change) bool { return c.Path == path })
}

func anyCovered(ps []diff.Pattern, cs []diff.Change) bool {
	for _, c := range cs {
		for _, p := range ps {
			if p.Covers(c) {
				return true
			}
		}
	}
	return false
}

func allCovered(ps []diff.Pattern, cs []diff.Change) bool {
	for _, c := range cs {
		if !slices.ContainsFunc(ps, func(p diff.Pattern) bool { return p.Covers(c) }) {
			return false
		}
	}
	return true
}
