package watch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestDecodeForRead: an object decoded for a reader has only what its Reads keeps (managedFields
// never); a counted list keeps its items, each empty; a field name the kind does not have leaves
// the object whole (a typo must never cut what the reader reads), as does a spec read of a kind
// without a spec.
func TestDecodeForRead(t *testing.T) {
	restart := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}, Finalizers: []string{"f"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PodSpec{NodeName: "node-a", Volumes: []corev1.Volume{{Name: "v"}},
			Containers:     []corev1.Container{{Name: "a", Image: "i"}, {Name: "b"}},
			InitContainers: []corev1.Container{{Name: "init", RestartPolicy: &restart}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	decode := func(o runtime.Object, r *Reads) runtime.Object {
		t.Helper()
		raw, err := o.(interface{ Marshal() ([]byte, error) }).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeForRead(raw, o.GetObjectKind().GroupVersionKind(), r)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := decode(pod, &Reads{Metadata: []string{"Name", "Finalizers"}, Spec: []string{"InitContainers"}, SpecCounted: []string{"Containers"}}).(*corev1.Pod)
	want := &corev1.Pod{
		TypeMeta:   pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: "p", Finalizers: []string{"f"}},
		Spec:       corev1.PodSpec{Containers: make([]corev1.Container, 2), InitContainers: pod.Spec.InitContainers},
		Status:     pod.Status,
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("decoded for the read (-want +got):\n%s", diff)
	}
	whole := pod.DeepCopy()
	whole.ManagedFields = nil
	for _, r := range []*Reads{nil, {Spec: []string{"NoSuchField"}}, {Metadata: []string{"Name", "NoSuchField"}}, {SpecCounted: []string{"NoSuchField"}}} {
		if diff := cmp.Diff(whole, decode(pod, r)); diff != "" {
			t.Errorf("decoded for %+v: want the pod whole but managedFields (-want +got):\n%s", r, diff)
		}
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Data: map[string]string{"a": "b"}}
	if d := decode(cm, &Reads{Spec: []string{"Data"}}); d.(*corev1.ConfigMap).Data["a"] != "b" {
		t.Errorf("a ConfigMap decoded for a spec read: %+v", d)
	}
}
