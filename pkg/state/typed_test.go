package state

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// fuzzPod makes a pod of the parts b picks: phase, conditions, container states, generations,
// deletion and finalizers, the fields kstatus's pod rules and the summary read.
func fuzzPod(b []byte) *corev1.Pod {
	at := func(i int) byte {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	pick := func(i int, from ...string) string { return from[int(at(i))%len(from)] }
	created := metav1.NewTime(time.Date(2026, 11, 21, 4, 59, 50+int(at(0)%20), 0, time.UTC))
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", CreationTimestamp: created, Generation: int64(at(1) % 3)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}
	pod.Status.ObservedGeneration = int64(at(2) % 3)
	pod.Status.Phase = corev1.PodPhase(pick(3, "", "Pending", "Running", "Succeeded", "Failed", "Unknown"))
	pod.Status.Reason = pick(4, "", "", "Evicted")
	for i := 0; i < int(at(5)%4); i++ {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type:   corev1.PodConditionType(pick(6+i, "Ready", "PodScheduled", "Reconciling", "Stalled", "ContainersReady")),
			Status: corev1.ConditionStatus(pick(10+i, "True", "False", "Unknown")),
			Reason: pick(14+i, "", "Unschedulable", "SchedulingGated", "Why"), Message: pick(18+i, "", "m")})
	}
	for i := 0; i < int(at(22)%3); i++ {
		cs := corev1.ContainerStatus{Name: pick(23+i, "a", "b", ""), Ready: at(26+i)%2 == 0, RestartCount: int32(at(29 + i))}
		switch at(32+i) % 4 {
		case 1:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: pick(35+i, "CrashLoopBackOff", "ImagePullBackOff", "")}
		case 2:
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: created}
		case 3:
			cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", ExitCode: int32(at(38) % 2)}
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
	}
	if at(40)%3 == 1 {
		deleted := metav1.NewTime(created.Add(time.Second))
		pod.DeletionTimestamp = &deleted
		if at(41)%2 == 0 {
			grace := int64(at(42) % 40)
			pod.DeletionGracePeriodSeconds = &grace
		}
	}
	if at(43)%3 == 1 {
		pod.Finalizers = []string{"example.com/hold"}
	}
	return pod
}

// FuzzPodState: a pod's state read from its Go type (OfTyped) is the state read from it
// converted to a map (Of), as the informer converted it before.
func FuzzPodState(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 2, 2, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 5, 0, 1, 1, 1, 0, 0, 0})
	f.Add([]byte{3, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 5, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		pod := fuzzPod(b)
		checkTyped(t, pod, time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC))
	})
}

func checkTyped(t *testing.T, o runtime.Object, at time.Time) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(nil)
	want := r.Of(toMapOf(m), at)
	got := r.OfTyped(o, at)
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("OfTyped differs from Of of the converted object (-Of +OfTyped):\n%s", diff)
	}
}

func toMapOf(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}
