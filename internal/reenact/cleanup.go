package reenact

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
)

// Cleanup deletes what the reenactment name created (every reenactment's, when name is ""):
// the objects of plan's resources that carry its label (and nothing else: the server selects
// by the label, and each delete is conditional on the uid listed), its namespaces (and so everything in
// them, the controller's objects too), and the CRDs it made. It returns how many
// objects it deleted.
func Cleanup(ctx context.Context, c *Clients, plan *Plan, name string) (int, error) {
	sel := labels.NewSelector()
	var req *labels.Requirement
	var err error
	if name == "" {
		req, err = labels.NewRequirement(Label, selection.Exists, nil)
	} else {
		req, err = labels.NewRequirement(Label, selection.Equals, []string{name})
	}
	if err != nil {
		return 0, err
	}
	sel = sel.Add(*req)
	var gvrs []schema.GroupVersionResource
	for _, r := range plan.Resources {
		if gvr := r.GVR(); gvr != namespacesGVR && gvr != crdGVR {
			gvrs = append(gvrs, gvr)
		}
	}
	gvrs = append(gvrs, namespacesGVR, crdGVR)
	n := 0
	for _, gvr := range gvrs {
		list, err := c.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("listing %s to clean up: %w", gvr.Resource, err)
		}
		for _, o := range list.Items {
			if gvr == namespacesGVR && protected(o.GetName()) {
				continue // labelled by someone else: never the reenactment's
			}
			// The uid listed: an object replaced since the list is not deleted.
			uid := o.GetUID()
			opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
			var err error
			if ns := o.GetNamespace(); ns != "" {
				err = c.Dynamic.Resource(gvr).Namespace(ns).Delete(ctx, o.GetName(), opts)
			} else {
				err = c.Dynamic.Resource(gvr).Delete(ctx, o.GetName(), opts)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return n, fmt.Errorf("deleting %s %s: %w", gvr.Resource, o.GetName(), err)
			}
			n++
		}
	}
	return n, nil
}
