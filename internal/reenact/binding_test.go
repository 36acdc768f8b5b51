package reenact

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var pods = discovery.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}

// A recorded binding (the scheduler's spec.nodeName, which no patch may set) is played through
// pods/binding with the uid read as its precondition, on the reenactment's own pod only: that
// of a pod it did not create is refused.
func TestPlayBindsThroughBinding(t *testing.T) {
	mine := obj(pods, "repro", "mine", map[string]any{Label: "r1"})
	theirs := obj(pods, "repro", "theirs", nil)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{pods.GVR(): "PodList"}, mine, theirs)
	var bindings []string
	dyn.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		c := a.(clienttesting.CreateActionImpl)
		b := c.Object.(*unstructured.Unstructured)
		node, _, _ := unstructured.NestedString(b.Object, "target", "name")
		bindings = append(bindings, c.Subresource+" "+b.GetName()+" "+string(b.GetUID())+" "+node)
		return true, b, nil
	})
	var log bytes.Buffer
	cfg := &Config{Name: "r1", NamespaceMap: map[string]string{"demo": "repro"}, Log: &log}
	bound := func(o *unstructured.Unstructured) watch.Event {
		rec := o.DeepCopy()
		rec.SetNamespace("demo")
		n := rec.DeepCopy()
		_ = unstructured.SetNestedField(n.Object, "node-a", "spec", "nodeName")
		return watch.Event{Type: watch.Updated, Time: at(1), Resource: pods, Namespace: "demo", Name: o.GetName(), ResourceVersion: "2", Obj: watch.ObjectInfo{OldResourceVersion: "1", Object: n, OldObject: rec}}
	}
	plan := NewPlan([]watch.Event{{Type: watch.Synced, Time: at(1), Resource: pods}, bound(mine), bound(theirs)})
	pl := newPlayer(&Clients{Dynamic: dyn}, cfg, &target{status: map[schema.GroupVersionResource]bool{pods.GVR(): true}, namespaced: map[schema.GroupVersionResource]bool{pods.GVR(): true}})
	if err := pl.play(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(bindings, "; "); got != "binding mine u-mine node-a" {
		t.Errorf("bindings %q, want mine's alone, through pods/binding at its uid\n%s", got, log.String())
	}
	if pl.stats.Bound != 1 || pl.stats.Updated != 1 || pl.stats.Refused != 1 {
		t.Errorf("stats %+v, want 1 bound (an update), 1 refused", pl.stats)
	}
}
