package printer

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/state"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// typedObjects are built-in objects as the protobuf wire hands them on (watch.Event.Obj.Typed):
// every kind whose state or summary is read, with managedFields, owners, escapes and Secret
// values.
func typedObjects(t *testing.T) []runtime.Object {
	created := metav1.NewTime(time.Date(2026, 11, 21, 4, 59, 50, 0, time.UTC))
	deleted := metav1.NewTime(created.Add(5 * time.Second))
	grace := int64(30)
	replicas := int32(3)
	md := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "demo", UID: "u-" + "1234", ResourceVersion: "42", Generation: 2,
			CreationTimestamp: created, Labels: map[string]string{"app": "web", "b": "<&>"},
			Annotations: map[string]string{"note": "caf\u00e9 \u2028 \"q\" <tag>", "z": ""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5fc9", UID: "rs-1",
				Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:app":{}},"f:ownerReferences":{"k:{\"uid\":\"rs-1\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}`)},
				{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Subresource: "status",
					FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:phase":{},"f:x":{"\u00e9\/":{}}}}`)}}}
	}
	pod := kwokPod(t)
	pending := &corev1.Pod{ObjectMeta: md("pending"), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("500m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}}}
	crashing := &corev1.Pod{ObjectMeta: md("crashing"), Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init"}},
		Containers: []corev1.Container{{Name: "web"}, {Name: "side"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", RestartCount: 5, State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}, {Name: "side", Ready: true}}}}
	terminating := pending.DeepCopy()
	terminating.Name, terminating.DeletionTimestamp, terminating.DeletionGracePeriodSeconds = "terminating", &deleted, &grace
	terminating.Finalizers = []string{"example.com/hold"}
	empty := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "demo"}}
	deploy := &appsv1.Deployment{ObjectMeta: md("web"), Spec: appsv1.DeploymentSpec{Replicas: &replicas,
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxSurge: ptrTo(intstr.FromString("25%")), MaxUnavailable: ptrTo(intstr.FromInt32(1))}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"}}}}
	sts := &appsv1.StatefulSet{ObjectMeta: md("db"), Spec: appsv1.StatefulSetSpec{Replicas: &replicas,
		UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}}
	ds := &appsv1.DaemonSet{ObjectMeta: md("agent"), Status: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 2, NumberReady: 1}}
	rs := &appsv1.ReplicaSet{ObjectMeta: md("web-5fc9"), Spec: appsv1.ReplicaSetSpec{Replicas: &replicas},
		Status: appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}}
	job := &batchv1.Job{ObjectMeta: md("batch"), Spec: batchv1.JobSpec{Completions: &replicas},
		Status: batchv1.JobStatus{Active: 1, Succeeded: 1, StartTime: &created}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", CreationTimestamp: created},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}, NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.1"},
			Capacity: corev1.ResourceList{"memory": resource.MustParse("16Gi")}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: md("data"), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	svc := &corev1.Service{ObjectMeta: md("web"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10",
		Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}}
	cm := &corev1.ConfigMap{ObjectMeta: md("conf"), Data: map[string]string{"b": "2", "a": "1\n<x>"}, BinaryData: map[string][]byte{"bin": {0, 1, 2}}}
	secretMeta := md("creds")
	secretMeta.Annotations[lastAppliedAnnotation] = `{"data":{"password":"aHVudGVyMg=="}}`
	secret := &corev1.Secret{ObjectMeta: secretMeta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("hunter2")},
		StringData: map[string]string{"token": "t0k3n"}}
	ev := &corev1.Event{ObjectMeta: md("web.1"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web"}, Reason: "Started",
		Message: "Started container", Type: "Normal", Count: 3}
	objs := []runtime.Object{pod, pending, crashing, terminating, empty, deploy, sts, ds, rs, job, node, ns, pvc, svc, cm, secret, ev}
	for _, o := range objs {
		gvks, _, err := scheme.Scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	return objs
}

func ptrTo[T any](v T) *T { return &v }

// resourceOf is the resource a typed object is watched as.
func resourceOf(o runtime.Object) discovery.Resource {
	gvk := o.GetObjectKind().GroupVersionKind()
	plural := map[string]string{"Pod": "pods", "Deployment": "deployments", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets",
		"ReplicaSet": "replicasets", "Job": "jobs", "Node": "nodes", "Namespace": "namespaces", "PersistentVolumeClaim": "persistentvolumeclaims",
		"Service": "services", "ConfigMap": "configmaps", "Secret": "secrets", "Event": "events"}[gvk.Kind]
	return discovery.Resource{Group: gvk.Group, Version: gvk.Version, Resource: plural, Kind: gvk.Kind,
		Namespaced: gvk.Kind != "Node" && gvk.Kind != "Namespace"}
}

// TestTypedLinesAsConverted: an Added line of an object handed on typed (watch.Event.Obj.Typed) is
// byte for byte the line of the same object converted to a map, as the informer made it before,
// in every output (human, with --diff and -o wide; JSON, Secret values redacted or shown;
// YAML; a template).
func TestTypedLinesAsConverted(t *testing.T) {
	outputs := []Options{
		{Diff: "inline", Timestamps: "none"}, {Output: "wide", Timestamps: "none"}, {Output: "json"}, {Output: "json", ShowSecrets: true},
		{Output: "json", Diff: "full"}, {Output: "yaml"}, {Output: "jsonpath={.object.metadata.name} {.state.summary}"},
	}
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	for _, o := range typedObjects(t) {
		for _, opts := range outputs {
			name := o.GetObjectKind().GroupVersionKind().Kind + "/" + string(opts.Output)
			t.Run(name, func(t *testing.T) {
				m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
				if err != nil {
					t.Fatal(err)
				}
				u := &unstructured.Unstructured{Object: m}
				ev := watch.Event{
					Type:            watch.Added,
					Time:            at,
					Resource:        resourceOf(o),
					Namespace:       u.GetNamespace(),
					Name:            u.GetName(),
					ResourceVersion: u.GetResourceVersion(),
					Obj:             watch.ObjectInfo{InitialList: true, Delta: watch.DeltaReplaced},
				}
				typed, converted := ev, ev
				typed.Obj.Typed, converted.Obj.Object = o, u
				want := printed(t, opts, &converted)
				if got := printed(t, opts, &typed); got != want {
					t.Errorf("typed line differs from the converted one (-converted +typed):\n%s", cmp.Diff(want, got))
				}
				// Encoded ahead (internal/pipeline's workers with -o json): the same bytes.
				if got := printedPrepared(t, opts, &typed); got != want {
					t.Errorf("typed line prepared ahead differs from the converted one (-converted +prepared):\n%s", cmp.Diff(want, got))
				}
				// Lightened (internal/pipeline's Output, human output: the state read and the
				// object dropped before the line waits): the same bytes.
				if got := printedLightened(t, opts, &typed); got != want {
					t.Errorf("lightened typed line differs from the converted one (-converted +lightened):\n%s", cmp.Diff(want, got))
				}
				// Prepared by the informer (watch.Config.Prepare: the state read from the object
				// decoded without its managedFields, no object on the line): the same bytes.
				if got, ok := printedPrepareAdded(t, opts, &typed); ok && got != want {
					t.Errorf("prepared line differs from the converted one (-converted +prepared):\n%s", cmp.Diff(want, got))
				}
			})
		}
	}
}

// TestTypedUpdatesAsConverted: an Updated line that carries its objects' Go types beside their
// maps (watch.Event.Obj.Typed, OldTyped: its state read from them) is byte for byte the line of the
// maps alone, in every output, lightened too; the updates change state (a Pending pod Running, a
// crashing one Running, ...), so the old object's state is read as well.
func TestTypedUpdatesAsConverted(t *testing.T) {
	outputs := []Options{
		{Diff: "inline", Timestamps: "none"}, {Timestamps: "none"}, {Output: "wide", Timestamps: "none"}, {Output: "json"},
		{Output: "json", Diff: "full"}, {Output: "yaml"}, {Output: "jsonpath={.state.status} {.state.previous} {.state.summary}"},
	}
	at := time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)
	toMap := func(o runtime.Object) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	prev := map[string]runtime.Object{} // the previous object of each kind: the update's old one
	transitions := 0
	for _, o := range typedObjects(t) {
		kind := o.GetObjectKind().GroupVersionKind().Kind
		old, ok := prev[kind]
		prev[kind] = o
		if !ok {
			continue
		}
		cur, oldMap := toMap(o), toMap(old)
		ev := watch.Event{
			Type:            watch.Updated,
			Time:            at,
			Resource:        resourceOf(o),
			Namespace:       cur.GetNamespace(),
			Name:            cur.GetName(),
			ResourceVersion: "43",
			Obj: watch.ObjectInfo{
				OldResourceVersion: "42",
				Delta:              watch.DeltaUpdated,
				Object:             cur,
				OldObject:          oldMap,
			},
		}
		typed := ev
		typed.Obj.Typed, typed.Obj.OldTyped = o, old
		if s := readState(state.NewReader(nil), &typed); s.prev != nil {
			transitions++
		}
		for _, opts := range outputs {
			t.Run(kind+"/"+old.(metav1.Object).GetName()+"/"+string(opts.Output), func(t *testing.T) {
				want := printed(t, opts, &ev)
				if got := printed(t, opts, &typed); got != want {
					t.Errorf("typed update differs from the converted one (-converted +typed):\n%s", cmp.Diff(want, got))
				}
				if got := printedLightened(t, opts, &typed); got != want {
					t.Errorf("lightened typed update differs from the converted one (-converted +lightened):\n%s", cmp.Diff(want, got))
				}
			})
		}
	}
	if transitions < 3 {
		t.Fatalf("%d of the updates change state, want at least 3", transitions)
	}
}

func printed(t *testing.T, opts Options, ev *watch.Event) string {
	t.Helper()
	var b bytes.Buffer
	p := New(&b, opts)
	if err := p.Print(ev); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// printedPrepared is printed with the line prepared first (Prepare, PrintPrepared), on another
// printer of the same options, as the workers that encode ahead of the writer do.
func printedPrepared(t *testing.T, opts Options, ev *watch.Event) string {
	t.Helper()
	var b bytes.Buffer
	p := New(&b, opts)
	pr := New(io.Discard, opts).Prepare(ev)
	if (pr.object != nil) != (opts.Output == "json" && (opts.ShowSecrets || !IsSecret(ev.Resource))) {
		t.Errorf("Prepare encoded %d bytes of a %s line in %q output", len(pr.object), ev.Resource.Kind, opts.Output)
	}
	if err := p.PrintPrepared(ev, pr); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// printedLightened is printed with the line lightened first (Lighten, then PrintPrepared on the
// same printer, as a live run's Output and writer do): the typed objects must be gone from the
// line and its state read when the line carries its maps too (updates, in every output), or,
// typed only, in human output but -o wide for every kind but Events.
func printedLightened(t *testing.T, opts Options, ev *watch.Event) string {
	t.Helper()
	var b bytes.Buffer
	p := New(&b, opts)
	light := *ev
	pr := p.Lighten(&light)
	drops := ev.Obj.Object != nil || (opts.Output == "" && ev.Resource.Kind != "Event")
	if dropped := light.Obj.Typed == nil && light.Obj.OldTyped == nil; dropped != drops || pr.hasState != drops {
		t.Errorf("Lighten of a %s line in %q output: objects dropped %v, state read %v; want %v", ev.Resource.Kind, opts.Output, dropped, pr.hasState, drops)
	}
	if ev.Obj.Typed == nil {
		t.Fatal("Lighten changed the caller's other copy of the line")
	}
	if err := p.PrintPrepared(&light, pr); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// decodedForRead is o (a built-in kind) through protobuf as watch.DecodeForRead decodes it for
// a Preparer whose Spec is spec.
func decodedForRead(t *testing.T, o runtime.Object, reads *watch.Reads) runtime.Object {
	t.Helper()
	pm, ok := o.(interface{ Marshal() ([]byte, error) })
	if !ok {
		t.Fatalf("%T has no protobuf encoding", o)
	}
	raw, err := pm.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	d, err := watch.DecodeForRead(raw, o.GetObjectKind().GroupVersionKind(), reads)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// printedPrepareAdded prints ev as a live run does when the informer prepared it with
// PrepareAdded: what its reader returned for the object without managedFields, taken off the
// line by the output and printed with PrintPrepared. False when the printer prepares nothing
// for the line's resource, which must be exactly the lines Lighten keeps their objects for.
func printedPrepareAdded(t *testing.T, opts Options, ev *watch.Event) (string, bool) {
	t.Helper()
	var b bytes.Buffer
	p := New(&b, opts)
	p.now = func() time.Time { return ev.Time }
	prepare := p.PrepareAdded(ev.Resource)
	if want := opts.Output == "" && ev.Resource.Kind != "Event"; (prepare.Reader != nil) != want {
		t.Fatalf("PrepareAdded for a %s line in %q output: %v, want %v", ev.Resource.Kind, opts.Output, prepare.Reader != nil, want)
	}
	if prepare.Reader == nil {
		return "", false
	}
	// The object as the informer decodes it for the reader: without managedFields, and of
	// its spec only what the reader says it reads.
	slim := decodedForRead(t, ev.Obj.Typed, prepare.Reads)
	line := *ev
	line.Obj.Typed, line.Obj.Prepared = nil, prepare.Reader.ReadObject(slim)
	pr, ok := line.TakePrepared().(Prepared)
	if !ok || !pr.hasState {
		t.Fatalf("PrepareAdded's reader returned %T without a state", pr)
	}
	if err := p.PrintPrepared(&line, pr); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String(), true
}
