package reenact

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// isPod reports whether s is of core pods.
func isPod(s *Step) bool {
	return s.Resource.Group == "" && s.Resource.Resource == "pods"
}

// bindingNode is the node a recorded update of a pod binds it to: the spec.nodeName the patch
// sets, which the API server takes only through the pods/binding subresource (the scheduler's
// write); "" when the patch binds nothing.
func bindingNode(s *Step, patch map[string]any) string {
	if !isPod(s) {
		return ""
	}
	spec, _ := patch["spec"].(map[string]any)
	node, _ := spec["nodeName"].(string)
	return node
}

// withoutNodeName is patch less spec.nodeName (written by the binding).
func withoutNodeName(patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range patch {
		out[k] = v
	}
	spec, _ := patch["spec"].(map[string]any)
	rest := map[string]any{}
	for k, v := range spec {
		if k != "nodeName" {
			rest[k] = v
		}
	}
	delete(out, "spec")
	if len(rest) > 0 {
		out["spec"] = rest
	}
	return out
}

// What bindStep did.
type bindResult int

const (
	bindBound bindResult = iota // bound as recorded
	bindHeld                    // the target had bound the pod to that node already
	bindOther                   // the target had bound it to another node: stated, counted
	bindDone                    // nothing more of the step is written: the pod missing or not the reenactment's
)

// bindStep reads s's pod and, when it is the reenactment's, plays the binding of s to node as
// the scheduler made it: a Binding through pods/binding, with the uid read as its precondition
// (what is written is what was checked). A pod the target bound already is not bound again.
func (p *player) bindStep(ctx context.Context, s *Step, node string) (bindResult, error) {
	target, err := p.client(s).Get(ctx, s.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		p.stats.Missing++
		return bindDone, nil
	}
	if err != nil {
		return bindDone, fmt.Errorf("reading %s %s: %w", s.Resource.Resource, p.key(s), err)
	}
	if !p.cfg.owns(target) {
		p.refuseNotOwned(s)
		return bindDone, nil
	}
	cur, _, _ := unstructured.NestedString(target.Object, "spec", "nodeName")
	switch {
	case cur == node:
		return bindHeld, nil
	case cur != "":
		p.stats.Unplayable++
		fmt.Fprintln(p.cfg.Log, printer.Escape(fmt.Sprintf("reenact: not played %s: it binds the pod to node %s, and the target bound it to %s already", p.cfg.describe(s), node, cur)))
		return bindOther, nil
	}
	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": s.Name, "namespace": target.GetNamespace(), "uid": string(target.GetUID())},
		"target":   map[string]any{"apiVersion": "v1", "kind": "Node", "name": node},
	}}
	_, err = p.client(s).Create(ctx, b, metav1.CreateOptions{FieldManager: s.Manager}, "binding")
	if apierrors.IsNotFound(err) {
		p.stats.Missing++
		return bindDone, nil
	}
	if err != nil {
		return bindDone, fmt.Errorf("binding %s %s to node %s as %s: %w", s.Resource.Resource, p.key(s), node, s.Manager, err)
	}
	p.stats.Bound++
	return bindBound, nil
}
