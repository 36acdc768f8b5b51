package state_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/state"
)

// What state an object is in, as one line: kstatus's status and message, and a summary of the
// kind's own columns, as `kubectl get` shows them. A built-in kind is read by its kind; a custom
// resource by its CRD's printer columns.
func Example() {
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "demo", "creationTimestamp": "2026-11-28T10:00:00Z"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.28"}}},
		"status": map[string]any{"phase": "Running",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
			"containerStatuses": []any{map[string]any{"name": "web", "ready": true, "restartCount": int64(2),
				"state": map[string]any{"running": map[string]any{"startedAt": "2026-11-28T10:01:00Z"}}}}},
	}}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "generation": int64(4)},
		"spec":     map[string]any{"replicas": int64(3)},
		"status": map[string]any{"observedGeneration": int64(4), "conditions": []any{map[string]any{
			"type": "Ready", "status": "False", "reason": "Waiting", "message": "waiting for the database"}}},
	}}
	widgetColumns := []discovery.PrinterColumn{
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
	}

	at := time.Date(2026, 11, 28, 10, 5, 0, 0, time.UTC) // the event's time
	for _, o := range []struct {
		obj    *unstructured.Unstructured
		reader *state.Reader
	}{{pod, state.NewReader(nil)}, {widget, state.NewReader(widgetColumns)}} {
		s := o.reader.Of(o.obj, at)
		fmt.Printf("%s/%s: %s (%s): %s\n", o.obj.GetKind(), o.obj.GetName(), s.Status, s.Summary, s.Message)
	}
	// Output:
	// Pod/web: Current (1/1 Running, 2 restarts): Pod is Ready
	// Widget/w: InProgress (Ready=False, Replicas=3): waiting for the database
}
