package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// A pod scheduled onto a zoned node: on v1.37 its binding also gives it the node's
// topology.kubernetes.io/zone (and region) labels. The update that binds it still reads as a
// binding (`attribution: "binding"`), not unknown.
func TestBindingOntoZonedNode(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	node := "zoned-" + ns
	c.AddZonedNode(t, node, "zone-a")
	p := c.RunPlugin(t, ctx, "watch", "pods", "-n", ns, "-o", "json")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "zoned", Namespace: ns, Labels: map[string]string{"app": "zoned"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}},
			NodeSelector: map[string]string{"topology.kubernetes.io/zone": "zone-a"},
			Tolerations: []corev1.Toleration{{Key: testenv.ZonedNodeTaint, Operator: corev1.TolerationOpExists},
				{Key: "kwok.x-k8s.io/node", Operator: corev1.TolerationOpExists}}},
	}
	if _, err := c.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bound := p.AwaitJSON(t, await, func(m map[string]any) bool {
		if m["type"] != "Updated" || m["name"] != "zoned" {
			return false
		}
		spec, _ := objectOf(m).Object["spec"].(map[string]any)
		return spec["nodeName"] == node
	})
	labels := objectOf(bound).GetLabels()
	t.Logf("the binding's update: attribution %v (%v), labels %v", bound["attribution"], bound["attributionReason"], labels)
	if labels["topology.kubernetes.io/zone"] != "zone-a" {
		t.Errorf("the binding did not set the node's zone label on the pod: the case is not exercised")
	}
	if bound["attribution"] != "binding" {
		t.Errorf("the update that bound the pod: attribution %v (%v), want binding", bound["attribution"], bound["attributionReason"])
	}
}
