package recording_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The deleter a controller's log named is the one attribution a replay cannot compute again from
// the objects: a Deleted line keeps it, and decodes it back.
func TestDeleterRoundTrips(t *testing.T) {
	ref := diff.ReconcileRef{Controller: "widget", ReconcileID: "r1", Kind: "widget", Namespace: "demo", Name: "shop"}
	ev := watch.Event{
		Type: watch.Deleted,
		Obj: watch.ObjectInfo{
			Delta: watch.DeltaDeleted,
			Object: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"namespace": "demo", "name": "shop", "resourceVersion": "7"}}},
			Attribution: &diff.Attribution{Rule: diff.RuleDelete, Managers: []diff.Manager{{Manager: "widget", Operation: "Reconcile"}}, Reconcile: &ref},
		},
		Time:            time.Unix(1, 0).UTC(),
		Namespace:       "demo",
		Name:            "shop",
		ResourceVersion: "7",
		Resource:        discovery.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true},
	}
	line, err := recording.Encode(&ev, recording.Options{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := recording.DecodeLine(line)
	if err != nil {
		t.Fatalf("%v\n%s", err, line)
	}
	a := back.Event.Obj.Attribution
	if a == nil || a.Rule != diff.RuleDelete || a.Reconcile == nil || *a.Reconcile != ref || len(a.Managers) != 1 || a.Managers[0].Manager != "widget" {
		t.Errorf("decoded %+v from\n%s\nwant the delete by %+v", a, line, ref)
	}
}
