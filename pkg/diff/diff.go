// Package diff compares two versions of a Kubernetes object: the fields an update changed, as
// paths with their old and new values, and the field managers (metadata.managedFields) whose
// entries the update touched. It also holds the hot-loop detector. It never prints.
package diff

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Change is one changed field. A field that did not exist before has HasOld false; a field that
// is gone has HasNew false.
type Change struct {
	// Path names the field: map keys joined with dots (`spec.replicas`), keys that are not plain
	// identifiers in brackets (`metadata.labels["app.kubernetes.io/name"]`), list elements by
	// their merge key when the list has one (`spec.template.spec.containers[name=web].image`,
	// `status.conditions[type=Ready].status`), otherwise by index (`spec.args[0]`).
	Path   string
	Old    any
	New    any
	HasOld bool
	HasNew bool
	// Sensitive marks a Secret value (data, stringData, the last-applied annotation): the caller
	// must redact Old and New before showing them.
	Sensitive bool
	// Ignored marks a change at or under an --ignore-path (ComputeIgnoring, or the caller that
	// matched it):
	// human output leaves it out of the diff, JSON marks it.
	Ignored bool
	// segs is Path, structured, for matching managedFields (ownersOf).
	segs []segment
}

// ignored are the fields every update changes or that only restate the update itself.
var ignored = map[string]bool{
	"metadata.resourceVersion": true,
	"metadata.managedFields":   true,
}

// mergeKeys are the fields tried, in order, to identify the elements of a list of objects: the
// first one every element (before and after) has, with a scalar value unique within its list.
// name covers containers, env, ports, volumes, volumeMounts; type covers conditions.
var mergeKeys = []string{"name", "type", "mountPath", "containerPort", "port", "uid"}

// Compute returns the fields that differ between old and new, in a stable order (map keys
// sorted; list elements in the new list's order, then the removed ones). Maps are walked down to
// their leaves, also when one side lacks the map, so an added label is `metadata.labels.app`;
// an added or removed list element is one change holding the whole element. A list of objects
// with a merge key whose elements were only reordered gives no change. metadata.resourceVersion
// and metadata.managedFields are left out; metadata.generation is kept.
func Compute(old, new map[string]any) []Change { return ComputeIgnoring(old, new, nil) }

// ComputeIgnoring is Compute with each change at or under one of the ignored paths (Covers)
// marked Ignored as it is found.
func ComputeIgnoring(old, new map[string]any, ignore []Pattern) []Change {
	var out []Change
	w := walker{out: &out, ignore: ignore}
	w.walkMaps("", old, new, old != nil, new != nil)
	return out
}

// A segment is one step of a path: a map key, a list element by its merge key's value, or a
// list index.
type segment struct {
	key   string // map key; or the merge key of an element
	value any    // the merge key's value (elem)
	index int
	kind  byte // 'k' map key, 'e' keyed element, 'i' index
}

// walker carries the structured path down the walk; each Change gets its own copy.
type walker struct {
	out    *[]Change
	segs   []segment
	ignore []Pattern
}

func (w *walker) emit(c Change) {
	c.segs = slices.Clone(w.segs)
	for _, p := range w.ignore {
		if p.Covers(c) {
			c.Ignored = true
			break
		}
	}
	*w.out = append(*w.out, c)
}

func (w *walker) push(s segment) func() {
	w.segs = append(w.segs, s)
	return func() { w.segs = w.segs[:len(w.segs)-1] }
}

// ComputeSecret is Compute with the changes to Secret values marked Sensitive.
func ComputeSecret(old, new map[string]any) []Change {
	changes := Compute(old, new)
	for i := range changes {
		changes[i].Sensitive = IsSecretPath(changes[i].Path)
	}
	return changes
}

// LastAppliedAnnotation holds a full copy of the applied object, Secret values included.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// IsSecretPath reports whether a path (as Compute writes it) holds a Secret value or part of one:
// data, stringData, the last-applied annotation, or a map above it (reported whole only when it
// appears, disappears empty or changes type).
func IsSecretPath(path string) bool {
	for _, root := range []string{"data", "stringData"} {
		if path == root || strings.HasPrefix(path, root+".") || strings.HasPrefix(path, root+"[") {
			return true
		}
	}
	la := "metadata.annotations" + keySegment(LastAppliedAnnotation)
	return path == la || path == "metadata.annotations" || path == "metadata"
}

