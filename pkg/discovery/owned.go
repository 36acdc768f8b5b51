package discovery

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ownedBy is what the built-in controllers create and own, by the owner's group and kind: the
// resources --owned follows without being told. A kind not here (a CRD's) owns only what
// --owned-resources names.
var ownedBy = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:        {"replicasets.apps"},
	{Group: "apps", Kind: "ReplicaSet"}:        {"pods"},
	{Group: "apps", Kind: "StatefulSet"}:       {"pods", "controllerrevisions.apps"},
	{Group: "apps", Kind: "DaemonSet"}:         {"pods", "controllerrevisions.apps"},
	{Group: "batch", Kind: "CronJob"}:          {"jobs.batch"},
	{Group: "batch", Kind: "Job"}:              {"pods"},
	{Group: "", Kind: "Service"}:               {"endpointslices.discovery.k8s.io"},
	{Group: "", Kind: "ReplicationController"}: {"pods"},
}

// Owned is the tree of resource types below the watched ones (--owned): for each kind, the
// resources whose objects it may own.
type Owned struct {
	// Children maps an owner's group and kind to the resources it may own.
	Children map[schema.GroupKind][]Resource
	// Resources are every resource of the tree below the roots, in the order they were found;
	// a root's own resource is not repeated.
	Resources []Resource
}

// Known reports whether any kind of the tree is known to own something: false when --owned
// has nothing to follow (watch configmaps --owned without --owned-resources). Children that are
// watched themselves count (watch deploy,rs,pods --owned).
func (o *Owned) Known() bool {
	if o == nil {
		return false
	}
	for _, kids := range o.Children {
		if len(kids) > 0 {
			return true
		}
	}
	return false
}

// ChildrenOf returns the resources an object of gk may own.
func (o *Owned) ChildrenOf(gk schema.GroupKind) []Resource {
	if o == nil {
		return nil
	}
	return o.Children[gk]
}

// ResolveOwned resolves the resources below roots, recursively: the built-in controllers'
// children of each kind, plus extra (--owned-resources), which any watched kind may own (a
// CRD's operator creates Deployments, ConfigMaps, ...). Each is resolved through discovery like
// a watched resource; a built-in child the server does not serve is skipped.
func (r *Resolver) ResolveOwned(roots []Resource, extra []string) (*Owned, error) {
	var extras []Resource
	for _, arg := range extra {
		res, err := r.Resolve(arg)
		if err != nil {
			return nil, fmt.Errorf("--owned-resources: %w", err)
		}
		extras = append(extras, res)
	}
	o := &Owned{Children: map[schema.GroupKind][]Resource{}}
	seen := map[schema.GroupVersionResource]bool{}
	for _, root := range roots {
		seen[root.GVR()] = true
	}
	queue := append([]Resource{}, roots...)
	for len(queue) > 0 {
		owner := queue[0]
		queue = queue[1:]
		gk := owner.GVK().GroupKind()
		if _, done := o.Children[gk]; done {
			continue
		}
		var kids []Resource
		for _, arg := range ownedBy[gk] {
			res, err := r.Resolve(arg)
			if err != nil {
				continue // not served here (an old or trimmed server)
			}
			kids = append(kids, res)
		}
		for _, res := range extras {
			if mayOwn(owner, res) && res.GVR() != owner.GVR() && !slices.ContainsFunc(kids, func(k Resource) bool { return k.GVR() == res.GVR() }) {
				kids = append(kids, res)
			}
		}
		o.Children[gk] = kids
		for _, k := range kids {
			if !seen[k.GVR()] {
				seen[k.GVR()] = true
				o.Resources = append(o.Resources, k)
			}
			queue = append(queue, k)
		}
	}
	for _, res := range extras {
		if !seen[res.GVR()] {
			return nil, fmt.Errorf("--owned-resources: %s is cluster-scoped, and only a cluster-scoped owner can own it (%s namespaced)", res, namespacedRoots(roots))
		}
	}
	return o, nil
}

// mayOwn reports whether objects of owner may own objects of child, as the garbage collector
// takes ownerReferences: a cluster-scoped object only by cluster-scoped owners, a namespaced one
// by cluster-scoped owners or by namespaced owners of its own namespace.
func mayOwn(owner, child Resource) bool {
	return child.Namespaced || !owner.Namespaced
}

// namespacedRoots names the watched resources for an error: "deployments.apps is",
// "deployments.apps, configmaps are".
func namespacedRoots(roots []Resource) string {
	names := make([]string, len(roots))
	for i, r := range roots {
		names[i] = r.String()
	}
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names, ", ") + " are"
}
