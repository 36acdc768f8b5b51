package state

import (
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OfTyped returns what Of returns for o converted to an unstructured object (o is a built-in
// object as its Go type, with its apiVersion and kind), without converting all of it: the
// kind's summary is read from the Go type, and kstatus, which reads only metadata.generation,
// creationTimestamp and deletionTimestamp, spec and status, runs on a map of those (a pod's
// without its spec, which its rules never read). managedFields, labels, annotations and
// owners, most of an object, are never converted.
func (r *Reader) OfTyped(o runtime.Object, at time.Time) *State {
	if o == nil || len(r.columns) > 0 {
		return r.Of(toMap(o), at)
	}
	if nothingToSay(o) {
		return nil
	}
	if pod, ok := o.(*corev1.Pod); ok {
		if s, ok := ofPod(pod, podSummary(pod), at); ok {
			return s
		}
	}
	m, ok := statusView(o)
	if !ok {
		return r.Of(toMap(o), at)
	}
	summary, ok := typedSummary(o)
	if !ok {
		summary = builtinSummary(toMap(o))
	}
	return r.of(m, summary, at)
}

// Reads is what OfTyped reads of an object of kind gk, by the Go names of its fields: of its
// ObjectMeta, of its spec, and lists of the spec of which it reads only how many items there
// are. False when it may read anything (a kind it does not say this of, or a reader of printer
// columns, which may point anywhere). A decoder may leave the rest out: OfTyped of such an
// object is OfTyped of the whole (TestReadsIsAllOfTyped).
func (r *Reader) Reads(gk schema.GroupKind) (metadata, spec, specCounted []string, ok bool) {
	if len(r.columns) > 0 || gk != (schema.GroupKind{Kind: "Pod"}) {
		return nil, nil, nil, false
	}
	// ofPod and kstatus's generic rules: the generation, the creation and deletion times, the
	// grace period and the finalizers (and the names, for errors); podSummary: the containers'
	// count, the init containers' names, restart policies and count. kstatus's pod rules read
	// no spec; statusView leaves a pod's out, and labels, annotations and owners of any kind.
	return []string{"Name", "Namespace", "UID", "ResourceVersion", "Generation", "CreationTimestamp",
			"DeletionTimestamp", "DeletionGracePeriodSeconds", "Finalizers"},
		[]string{"InitContainers"}, []string{"Containers"}, true
}

// toMap is o converted as the informer converts objects for their events (nil when it fails).
func toMap(o runtime.Object) *unstructured.Unstructured {
	if o == nil {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}

// statusView is the part of o that kstatus and the terminating message read, as
// DefaultUnstructuredConverter writes it: apiVersion, kind, metadata without its maps and
// lists (finalizers kept), spec (not a pod's) and status.
func statusView(o runtime.Object) (*unstructured.Unstructured, bool) {
	acc, ok := o.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, false
	}
	om, ok := acc.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return nil, false
	}
	slim := *om
	slim.Labels, slim.Annotations, slim.OwnerReferences, slim.ManagedFields = nil, nil, nil, nil
	md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&slim)
	if err != nil {
		return nil, false
	}
	gvk := o.GetObjectKind().GroupVersionKind()
	m := map[string]any{"metadata": md}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	_, isPod := o.(*corev1.Pod)
	for _, f := range []struct{ field, key string }{{"Spec", "spec"}, {"Status", "status"}} {
		if f.key == "spec" && isPod {
			continue
		}
		fv := v.Elem().FieldByName(f.field)
		if !fv.IsValid() {
			continue
		}
		if fv.Kind() != reflect.Struct {
			return nil, false // a kind this view does not know: convert it all
		}
		sm, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fv.Addr().Interface())
		if err != nil {
			return nil, false
		}
		m[f.key] = sm
	}
	return u, true
}

// typedSummary is builtinSummary of o, read from its Go type; false for a kind it does not
// read typed (builtinSummary of the converted object then).
func typedSummary(o runtime.Object) (string, bool) {
	switch v := o.(type) {
	case *corev1.Pod:
		return podSummary(v), true
	case *appsv1.Deployment:
		return rollout(v.Status.ReadyReplicas, desired(v.Spec.Replicas), v.Status.UpdatedReplicas, v.Status.AvailableReplicas), true
	case *appsv1.StatefulSet:
		return rollout(v.Status.ReadyReplicas, desired(v.Spec.Replicas), v.Status.UpdatedReplicas, v.Status.AvailableReplicas), true
	case *appsv1.DaemonSet:
		s := v.Status
		return rollout(s.NumberReady, s.DesiredNumberScheduled, s.UpdatedNumberScheduled, s.NumberAvailable), true
	case *appsv1.ReplicaSet:
		return replicaSetSummary(v), true
	case *batchv1.Job:
		return jobSummary(v), true
	case *corev1.Node:
		return nodeSummary(v), true
	case *corev1.Namespace:
		return string(v.Status.Phase), true
	case *corev1.PersistentVolumeClaim:
		return string(v.Status.Phase), true
	case *corev1.PersistentVolume:
		return string(v.Status.Phase), true
	case *corev1.ConfigMap, *corev1.Secret, *corev1.Service, *corev1.ServiceAccount:
		return "", true
	}
	return "", false
}

// nothingToSay reports an object Of returns nil for without reading it: one of a kind with no
// status and no summary (a ConfigMap, a Secret), not being deleted.
func nothingToSay(o runtime.Object) bool {
	acc, ok := o.(metav1.ObjectMetaAccessor)
	if !ok || acc.GetObjectMeta().GetDeletionTimestamp() != nil {
		return false
	}
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Elem().FieldByName("Status").IsValid() {
		return false
	}
	summary, ok := typedSummary(o)
	return ok && summary == ""
}
