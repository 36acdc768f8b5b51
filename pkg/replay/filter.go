package replay

import (
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Filter says which lines of a recording are replayed: lines of some types, within a span of
// time, about some resources, a namespace, some names, objects with some labels. Lines about no
// object (lists, watches, relists) pass the namespace, name and label filters. Observe must see
// every line, in order, before Keep is asked about it: the bounds are resolved against the
// first line, and an object's labels are remembered for the lines that do not carry them
// (reconciles, Events).
type Filter struct {
	// Types keeps the lines of these types; nil keeps every type.
	Types map[watch.Type]bool
	// Since and Until keep the lines from Since to Until, both included.
	Since, Until Bound
	// Resources keeps the lines about these resources; nil keeps every resource.
	Resources *ResourceFilter
	// Namespace keeps the lines about objects in it (and about cluster-scoped ones); "" keeps
	// every namespace.
	Namespace string
	// Names keeps the lines about objects whose name matches one of these shell patterns
	// (path.Match); none keeps every name.
	Names []string
	// Selector keeps the lines about objects whose labels, as last recorded, match it; nil or
	// empty keeps every object.
	Selector labels.Selector
	// ObjectTypes are the line types, besides object events, Reconciled and KubeEvent, that are
	// about the object their Namespace and Name say (the hot-loop lines).
	ObjectTypes []watch.Type

	first    bool
	labels   map[string]map[string]string // resource + key -> the last object's labels
	uidLabel map[string]map[string]string // uid -> the last object's labels (for the Events about it)
}

// Observe takes in a line of the recording, kept or not.
func (f *Filter) Observe(ev *watch.Event) {
	if !f.first {
		f.first = true
		f.Since.Resolve(ev.Time)
		f.Until.Resolve(ev.Time)
	}
	if ev.Type.IsObject() && ev.Obj.Object != nil {
		if f.labels == nil {
			f.labels, f.uidLabel = map[string]map[string]string{}, map[string]map[string]string{}
		}
		f.labels[ev.Resource.String()+" "+keyOf(ev.Namespace, ev.Name)] = ev.Obj.Object.GetLabels()
		f.uidLabel[string(ev.Obj.Object.GetUID())] = ev.Obj.Object.GetLabels()
	}
}

// Keep reports whether a line is replayed.
func (f *Filter) Keep(ev *watch.Event) bool {
	if f.Types != nil && !f.Types[ev.Type] {
		return false
	}
	if f.Since.set && ev.Time.Before(f.Since.at) {
		return false
	}
	if f.Until.set && ev.Time.After(f.Until.at) {
		return false
	}
	if f.Resources != nil && ev.Resource.Resource != "" && !f.Resources.Matches(ev.Resource) {
		return false
	}
	ns, name, ok := f.ObjectOf(ev)
	if !ok {
		return true // lines about no object stay
	}
	if f.Namespace != "" && ns != "" && ns != f.Namespace {
		return false
	}
	if len(f.Names) > 0 && !slices.ContainsFunc(f.Names, func(p string) bool { m, _ := path.Match(p, name); return m }) {
		return false
	}
	if f.Selector != nil && !f.Selector.Empty() {
		l := f.labels[ev.Resource.String()+" "+keyOf(ns, name)]
		if ev.Type.IsObject() && ev.Obj.Object != nil {
			l = ev.Obj.Object.GetLabels()
		}
		if ev.Type == watch.KubeEvent && ev.Kube != nil {
			l = f.uidLabel[ev.Kube.Regarding.UID]
		}
		if !f.Selector.Matches(labels.Set(l)) {
			return false
		}
	}
	return true
}

// ObjectOf returns the object a line is about: object events, Reconciled keys, an Event's
// regarded object, and the ObjectTypes lines.
func (f *Filter) ObjectOf(ev *watch.Event) (ns, name string, ok bool) {
	switch {
	case ev.Type.IsObject(), slices.Contains(f.ObjectTypes, ev.Type):
		return ev.Namespace, ev.Name, true
	case ev.Type == watch.KubeEvent && ev.Kube != nil: // about the object it regards
		return ev.Kube.Regarding.Namespace, ev.Kube.Regarding.Name, true
	case ev.Type == watch.Reconciled:
		if n, rest, found := strings.Cut(ev.Key, "/"); found {
			return n, rest, true
		}
		return "", ev.Key, true
	}
	return "", "", false
}

func keyOf(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// Span is the times of the first and the last line of a recording.
type Span struct{ First, Last time.Time }

// Observe takes in a line's time.
func (s *Span) Observe(t time.Time) {
	if s.First.IsZero() {
		s.First = t
	}
	if t.After(s.Last) {
		s.Last = t
	}
}
