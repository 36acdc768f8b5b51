// Package discovery turns what a user types ("deploy", "deployments.v1.apps", "Widget") into the
// group, version, resource and scope the informer needs, the way kubectl does: a cached discovery
// RESTMapper with the shortcut expander, over the same on-disk cache kubectl keeps.
package discovery

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// Resource is one resolved resource type.
type Resource struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Resource   string `json:"resource"` // plural, lower case
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
	// PrinterColumns are a custom resource's additionalPrinterColumns for this version, as its
	// CustomResourceDefinition declares them (AddPrinterColumns reads them); none for built-in
	// resources. A recording keeps them, so that replay evaluates them as the live run did.
	PrinterColumns []PrinterColumn `json:"printerColumns,omitempty"`
}

// PrinterColumn is one of a CRD's additionalPrinterColumns: what `kubectl get` shows for it.
type PrinterColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`               // integer, number, string, boolean or date
	JSONPath string `json:"jsonPath"`           // a JSONPath relative to the object, as the CRD gives it: ".status.replicas"
	Priority int32  `json:"priority,omitempty"` // 0: shown by `kubectl get`; more: only by -o wide
}

// GVR returns the resource's GroupVersionResource.
func (r Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// GVK returns the resource's GroupVersionKind.
func (r Resource) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// String names the resource the way kubectl prints it: "deployments.apps", "configmaps".
func (r Resource) String() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// Resettable is implemented by mappers that can drop their cached discovery data.
type Resettable interface {
	Reset()
}

// Resolver resolves resource arguments against a cached discovery client and a RESTMapper
// built on it (cli-runtime's ConfigFlags gives both).
type Resolver struct {
	Mapper    meta.RESTMapper
	Discovery discovery.CachedDiscoveryInterface

	static []*metav1.APIResourceList // NewStaticResolver's resources: no server behind them
}

// NewResolver resolves arguments as kubectl does (cli-runtime's ConfigFlags.ToRESTMapper: a
// deferred discovery RESTMapper behind the short-name expander) over dc, a disk-cached discovery
// client, with an in-memory layer between: the discovery cache's files (one per API group) are
// read once a run, not once for the mapper and again for the expander's short names (two reads
// of every group's file before each watch's first request). warn hears what the expander warns
// of (a short name several resources claim); nil drops it.
func NewResolver(dc discovery.CachedDiscoveryInterface, warn func(string)) *Resolver {
	mc := memory.NewMemCacheClient(dc)
	if warn == nil {
		warn = func(string) {}
	}
	return &Resolver{Mapper: restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(mc), mc, warn), Discovery: mc}
}

// NotFoundError is returned for a resource type the server does not serve.
type NotFoundError struct {
	Arg        string
	Suggestion string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("the server doesn't have a resource type %q", e.Arg)
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return msg
}

// Resolve maps one argument to a Resource. On a miss it invalidates the discovery cache once and
// tries again, so a CRD installed after the cache was written still resolves.
func (r *Resolver) Resolve(arg string) (Resource, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return Resource{}, errors.New("resource type must not be empty")
	}
	res, err := r.resolveOnce(arg)
	if err != nil && meta.IsNoMatchError(err) {
		r.invalidate()
		res, err = r.resolveOnce(arg)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			_, gr := schema.ParseResourceArg(arg)
			return Resource{}, &NotFoundError{Arg: gr.Resource, Suggestion: r.suggest(arg)}
		}
		return Resource{}, err
	}
	return res, nil
}

// ResolveList resolves a comma-separated list ("cm,secrets"), keeping order and dropping repeats.
func (r *Resolver) ResolveList(list string) ([]Resource, error) {
	var out []Resource
	for _, part := range strings.Split(list, ",") {
		res, err := r.Resolve(part)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o Resource) bool { return o.GVR() == res.GVR() }) {
			out = append(out, res)
		}
	}
	return out, nil
}

func (r *Resolver) invalidate() {
	if r.Discovery != nil {
		r.Discovery.Invalidate()
	}
	if m, ok := r.Mapper.(Resettable); ok {
		m.Reset()
	}
}

// resolveOnce follows kubectl's resource builder (mappingFor): first as a resource, fully
// qualified or not, then as a Kind.
func (r *Resolver) resolveOnce(arg string) (Resource, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	gvk := schema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = r.Mapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = r.Mapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		m, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return Resource{}, err
		}
		return r.fromMapping(m)
	}
	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		k := groupKind.WithVersion("")
		fullySpecifiedGVK = &k
	}
	if !fullySpecifiedGVK.Empty() {
		if m, err := r.Mapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return r.fromMapping(m)
		}
	}
	m, err := r.Mapper.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		return Resource{}, err
	}
	return r.fromMapping(m)
}

func (r *Resolver) fromMapping(m *meta.RESTMapping) (Resource, error) {
	res := Resource{
		Group:      m.Resource.Group,
		Version:    m.Resource.Version,
		Resource:   m.Resource.Resource,
		Kind:       m.GroupVersionKind.Kind,
		Namespaced: m.Scope != nil && m.Scope.Name() == meta.RESTScopeNameNamespace,
	}
	if err := r.checkVerbs(res); err != nil {
		return Resource{}, err
	}
	return res, nil
}

// checkVerbs refuses a resource the informer cannot follow (it needs list and watch).
func (r *Resolver) checkVerbs(res Resource) error {
	if r.Discovery == nil {
		return nil
	}
	list, err := r.Discovery.ServerResourcesForGroupVersion(schema.GroupVersion{Group: res.Group, Version: res.Version}.String())
	if err != nil || list == nil {
		// Discovery of verbs is best effort; the server will say no if it must.
		return nil
	}
	for _, ar := range list.APIResources {
		if ar.Name != res.Resource {
			continue
		}
		for _, verb := range []string{"list", "watch"} {
			if len(ar.Verbs) > 0 && !slices.Contains(ar.Verbs, verb) {
				return fmt.Errorf("resource %q does not support %s (supported verbs: %s): an informer needs list and watch",
					res.String(), verb, strings.Join(ar.Verbs, ","))
			}
		}
	}
	return nil
}

// Names returns every name a user may type for the served resources: plural, singular, short
// names and kinds (lower case), each also group-qualified. It reads the discovery cache, or a
// static resolver's resources.
func (r *Resolver) Names() []string {
	if r.static != nil {
		return namesFrom(r.static)
	}
	if r.Discovery == nil {
		return nil
	}
	lists, _ := r.Discovery.ServerPreferredResources()
	return namesFrom(lists)
}

func namesFrom(lists []*metav1.APIResourceList) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for group, ar := range served(lists) {
		add(ar.Name)
		add(ar.SingularName)
		add(strings.ToLower(ar.Kind))
		for _, s := range ar.ShortNames {
			add(s)
		}
		if group != "" {
			add(ar.Name + "." + group)
		}
	}
	return out
}

// WatchableNames lists what `kubectl api-resources -o name` would, less what cannot be listed
// and watched: `configmaps`, `deployments.apps`, sorted. Shell completion offers them.
func WatchableNames(lists []*metav1.APIResourceList) []string {
	var out []string
	for group, ar := range served(lists) {
		if !slices.Contains(ar.Verbs, "list") || !slices.Contains(ar.Verbs, "watch") {
			continue
		}
		name := ar.Name
		if group != "" {
			name += "." + group
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// served yields the resources of discovery lists with their group; subresources and nil lists
// (a group whose discovery failed) are left out.
func served(lists []*metav1.APIResourceList) iter.Seq2[string, metav1.APIResource] {
	return func(yield func(string, metav1.APIResource) bool) {
		for _, l := range lists {
			if l == nil {
				continue
			}
			gv, _ := schema.ParseGroupVersion(l.GroupVersion)
			for _, ar := range l.APIResources {
				if strings.Contains(ar.Name, "/") {
					continue // subresources
				}
				if !yield(gv.Group, ar) {
					return
				}
			}
		}
	}
}

// suggest returns the closest known name to arg, or "" when none is close enough.
func (r *Resolver) suggest(arg string) string {
	return closest(strings.ToLower(arg), r.Names())
}

func closest(arg string, names []string) string {
	best, bestDist := "", -1
	// A short name is two or three letters: one edit away at most, or every short name is close.
	limit := 2
	switch {
	case len(arg) <= 3:
		limit = 1
	case len(arg) > 8:
		limit = 3
	}
	for _, n := range names {
		d := levenshtein(arg, n)
		if d == 0 || d > limit {
			continue
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && n < best) {
			best, bestDist = n, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Watchable returns the resources of discovery lists (ServerPreferredResources: one version of
// each) that can be listed and watched, as an informer needs, sorted by String. A resource a
// list names twice (in two versions) is kept once, the first.
func Watchable(lists []*metav1.APIResourceList) []Resource {
	var out []Resource
	seen := map[schema.GroupResource]bool{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, ar := range l.APIResources {
			gr := schema.GroupResource{Group: gv.Group, Resource: ar.Name}
			if strings.Contains(ar.Name, "/") || seen[gr] ||
				!slices.Contains(ar.Verbs, "list") || !slices.Contains(ar.Verbs, "watch") {
				continue
			}
			seen[gr] = true
			out = append(out, Resource{Group: gv.Group, Version: gv.Version, Resource: ar.Name, Kind: ar.Kind, Namespaced: ar.Namespaced})
		}
	}
	slices.SortFunc(out, func(a, b Resource) int { return strings.Compare(a.String(), b.String()) })
	return out
}
