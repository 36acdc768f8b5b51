package reenact

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// ProtectedNamespaces are never written by a reenactment: no object goes into them, and their
// Namespace objects are neither created, updated nor deleted, whatever the flags.
var ProtectedNamespaces = []string{"kube-system", "kube-public", "kube-node-lease", "default"}

// privilegedGroups are the API groups whose objects grant or intercept access to the whole
// cluster (RBAC, admission webhooks and policies, CRDs, APIServices): written only with
// Config.AllowPrivileged, namespaced or not.
var privilegedGroups = []string{"rbac.authorization.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io"}

// protected reports whether ns is one of ProtectedNamespaces.
func protected(ns string) bool {
	return slices.Contains(ProtectedNamespaces, ns)
}

// privileged reports whether r's objects are RBAC, admission, CRDs or APIServices.
func privileged(r discovery.Resource) bool {
	return slices.Contains(privilegedGroups, r.Group)
}

// allowsClusterScoped reports whether --allow-cluster-scoped names r: by resource
// ("clusterroles"), resource.group, resource.version.group or kind, in any case.
func (c *Config) allowsClusterScoped(r discovery.Resource) bool {
	for _, a := range c.AllowClusterScoped {
		a = strings.ToLower(a)
		if a == r.Resource || a == strings.ToLower(r.Kind) || a == r.Resource+"."+r.Group || a == fullName(r.GVR()) {
			return true
		}
	}
	return false
}

// refusal says why the reenactment may not write s, whatever the target holds ("" when it
// may); namespaced is the resource's scope on the target. It is the rule of what a recording,
// a file anyone may have written, can make reenact do with the user's credentials.
func (c *Config) refusal(s *Step, namespaced bool) string {
	r := s.Resource
	if namespaced && s.Namespace == "" {
		return "a namespaced object recorded without a namespace"
	}
	if namespaced && protected(c.TargetNamespace(s.Namespace)) {
		return "namespace " + c.TargetNamespace(s.Namespace) + " is never written"
	}
	if r.Group == "" && r.Resource == "namespaces" && protected(s.Name) {
		return "namespace " + s.Name + " is never written"
	}
	var why, flags []string
	if !namespaced && !c.allowsClusterScoped(r) {
		why, flags = append(why, "cluster-scoped"), append(flags, "--allow-cluster-scoped="+r.Resource)
	}
	if privileged(r) && !c.AllowPrivileged {
		why, flags = append(why, "a privileged kind (RBAC, admission, CRD or APIService)"), append(flags, "--allow-privileged-kinds")
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, " and ") + ": " + strings.Join(flags, " and ") + " allows it"
}

// owns reports whether obj, as the server has it, was created by this reenactment: it carries
// the reenactment's label with its name. Nothing else is ever updated or deleted.
func (c *Config) owns(obj *unstructured.Unstructured) bool {
	return obj.GetLabels()[Label] == c.Name
}

// notOwned is the refusal of an update or delete of an object the reenactment did not create.
func (c *Config) notOwned() string {
	return "not created by this reenactment (the object on the server does not carry " + Label + "=" + c.Name + ")"
}

// describe is a step as one line of a plan: "create clusterroles precious as kubectl-create".
func (c *Config) describe(s *Step) string {
	key := s.Name
	if ns := c.TargetNamespace(s.Namespace); ns != "" {
		key = ns + "/" + s.Name
	}
	out := fmt.Sprintf("%s %s %s", s.Op, groupResource(s.Resource), key)
	if s.Op != OpDelete {
		out += " as " + s.Manager
	}
	return printer.Escape(out)
}

// groupResource names r as kubectl does: "configmaps", "clusterroles.rbac.authorization.k8s.io".
func groupResource(r discovery.Resource) string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}
