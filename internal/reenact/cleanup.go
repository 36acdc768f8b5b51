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
// the objects of plan's resources that carry its label, its namespaces (and so everything in
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
		gvrs = append(gvrs, r.GVR())
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
			var err error
			if ns := o.GetNamespace(); ns != "" {
				err = c.Dynamic.Resource(gvr).Namespace(ns).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			} else {
				err = c.Dynamic.Resource(gvr).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return n, fmt.Errorf("deleting %s %s: %w", gvr.Resource, o.GetName(), err)
			}
			n++
		}
	}
	return n, nil
}
