package diff_test

import (
	"fmt"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
)

// What an update changed, and who made it: Compute names the changed fields by their paths
// (list elements by their merge key), and Attribute reads the author from metadata.managedFields,
// whose entry the API server stamps with the time of each write (here kubectl scaled the
// Deployment: its entry moved, the controller's did not).
func Example() {
	deployment := func(replicas int64, image, kubectlTime string) map[string]any {
		return map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "demo", "managedFields": []any{
				map[string]any{"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
					"time": "2026-11-28T10:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:status": map[string]any{}}},
				map[string]any{"manager": "kubectl", "operation": "Update",
					"time": kubectlTime, "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}},
			}},
			"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "web", "image": image}},
			}}},
		}
	}
	old := deployment(1, "nginx:1.27", "2026-11-28T10:00:00Z")
	cur := deployment(3, "nginx:1.28", "2026-11-28T10:05:00Z")

	changes := diff.Compute(old, cur)
	for _, c := range changes {
		fmt.Printf("%s: %v -> %v\n", c.Path, c.Old, c.New)
	}
	a := diff.Attribute(old, cur, changes)
	fmt.Printf("made by %v (found by %s)\n", a.Managers, a.Rule)
	// Output:
	// spec.replicas: 1 -> 3
	// spec.template.spec.containers[name=web].image: nginx:1.27 -> nginx:1.28
	// made by [kubectl (Update)] (found by entry)
}
