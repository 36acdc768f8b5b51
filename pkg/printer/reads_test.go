package printer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// TestPreparedPodsReadAsWhole: the pods' Preparer reads only part of them (of their metadata
// the generation, times, grace period and finalizers; of their specs the containers counted,
// the init containers); the informer decodes nothing else (watch.DecodeForRead). Over pods made at random in every shape the state reads (phases,
// conditions, init containers and sidecars, waiting, running and terminated containers,
// restarts, deletions, generations), the prepared line of each is byte for byte its line read
// from the whole pod.
func TestPreparedPodsReadAsWhole(t *testing.T) {
	opts := Options{Diff: "inline", Timestamps: "none"}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	prepare := New(nil, opts).PrepareAdded(resourceOf(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}))
	if prepare.Reads == nil || prepare.Read == nil {
		t.Fatalf("pods are prepared reading all of their specs: %+v", prepare)
	}
	rng := rand.New(rand.NewPCG(37, 1))
	shapes := map[string]bool{}
	for i := range 2000 {
		pod := randomPod(rng, i, at)
		ev := watch.Event{Type: watch.Added, Time: at, Resource: resourceOf(pod), Namespace: pod.Namespace, Name: pod.Name,
			ResourceVersion: pod.ResourceVersion, InitialList: true, Delta: watch.DeltaReplaced, Typed: pod}
		want := printed(t, opts, &ev)
		got, ok := printedPrepareAdded(t, opts, &ev)
		if !ok {
			t.Fatal("no prepared pod line")
		}
		if got != want {
			t.Fatalf("pod %d: the prepared line differs from the whole pod's (-whole +prepared):\n%s", i, cmp.Diff(want, got))
		}
		_, rv, _ := strings.Cut(want, " rv=")
		_, state, _ := strings.Cut(rv, "  ")
		shapes[state] = true
	}
	// The pods took the shapes the state tells apart (not all one line).
	t.Logf("%d different states over 2000 random pods", len(shapes))
	if len(shapes) < 100 {
		t.Errorf("%d different states over 2000 random pods: the generator tests little", len(shapes))
	}
	// What is cut is really gone: a pod decoded for the read has no volumes, no node, and empty
	// containers (as many as it had).
	pod := randomPod(rng, 0, at)
	pod.Spec.NodeName, pod.Spec.Volumes = "node-1", []corev1.Volume{{Name: "v"}}
	pod.Spec.Containers = []corev1.Container{{Name: "a", Image: "img"}, {Name: "b"}}
	d := decodedForRead(t, pod, prepare.Reads).(*corev1.Pod)
	if d.Spec.NodeName != "" || d.Spec.Volumes != nil || len(d.Spec.Containers) != 2 || d.Spec.Containers[0].Name != "" {
		t.Errorf("the spec as decoded for the read: %+v; want only 2 empty containers and the init containers", d.Spec)
	}
	if d.Labels != nil || d.Annotations != nil || d.OwnerReferences != nil || d.ManagedFields != nil || d.Name != pod.Name {
		t.Errorf("the metadata as decoded for the read: %+v; want no labels, annotations, owners or managedFields", d.ObjectMeta)
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

// Fields a Preparer names that its kind does not have leave the object whole: a typo must
// never cut what the reader reads.
func TestDecodeForReadUnknownSpecField(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "a"}}}}
	d := decodedForRead(t, pod, &watch.Reads{Spec: []string{"NoSuchField"}}).(*corev1.Pod)
	if d.Spec.NodeName != "node-a" || d.Spec.Containers[0].Name != "a" {
		t.Errorf("spec cut for a field the spec does not have: %+v", d.Spec)
	}
	// A kind without a spec decodes whole.
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Data: map[string]string{"a": "b"}}
	if d := decodedForRead(t, cm, &watch.Reads{Spec: []string{"Data"}}); d.(*corev1.ConfigMap).Data["a"] != "b" {
		t.Errorf("a ConfigMap decoded for a spec read: %+v", d)
	}
	d = decodedForRead(t, pod, &watch.Reads{Metadata: []string{"Name", "NoSuchField"}}).(*corev1.Pod)
	if d.Spec.NodeName != "node-a" {
		t.Errorf("metadata cut for a field ObjectMeta does not have: %+v", d)
	}
}