func join(parent, seg string) string {
	if parent == "" {
		return strings.TrimPrefix(seg, ".")
	}
	return parent + seg
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// keySegment is the path segment of a map key: `.key`, or `["key"]` when the key is not a
// plain identifier (dots, slashes, spaces...).
func keySegment(k string) string {
	if plainKey.MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

var plainValue = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)

// elemSegment is the path segment of a keyed list element: `[name=web]`, `[name="a b"]`.
func elemSegment(key string, v any) string {
	s := fmt.Sprint(v)
	if _, isString := v.(string); isString && !plainValue.MatchString(s) {
		s = strconv.Quote(s)
	}
	return "[" + key + "=" + s + "]"
}

func (w *walker) walkMaps(path string, old, new map[string]any, hasOld, hasNew bool) {
	keys := make([]string, 0, len(old)+len(new))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range new {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := join(path, keySegment(k))
		if ignored[p] {
			continue
		}
		ov, inOld := old[k]
		nv, inNew := new[k]
		pop := w.push(segment{kind: 'k', key: k})
		w.walk(p, ov, nv, inOld, inNew)
		pop()
	}
}

func (w *walker) walk(path string, old, new any, hasOld, hasNew bool) {
	if hasOld && hasNew && equal(old, new) {
		return
	}
	om, oldIsMap := old.(map[string]any)
	nm, newIsMap := new.(map[string]any)
	switch {
	case oldIsMap && newIsMap,
		oldIsMap && !hasNew && len(om) > 0,
		newIsMap && !hasOld && len(nm) > 0:
		w.walkMaps(path, om, nm, hasOld, hasNew)
		return
	}
	ol, oldIsList := old.([]any)
	nl, newIsList := new.([]any)
	if oldIsList && newIsList {
		w.walkLists(path, ol, nl)
		return
	}
	w.emit(Change{Path: path, Old: old, New: new, HasOld: hasOld, HasNew: hasNew})
}

func (w *walker) walkLists(path string, old, new []any) {
	if key := mergeKey(old, new); key != "" {
		oldByKey := make(map[any]any, len(old))
		for _, e := range old {
			oldByKey[keyOf(e, key)] = e
		}
		inNew := make(map[any]bool, len(new))
		for _, e := range new {
			k := keyOf(e, key)
			inNew[k] = true
			v := e.(map[string]any)[key]
			p := path + elemSegment(key, v)
			pop := w.push(segment{kind: 'e', key: key, value: v})
			if oe, found := oldByKey[k]; found {
				w.walk(p, oe, e, true, true)
			} else {
				w.emit(Change{Path: p, New: e, HasNew: true})
			}
			pop()
		}
		for _, e := range old {
			if k := keyOf(e, key); !inNew[k] {
				v := e.(map[string]any)[key]
				pop := w.push(segment{kind: 'e', key: key, value: v})
				w.emit(Change{Path: path + elemSegment(key, v), Old: e, HasOld: true})
				pop()
			}
		}
		return
	}
	for i := 0; i < max(len(old), len(new)); i++ {
		seg := "[" + strconv.Itoa(i) + "]"
		pop := w.push(segment{kind: 'i', index: i})
		switch {
		case i >= len(old):
			w.emit(Change{Path: path + seg, New: new[i], HasNew: true})
		case i >= len(new):
			w.emit(Change{Path: path + seg, Old: old[i], HasOld: true})
		default:
			w.walk(path+seg, old[i], new[i], true, true)
		}
		pop()
	}
}

// keyOf normalizes a merge key's value for map lookups (numbers decode as int64 or float64).
func keyOf(e any, key string) any {
	v := e.(map[string]any)[key]
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	case int32:
		return float64(n)
	}
	return v
}

// MergeKey returns the field that identifies the elements of a list of objects, as Compute names
// them (`name` for containers, `type` for conditions...), or "" when none does.
func MergeKey(list []any) string { return mergeKey(list) }

// mergeKey returns the first of mergeKeys that identifies every element of both lists, or "".
func mergeKey(lists ...[]any) string {
	empty := true
	for _, l := range lists {
		if len(l) > 0 {
			empty = false
		}
	}
	if empty {
		return ""
	}
candidates:
	for _, key := range mergeKeys {
		for _, l := range lists {
			seen := make(map[any]bool, len(l))
			for _, e := range l {
				m, ok := e.(map[string]any)
				if !ok {
					return ""
				}
				v, ok := m[key]
				if !ok || !isScalarKey(v) {
					continue candidates
				}
				k := keyOf(e, key)
				if seen[k] {
					continue candidates
				}
				seen[k] = true
			}
		}
		return key
	}
	return ""
}

func isScalarKey(v any) bool {
	switch s := v.(type) {
	case string:
		return s != ""
	case int64, int, int32, float64:
		return true
	}
	return false
}

// equal compares decoded JSON values, numbers by value whatever their Go type.
func equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, v := range av {
			w, ok := bv[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
