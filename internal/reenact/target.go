package reenact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// target is what prepare found out about the target cluster before writing anything.
type target struct {
	// status: the resource has a status subresource (writes of status go through it).
	status map[schema.GroupVersionResource]bool
	// namespaced: the resource is namespaced on the target (its discovery, or the CRD to be
	// made); a resource missing here is cluster-scoped.
	namespaced map[schema.GroupVersionResource]bool
	// crds to create: custom resources the target does not serve; copied from the source
	// cluster's CRD when the source has it (same index), made from the recording otherwise.
	crds   []discovery.Resource
	copied []*unstructured.Unstructured
	// namespaces to create, and those that exist and may be written into (IntoExisting).
	create, existing []string
}

// prepare checks the target: every resource of the plan served (or, with CreateCRDs, a custom
// resource whose CRD is to be made), and every target namespace absent (or IntoExisting). It
// only reads.
func prepare(ctx context.Context, c *Clients, cfg *Config, plan *Plan) (*target, error) {
	t := &target{status: map[schema.GroupVersionResource]bool{}, namespaced: map[schema.GroupVersionResource]bool{}}
	var missing []string
	for _, r := range plan.Resources {
		served, status, namespaced, err := serves(c, r)
		if err != nil {
			return nil, err
		}
		switch {
		case served:
			t.status[r.GVR()], t.namespaced[r.GVR()] = status, namespaced
		case cfg.CRDSource != nil && custom(r.Group):
			crd, err := cfg.CRDSource.Resource(crdGVR).Get(ctx, r.Resource+"."+r.Group, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading CRD %s.%s from the source cluster (nothing was written): %w", r.Resource, r.Group, err)
			}
			t.crds, t.copied = append(t.crds, r), append(t.copied, sourceCRD(crd, cfg.Name))
			t.status[r.GVR()] = recordedStatus(plan, r)
			scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
			t.namespaced[r.GVR()] = scope == "Namespaced"
		case cfg.CreateCRDs && custom(r.Group):
			t.crds, t.copied = append(t.crds, r), append(t.copied, nil)
			t.status[r.GVR()], t.namespaced[r.GVR()] = recordedStatus(plan, r), r.Namespaced
		default:
			missing = append(missing, fullName(r.GVR()))
		}
	}
	if len(missing) > 0 {
		hint := ""
		if !cfg.CreateCRDs && cfg.CRDSource == nil {
			hint = "; --create-crds makes a CRD for a custom resource from the recording, --crds-from-context copies it from the source cluster"
		}
		return nil, fmt.Errorf("the server doesn't have a resource type %q, which the recording holds (nothing was written%s)", strings.Join(missing, ","), hint)
	}
	for _, ns := range cfg.TargetNamespaces(plan) {
		if protected(ns) {
			return nil, fmt.Errorf("namespace %q is never written by a reenactment (nor are %s; map it to another with --namespace-map; nothing was written)", ns, strings.Join(ProtectedNamespaces, ", "))
		}
		_, err := c.Dynamic.Resource(namespacesGVR).Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			t.create = append(t.create, ns)
		case err != nil:
			return nil, fmt.Errorf("checking namespace %q: %w", ns, err)
		case !cfg.IntoExisting:
			return nil, fmt.Errorf("namespace %q exists: a reenactment writes only into namespaces it creates (map to another with --namespace-map, or pass --into-existing; nothing was written)", ns)
		default:
			t.existing = append(t.existing, ns)
		}
	}
	return t, nil
}

// custom reports whether group can be a CustomResourceDefinition's: a domain, and not one of
// Kubernetes' own (*.k8s.io).
func custom(group string) bool {
	return strings.Contains(group, ".") && group != "k8s.io" && !strings.HasSuffix(group, ".k8s.io")
}

