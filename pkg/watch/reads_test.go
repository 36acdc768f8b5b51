package watch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// TestDecodeForReadInto: a pod decoded for a read into the object the previous pod was decoded
// into is the pod as a new object holds it (nothing of the previous one left: its finalizers,
// conditions, container statuses or deletion time), its lists decoded into the previous pod's
// arrays; what a reader kept of the previous pod's metadata (its strings, its finalizers)
// is unchanged. A pod with no conditions has none, as a new one.
func TestDecodeForReadInto(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	now := metav1.Now()
	grace := int64(30)
	first := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "ns", Finalizers: []string{"a", "b"},
		DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c1"}, {Name: "c2"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "r"}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c1", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}},
				{Name: "c2", RestartCount: 3}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "i"}}}}
	second := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "second", Namespace: "ns", Finalizers: []string{"z"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "only"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "only", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	third := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "third", Namespace: "ns"}}
	compactAs := func(o interface{ Marshal() ([]byte, error) }, gvk schema.GroupVersionKind) *compactObject {
		t.Helper()
		raw, err := o.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		c, err := compactFromProtobuf(raw, gvk)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	compact := func(p *corev1.Pod) *compactObject { return compactAs(p, gvk) }
	reads := &Reads{Metadata: []string{"Name", "Namespace", "DeletionTimestamp", "DeletionGracePeriodSeconds", "Finalizers"}, SpecCounted: []string{"Containers"}}
	cut := newReadCut(&corev1.Pod{}, reads)
	got, err := compact(first).decodeForReadInto(nil, cut)
	if err != nil {
		t.Fatal(err)
	}
	kept := got.(*corev1.Pod)
	keptName, keptFinalizers := kept.Name, kept.Finalizers
	keptCopy := kept.DeepCopy()
	firstConditions, firstContainers := &kept.Status.Conditions[0], &kept.Spec.Containers[0]
	for _, next := range []*corev1.Pod{second, third} {
		c := compact(next)
		fresh, err := c.decodeForRead(cut)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.decodeForReadInto(got, cut)
		if err != nil {
			t.Fatal(err)
		}
		if again != got {
			t.Fatalf("decodeForReadInto did not decode into the object it was given")
		}
		if diff := cmp.Diff(fresh, again); diff != "" {
			t.Errorf("%s decoded into the previous pod's object (-as a new object holds it +reused):\n%s", next.Name, diff)
		}
		if next == second && (&again.(*corev1.Pod).Status.Conditions[0] != firstConditions || &again.(*corev1.Pod).Spec.Containers[0] != firstContainers) {
			t.Errorf("the second pod's conditions or containers were not decoded into the first's arrays")
		}
	}
	if diff := cmp.Diff([]any{keptCopy.Name, keptCopy.Finalizers}, []any{keptName, keptFinalizers}); diff != "" {
		t.Errorf("what a reader kept of the first pod changed (-before +after):\n%s", diff)
	}

	// Another kind: zeroed whole.
	replicas := int32(3)
	deployments := []*appsv1.Deployment{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Finalizers: []string{"f"}}, Spec: appsv1.DeploymentSpec{Replicas: &replicas},
			Status: appsv1.DeploymentStatus{Replicas: 3, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	}
	dgvk := appsv1.SchemeGroupVersion.WithKind("Deployment")
	var into runtime.Object
	for _, d := range deployments {
		c := compactAs(d, dgvk)
		fresh, err := c.decodeForRead(nil)
		if err != nil {
			t.Fatal(err)
		}
		if into, err = c.decodeForReadInto(into, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fresh, into); diff != "" {
			t.Errorf("deployment %s decoded into the previous one's object (-as a new object holds it +reused):\n%s", d.Name, diff)
		}
	}
}
