package testenv

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/internal/controlplane"
)

// Widget is a Widget (WidgetCRD) to build or create: its zero fields are left out.
type Widget struct {
	Namespace, Name string
	Size            int64 // spec.size (always set)
	Color           string
	// Bug switches one of the widget-operator's bugs on (OperatorBugAnnotation): "status-loop"
	// or "fight".
	Bug string
}

// Object is the Widget as the dynamic client takes it.
func (w Widget) Object() *unstructured.Unstructured {
	meta := map[string]any{"name": w.Name}
	if w.Namespace != "" {
		meta["namespace"] = w.Namespace
	}
	if w.Bug != "" {
		meta["annotations"] = map[string]any{OperatorBugAnnotation: w.Bug}
	}
	spec := map[string]any{"size": w.Size}
	if w.Color != "" {
		spec["color"] = w.Color
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": WidgetGVR.GroupVersion().String(), "kind": "Widget",
		"metadata": meta, "spec": spec,
	}}
}

// CreateWidget creates w (in w.Namespace) and returns it as the server stored it; it fails the
// test on an error.
func (c *Cluster) CreateWidget(t testing.TB, w Widget) *unstructured.Unstructured {
	t.Helper()
	created, err := c.Dynamic.Resource(WidgetGVR).Namespace(w.Namespace).Create(context.Background(), w.Object(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Widget %s/%s: %v", w.Namespace, w.Name, err)
	}
	return created
}

// RelistChanges are the ConfigMap writes Relist makes while the plugin's API server is down,
// through a second API server on the same etcd; each name may be empty.
type RelistChanges struct {
	Namespace string
	Delete    string // deleted
	Update    string // data.v set to "2"
	Create    string // created with data.v "1"
}

// RelistResult is what the server returned for RelistChanges' writes (nil for those not made).
type RelistResult struct {
	Updated, Created *corev1.ConfigMap
}

// Relist is the relist scenario: the API server the plugin watches crashes (KillAPIServer,
// so open watches are cut), the changes go through a second API server on the same etcd, and
// the first comes back with a watch cache that starts after the plugin's last resourceVersion:
// the plugin's re-watch is refused as expired (410) and its informers must list again. It
// returns once the first server is ready again; the test awaits the plugin's Relist line.
func (c *Cluster) Relist(t testing.TB, ctx context.Context, ch RelistChanges) RelistResult {
	t.Helper()
	second, err := c.StartSecondAPIServer(ctx)
	if err != nil {
		t.Fatalf("relist: %v", err)
	}
	if err := c.KillAPIServer(); err != nil {
		t.Fatalf("relist: %v", err)
	}
	var res RelistResult
	cms := second.Clientset.CoreV1().ConfigMaps(ch.Namespace)
	if ch.Delete != "" {
		if err := cms.Delete(ctx, ch.Delete, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("relist: delete configmap %s: %v", ch.Delete, err)
		}
	}
	if ch.Update != "" {
		if res.Updated, err = cms.Patch(ctx, ch.Update, types.MergePatchType, []byte(`{"data":{"v":"2"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("relist: update configmap %s: %v", ch.Update, err)
		}
	}
	if ch.Create != "" {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ch.Create}, Data: map[string]string{"v": "1"}}
		if res.Created, err = cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("relist: create configmap %s: %v", ch.Create, err)
		}
	}
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatalf("relist: %v", err)
	}
	return res
}

// ZonedNodeTaint keeps other pods off the nodes AddZonedNode makes: only a pod that tolerates it
// is scheduled there.
const ZonedNodeTaint = "example.com/zoned"

// AddZonedNode creates a Node that kwok manages, labelled topology.kubernetes.io/zone=zone and
// tainted ZonedNodeTaint:NoSchedule, and removes it when the test ends. The cluster must run kwok
// (RealControlPlane).
func (c *Cluster) AddZonedNode(t testing.TB, name, zone string) {
	t.Helper()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{controlplane.KwokNodeAnnotation: "fake"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok",
				"topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "region-1"}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: ZonedNodeTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: capacity, Capacity: capacity.DeepCopy()},
	}
	if _, err := c.Clientset.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Clientset.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}
