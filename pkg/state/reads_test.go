package state

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// TestReadsIsAllOfTyped: Reads names all that OfTyped reads of a pod (of its metadata the
// generation, times, grace period and finalizers; of its spec the containers counted, the init
// containers). Over pods drawn at random in every shape the state tells apart (phases,
// conditions, init containers and sidecars, waiting, running and terminated containers,
// restarts, deletions, generations), the state of each pod decoded as the informer decodes it for
// a reader that says so (watch.DecodeForRead) is the state of the whole pod.
func TestReadsIsAllOfTyped(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	r := NewReader(nil)
	metadata, spec, counted, ok := r.Reads(schema.GroupKind{Kind: "Pod"})
	if !ok {
		t.Fatal("a pod's reader says it may read anything")
	}
	reads := &watch.Reads{Metadata: metadata, Spec: spec, SpecCounted: counted}
	rng := rand.New(rand.NewPCG(37, 1))
	states := map[string]bool{}
	for i := range 2000 {
		pod := randomPod(rng, i, at)
		raw, err := pod.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		cut, err := watch.DecodeForRead(raw, corev1.SchemeGroupVersion.WithKind("Pod"), reads)
		if err != nil {
			t.Fatal(err)
		}
		want, got := r.OfTyped(pod, at), r.OfTyped(cut, at)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pod %d: the state of the pod as cut differs from the whole pod's (-whole +cut):\n%s", i, diff)
		}
		if want != nil {
			states[want.Status+" "+want.Summary+" "+want.Message+" "+strings.Join(want.Finalizers, ",")] = true
		}
	}
	// The pods took the shapes the state tells apart (not all one state).
	t.Logf("%d different states over 2000 random pods", len(states))
	if len(states) < 100 {
		t.Errorf("%d different states over 2000 random pods: the generator tests little", len(states))
	}
	// Other kinds, and a reader of printer columns, say nothing of what they read.
	if _, _, _, ok := r.Reads(schema.GroupKind{Group: "apps", Kind: "Deployment"}); ok {
		t.Error("a Deployment's reader says what it reads")
	}
	cr := NewReader([]discovery.PrinterColumn{{Name: "Phase", Type: "string", JSONPath: ".spec.nodeName"}})
	if _, _, _, ok := cr.Reads(schema.GroupKind{Kind: "Pod"}); ok {
		t.Error("a reader of printer columns says it reads only part of a pod")
	}
}

// randomPod is a pod in a shape drawn at random from what the pods' state reads.
func randomPod(rng *rand.Rand, i int, at time.Time) *corev1.Pod {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	chance := func(p float64) bool { return rng.Float64() < p }
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(100 + i),
			CreationTimestamp: metav1.NewTime(at.Add(-time.Duration(rng.IntN(600)) * time.Second)),
			Labels:            map[string]string{"app": "x"}, Annotations: map[string]string{"a": "b"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec: corev1.PodSpec{NodeName: pick("", "node-a"), Volumes: []corev1.Volume{{Name: "data"}},
			Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}},
		Status: corev1.PodStatus{Phase: corev1.PodPhase(pick("Pending", "Running", "Succeeded", "Failed", "", "Unknown")),
			Reason: pick("", "", "", "Evicted", "NodeLost")},
	}
	if chance(0.3) {
		pod.Generation, pod.Status.ObservedGeneration = int64(rng.IntN(3)), int64(rng.IntN(3))
	}
	if chance(0.15) {
		pod.DeletionTimestamp = &metav1.Time{Time: at.Add(-time.Second)}
		pod.DeletionGracePeriodSeconds = new(int64(rng.IntN(40)))
		if chance(0.5) {
			pod.Finalizers = []string{"example.com/hold"}
		}
	}
	for range rng.IntN(4) {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
			Type:   corev1.PodConditionType(pick("Ready", "PodScheduled", "Initialized", "ContainersReady", "Reconciling", "Stalled")),
			Status: corev1.ConditionStatus(pick("True", "False", "Unknown")),
			Reason: pick("", "Unschedulable", "SchedulingGated", "PodCompleted"), Message: pick("", "m")})
	}
	policies := []*corev1.ContainerRestartPolicy{nil, new(corev1.ContainerRestartPolicyAlways), new(corev1.ContainerRestartPolicy("Never"))}
	for j := range rng.IntN(3) {
		name := fmt.Sprintf("init-%d", j)
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: name, Image: "busybox",
			RestartPolicy: policies[rng.IntN(len(policies))], Env: []corev1.EnvVar{{Name: "A", Value: "b"}}})
		if chance(0.8) {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, randomContainerStatus(rng, name))
		}
	}
	for j := range 1 + rng.IntN(3) {
		name := fmt.Sprintf("c-%d", j)
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name, Image: "nginx",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}}, Args: []string{"-v"}})
		if chance(0.8) {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, randomContainerStatus(rng, name))
		}
	}
	return pod
}

func randomContainerStatus(rng *rand.Rand, name string) corev1.ContainerStatus {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	cs := corev1.ContainerStatus{Name: name, Ready: rng.IntN(2) == 0, RestartCount: int32(rng.IntN(3))}
	if rng.IntN(2) == 0 {
		cs.Started = new(rng.IntN(2) == 0)
	}
	switch rng.IntN(4) {
	case 0:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: pick("", "CrashLoopBackOff", "PodInitializing", "ErrImagePull")}
	case 1:
		cs.State.Running = &corev1.ContainerStateRunning{}
	case 2:
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(rng.IntN(3)), Signal: int32(rng.IntN(2) * 9),
			Reason: pick("", "Completed", "Error", "OOMKilled")}
	}
	return cs
}
