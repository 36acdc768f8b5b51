package discovery

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"
)

// BuiltinShortNames are the short names the Kubernetes API server gives its built-in resources
// (what `kubectl api-resources` shows), for resolving names where no server is asked: a
// recording keeps group, version, resource and kind, not short names.
var BuiltinShortNames = map[schema.GroupResource][]string{
	{Resource: "componentstatuses"}:      {"cs"},
	{Resource: "configmaps"}:             {"cm"},
	{Resource: "endpoints"}:              {"ep"},
	{Resource: "events"}:                 {"ev"},
	{Resource: "limitranges"}:            {"limits"},
	{Resource: "namespaces"}:             {"ns"},
	{Resource: "nodes"}:                  {"no"},
	{Resource: "persistentvolumeclaims"}: {"pvc"},
	{Resource: "persistentvolumes"}:      {"pv"},
	{Resource: "pods"}:                   {"po"},
	{Resource: "replicationcontrollers"}: {"rc"},
	{Resource: "resourcequotas"}:         {"quota"},
	{Resource: "serviceaccounts"}:        {"sa"},
	{Resource: "services"}:               {"svc"},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: {"crd", "crds"},
	{Group: "apps", Resource: "daemonsets"}:                                {"ds"},
	{Group: "apps", Resource: "deployments"}:                               {"deploy"},
	{Group: "apps", Resource: "replicasets"}:                               {"rs"},
	{Group: "apps", Resource: "statefulsets"}:                              {"sts"},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}:           {"hpa"},
	{Group: "batch", Resource: "cronjobs"}:                                 {"cj"},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: {"csr"},
	{Group: "events.k8s.io", Resource: "events"}:                           {"ev"},
	{Group: "networking.k8s.io", Resource: "ingresses"}:                    {"ing"},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}:              {"netpol"},
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                  {"ip"},
	{Group: "policy", Resource: "poddisruptionbudgets"}:                    {"pdb"},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:              {"pc"},
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                  {"sc"},
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}:         {"vac"},
}

// NewStaticResolver returns a Resolver over a fixed list of resources, such as the ones a
// recording names; no server is asked. A name resolves as it would against a server serving
// only these resources: plural, singular, kind, group- or version-qualified, and the built-in
// resources' short names (BuiltinShortNames; a custom resource's short names are not known).
// A name none of them answers to is a *NotFoundError whose Suggestion is the closest name.
func NewStaticResolver(resources []Resource) *Resolver {
	var groups []*restmapper.APIGroupResources
	byGroup := map[string]*restmapper.APIGroupResources{}
	var lists []*metav1.APIResourceList
	byGV := map[string]*metav1.APIResourceList{}
	for _, r := range resources {
		if r.Resource == "" || r.Version == "" {
			continue
		}
		g := byGroup[r.Group]
		if g == nil {
			g = &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: r.Group}, VersionedResources: map[string][]metav1.APIResource{}}
			byGroup[r.Group] = g
			groups = append(groups, g)
		}
		if !slices.ContainsFunc(g.Group.Versions, func(v metav1.GroupVersionForDiscovery) bool { return v.Version == r.Version }) {
			gv := metav1.GroupVersionForDiscovery{GroupVersion: r.GVR().GroupVersion().String(), Version: r.Version}
			g.Group.Versions = append(g.Group.Versions, gv)
			if g.Group.PreferredVersion.Version == "" {
				g.Group.PreferredVersion = gv
			}
		}
		if slices.ContainsFunc(g.VersionedResources[r.Version], func(ar metav1.APIResource) bool { return ar.Name == r.Resource }) {
			continue
		}
		ar := metav1.APIResource{
			Name: r.Resource, SingularName: strings.ToLower(r.Kind), Namespaced: r.Namespaced, Kind: r.Kind,
			ShortNames: BuiltinShortNames[schema.GroupResource{Group: r.Group, Resource: r.Resource}],
		}
		g.VersionedResources[r.Version] = append(g.VersionedResources[r.Version], ar)
		gvs := r.GVR().GroupVersion().String()
		l := byGV[gvs]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: gvs}
			byGV[gvs] = l
			lists = append(lists, l)
		}
		l.APIResources = append(l.APIResources, ar)
	}
	// The core group first, as the server's discovery orders it.
	slices.SortStableFunc(lists, func(a, b *metav1.APIResourceList) int {
		return boolInt(strings.Contains(a.GroupVersion, "/")) - boolInt(strings.Contains(b.GroupVersion, "/"))
	})
	return &Resolver{Mapper: shortcutMapper{RESTMapper: restmapper.NewDiscoveryRESTMapper(groups), lists: lists}, static: lists}
}

// shortcutMapper expands short names as client-go's shortcut expander does, from a fixed list of
// resources instead of a discovery client.
type shortcutMapper struct {
	meta.RESTMapper
	lists []*metav1.APIResourceList
}

func (m shortcutMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.RESTMapper.KindFor(m.expand(r))
}

func (m shortcutMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.RESTMapper.KindsFor(m.expand(r))
}

func (m shortcutMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.RESTMapper.ResourceFor(m.expand(r))
}

func (m shortcutMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return m.RESTMapper.ResourcesFor(m.expand(r))
}

// expand turns a short name into its resource, unless it is some resource's plural or singular.
// The first list with the short name wins (the core group's first, as on a server).
func (m shortcutMapper) expand(r schema.GroupVersionResource) schema.GroupVersionResource {
	name := strings.ToLower(r.Resource)
	var found *schema.GroupVersionResource
	for _, l := range m.lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		if r.Group != "" && r.Group != gv.Group {
			continue
		}
		for _, ar := range l.APIResources {
			if name == ar.Name || name == ar.SingularName {
				return r
			}
			if found == nil && slices.Contains(ar.ShortNames, name) {
				found = &schema.GroupVersionResource{Group: gv.Group, Version: r.Version, Resource: ar.Name}
			}
		}
	}
	if found == nil {
		return r
	}
	return *found
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
