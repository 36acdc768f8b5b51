package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// ResourceFilter keeps the lines of some resources of a recording (replay's --resource): names
// resolved as watch resolves them (short names, singular, kinds, resource.group,
// resource.version.group), against the resources the recording itself names, since no server
// is asked.
type ResourceFilter struct {
	arg   string
	known []discovery.Resource          // the recording's resources, in order of appearance
	seen  map[schema.GroupResource]bool // known, as a set
	match map[schema.GroupResource]bool // nil until arg resolved
	err   error                         // why arg does not resolve against known
}

// NewResourceFilter returns the filter for a comma-separated list of resource names.
func NewResourceFilter(arg string) *ResourceFilter {
	return &ResourceFilter{arg: arg, seen: map[schema.GroupResource]bool{}}
}

// Learn adds resources the recording names (its header, an Informer line, an event) and resolves
// the argument again if any is new. complete says rs is a whole run's list: then an argument
// that still does not resolve is an error.
func (f *ResourceFilter) Learn(rs []discovery.Resource, complete bool) error {
	added := false
	for _, r := range rs {
		gr := schema.GroupResource{Group: r.Group, Resource: r.Resource}
		if r.Resource == "" || r.Version == "" || f.seen[gr] {
			continue
		}
		f.seen[gr] = true
		f.known = append(f.known, r)
		added = true
	}
	if added {
		f.resolve()
	}
	if complete {
		return f.Check()
	}
	return nil
}

func (f *ResourceFilter) resolve() {
	resolved, err := discovery.NewStaticResolver(f.known).ResolveList(f.arg)
	if err != nil {
		f.err = err
		return
	}
	f.err = nil
	f.match = map[schema.GroupResource]bool{}
	for _, r := range resolved {
		f.match[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = true
	}
}

// Check returns the error for an argument the recording's resources do not answer to, in
// kubectl's words, naming what the recording has.
func (f *ResourceFilter) Check() error {
	if f.match != nil {
		return nil
	}
	err := f.err
	if err == nil {
		err = &discovery.NotFoundError{Arg: f.arg}
	}
	var nf *discovery.NotFoundError
	if !errors.As(err, &nf) {
		return fmt.Errorf("--resource %q: %w", f.arg, err)
	}
	var has []string
	for _, r := range f.known {
		has = append(has, r.String())
	}
	slices.Sort(has)
	msg := fmt.Sprintf("the recording has no resource type %q", nf.Arg)
	if len(has) == 0 {
		msg += " (it names no resources)"
	} else {
		msg += " (it has: " + strings.Join(has, ", ") + ")"
	}
	if nf.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", nf.Suggestion)
	}
	return errors.New(msg)
}

// Matches reports whether a line about r is kept.
func (f *ResourceFilter) Matches(r discovery.Resource) bool {
	_ = f.Learn([]discovery.Resource{r}, false)
	return f.match[schema.GroupResource{Group: r.Group, Resource: r.Resource}]
}