// serves asks discovery whether the target serves r, whether r has a status subresource, and
// whether it is namespaced there (the target's scope, not the recording's, decides).
func serves(c *Clients, r discovery.Resource) (served, status, namespaced bool, err error) {
	gv := schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
	list, err := c.Discovery.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return false, false, false, nil
	}
	if err != nil {
		return false, false, false, fmt.Errorf("asking the server for %s: %w", gv, err)
	}
	for _, ar := range list.APIResources {
		switch ar.Name {
		case r.Resource:
			served, namespaced = true, ar.Namespaced
		case r.Resource + "/status":
			status = true
		}
	}
	return served, status, namespaced, nil
}

// recordedStatus reports whether the recording shows writes through r's status subresource.
func recordedStatus(plan *Plan, r discovery.Resource) bool {
	for _, steps := range [][]Step{plan.Initial, plan.Steps} {
		for _, s := range steps {
			if s.Resource.GVR() == r.GVR() && (s.Subresource == "status" || statusManager(s.Object) != "") {
				return true
			}
		}
	}
	return false
}

// createCRDs makes a CRD for each custom resource the target lacks, from what the recording
// knows of it (group, version, kind, scope, printer columns; its schema keeps every field),
// and waits until discovery serves it.
func (t *target) createCRDs(ctx context.Context, c *Clients, cfg *Config) error {
	for i, r := range t.crds {
		crd, from := t.copied[i], "the source cluster"
		if crd == nil {
			crd, from = crdFor(r, t.status[r.GVR()], cfg.Name), "the recording"
		}
		if _, err := c.Dynamic.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{FieldManager: DefaultManager}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", crd.GetName(), err)
		}
		fmt.Fprintf(cfg.Log, "reenact: created CRD %s from %s\n", crd.GetName(), from)
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			served, _, _, err := serves(c, r)
			return served, err
		})
		if err != nil {
			return fmt.Errorf("CRD %s not served after 30s: %w", crd.GetName(), err)
		}
	}
	return nil
}

// sourceCRD is the source cluster's CRD as the target is given it: its spec, its name, the
// reenactment's label; the source's metadata and status left out.
func sourceCRD(crd *unstructured.Unstructured, name string) *unstructured.Unstructured {
	labels := map[string]any{Label: name}
	spec, _ := crd.Object["spec"].(map[string]any)
	spec = runtime.DeepCopyJSON(spec)
	// A conversion webhook is a service of the source cluster: the target has none.
	delete(spec, "conversion")
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd.GetName(), "labels": labels},
		"spec":     spec,
	}}
}

// crdFor is a CRD for r that keeps every field (x-kubernetes-preserve-unknown-fields).
func crdFor(r discovery.Resource, status bool, name string) *unstructured.Unstructured {
	scope := "Cluster"
	if r.Namespaced {
		scope = "Namespaced"
	}
	version := map[string]any{
		"name": r.Version, "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
	}
	if status {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	var cols []any
	for _, pc := range r.PrinterColumns {
		cols = append(cols, map[string]any{"name": pc.Name, "type": pc.Type, "jsonPath": pc.JSONPath, "priority": int64(pc.Priority)})
	}
	if len(cols) > 0 {
		version["additionalPrinterColumns"] = cols
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": r.Resource + "." + r.Group, "labels": map[string]any{Label: name}},
		"spec": map[string]any{
			"group": r.Group, "scope": scope,
			"names": map[string]any{
				"plural": r.Resource, "kind": r.Kind, "singular": strings.ToLower(r.Kind), "listKind": r.Kind + "List",
			},
			"versions": []any{version},
		},
	}}
}

// createNamespaces creates the target namespaces, labelled with the reenactment.
func (t *target) createNamespaces(ctx context.Context, c *Clients, cfg *Config) error {
	for _, ns := range t.create {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{Label: cfg.Name}}}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		nsObj := &unstructured.Unstructured{Object: u}
		nsObj.SetAPIVersion("v1")
		nsObj.SetKind("Namespace")
		if _, err := c.Dynamic.Resource(namespacesGVR).Create(ctx, nsObj, metav1.CreateOptions{FieldManager: DefaultManager}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return errors.New("namespace " + ns + " was created by someone else meanwhile; nothing more was written")
			}
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		fmt.Fprintf(cfg.Log, "reenact: created namespace %s\n", ns)
	}
	return nil
}
