package watch

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

var podsRes = discovery.Resource{Version: "v1", Kind: "Pod", Resource: "pods", Namespaced: true}

func typedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u-p", ResourceVersion: "7",
			Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"a": "b"},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Args: []string{"a", "b"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}},
			NodeSelector: map[string]string{}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// A built-in object kept as protobuf bytes decodes to what the typed cache converted before.
func TestCompactProtobufObject(t *testing.T) {
	p := typedPod()
	c, err := compactTyped(p, podsRes.GVK())
	if err != nil {
		t.Fatal(err)
	}
	want := p.DeepCopy()
	want.SetGroupVersionKind(podsRes.GVK())
	wantMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		t.Fatal(err)
	}
	if got := toUnstructured(c); !reflect.DeepEqual(got.Object, wantMap) {
		t.Errorf("(-typed +compact):\n%s", cmp.Diff(wantMap, got.Object))
	}
	a, err := meta.Accessor(c)
	if err != nil {
		t.Fatal(err)
	}
	if a.GetName() != "p" || a.GetNamespace() != "ns" || a.GetUID() != "u-p" || a.GetResourceVersion() != "7" || a.GetAnnotations() != nil {
		t.Errorf("metadata %+v", c.meta)
	}
	// --drop-managed-fields re-encodes without them.
	n := len(c.raw)
	c.dropManagedFields()
	if len(c.raw) >= n || c.noManagedFields {
		t.Errorf("managedFields not dropped from the bytes (%d -> %d)", n, len(c.raw))
	}
	want.ManagedFields = nil
	wantMap, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if got := toUnstructured(c); !reflect.DeepEqual(got.Object, wantMap) {
		t.Errorf("after dropping managedFields (-typed +compact):\n%s", cmp.Diff(wantMap, got.Object))
	}
}

// Cutting an object out of protobuf bytes allocates the compact object and one string for its
// name, namespace, uid and resourceVersion together: nothing per field.
func TestCompactFromProtobufAllocs(t *testing.T) {
	raw, err := typedPod().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	gvk := podsRes.GVK()
	var c *compactObject
	allocs := testing.AllocsPerRun(100, func() {
		if c, err = compactFromProtobuf(raw, gvk); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations an object, want at most 2", allocs)
	}
	if m := c.meta; m.Name != "p" || m.Namespace != "ns" || m.UID != "u-p" || m.ResourceVersion != "7" {
		t.Errorf("metadata %q %q %q %q", m.Name, m.Namespace, m.UID, m.ResourceVersion)
	}
}

// A protobuf list becomes compact objects with their kind and metadata; the list keeps its own.
func TestTypedListerList(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "30", Continue: "more"},
		Items: []corev1.Pod{*typedPod(), *typedPod()}}
	list.Items[1].Name, list.Items[1].ResourceVersion = "q", "8"
	list.Items[1].Annotations = map[string]string{initialEventsEndAnnotation: "true", "z": "y"}
	var body bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &body); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", protobufContentType)
		_, _ = w.Write(body.Bytes())
	}))
	defer srv.Close()
	l, err := newTypedLister(newTypedClients(&rest.Config{Host: srv.URL}), podsRes, "ns")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := l.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lm, _ := meta.ListAccessor(obj)
	if lm.GetResourceVersion() != "30" || lm.GetContinue() != "more" {
		t.Errorf("list meta %q %q", lm.GetResourceVersion(), lm.GetContinue())
	}
	items, err := meta.ExtractList(obj)
	if err != nil || len(items) != 2 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	for i, o := range items {
		c := o.(*compactObject)
		want := typedPod()
		want.Name, want.ResourceVersion, want.Annotations = list.Items[i].Name, list.Items[i].ResourceVersion, list.Items[i].Annotations
		want.SetGroupVersionKind(podsRes.GVK())
		wantMap, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
		if got := toUnstructured(c); !reflect.DeepEqual(got.Object, wantMap) {
			t.Errorf("item %d (-typed +compact):\n%s", i, cmp.Diff(wantMap, got.Object))
		}
		if c.gvk != podsRes.GVK() || c.meta.Name != want.Name || resourceVersionOf(c) != want.ResourceVersion {
			t.Errorf("item %d: %v %+v", i, c.gvk, c.meta)
		}
	}
	if got := items[1].(*compactObject).meta.Annotations; !reflect.DeepEqual(got, map[string]string{initialEventsEndAnnotation: "true"}) {
		t.Errorf("annotations kept: %v", got)
	}
}

// A protobuf watch stream: each object kept as its bytes with its metadata (a bookmark's
// initial-events-end annotation too), an error a metav1.Status.
func TestTypedListerWatch(t *testing.T) {
	p := typedPod()
	p.SetGroupVersionKind(podsRes.GVK())
	bm := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9",
		Annotations: map[string]string{initialEventsEndAnnotation: "true", "other": "x"}}}
	bm.SetGroupVersionKind(podsRes.GVK())
	st := &apierrors.NewResourceExpired("too old").ErrStatus
	st.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("Status"))
	w := watchProtobuf(t, []watch.Event{{Type: watch.Added, Object: p}, {Type: watch.Bookmark, Object: bm}, {Type: watch.Error, Object: st}})
	defer w.Stop()
	ev := next(t, w)
	c, ok := ev.Object.(*compactObject)
	if !ok || ev.Type != watch.Added {
		t.Fatalf("%s %T", ev.Type, ev.Object)
	}
	want, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if got := toUnstructured(c); !reflect.DeepEqual(got.Object, want) {
		t.Errorf("(-typed +compact):\n%s", cmp.Diff(want, got.Object))
	}
	if c.meta.Name != "p" || c.meta.Namespace != "ns" || c.meta.UID != "u-p" || c.meta.ResourceVersion != "7" || c.meta.Annotations != nil {
		t.Errorf("metadata %+v", c.meta)
	}
	ev = next(t, w)
	if c, ok := ev.Object.(*compactObject); !ok || ev.Type != watch.Bookmark || c.meta.ResourceVersion != "9" ||
		!reflect.DeepEqual(c.meta.Annotations, map[string]string{initialEventsEndAnnotation: "true"}) {
		t.Errorf("bookmark %s %#v", ev.Type, ev.Object)
	}
	ev = next(t, w)
	if s, ok := ev.Object.(*metav1.Status); !ok || ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(s)) {
		t.Errorf("error event %s %#v", ev.Type, ev.Object)
	}
}

// FuzzCompactProtobuf: no input makes the protobuf cutter panic, and for every message both it
// and the Pod's decoder accept, the metadata it keeps is the decoded Pod's.
func FuzzCompactProtobuf(f *testing.F) {
	p := typedPod()
	p.Annotations[initialEventsEndAnnotation] = "true"
	seed, err := p.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add(append(append([]byte{}, protobufMagic...), seed...))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _, _ = unknownOf(data)
		_, _ = compactProtobufList(data, podsRes.GVK().GroupVersion().WithKind("PodList"), podsRes.GVK())
		_, _, _ = compactProtobufDecoder{scheme.Codecs.UniversalDeserializer()}.Decode(data, nil, nil)
		c, err := compactFromProtobuf(data, podsRes.GVK())
		var typed corev1.Pod
		if typed.Unmarshal(data) != nil {
			return
		}
		if err != nil {
			// Stricter than gogo's decoder on malformed groups (a deprecated wire type no
			// server sends): refused with an error, never a wrong object.
			return
		}
		want := &compactObject{}
		want.setMeta(typed.Name, typed.Namespace, typed.UID, typed.ResourceVersion, typed.Annotations)
		if !reflect.DeepEqual(c.meta, want.meta) {
			t.Errorf("metadata %+v, the Pod has %+v", c.meta, want.meta)
		}
	})
}

// TestTypedListerWatchKeepsEachObjectsBytes: a watch event's object keeps the bytes client-go's
// decoder handed over, not a copy; so every object must still be itself after the events that
// came after it were decoded (it would not be if client-go reused that buffer).
func TestTypedListerWatchKeepsEachObjectsBytes(t *testing.T) {
	const n = 64
	var events []watch.Event
	for i := range n {
		p := typedPod()
		p.SetGroupVersionKind(podsRes.GVK())
		p.Name = fmt.Sprintf("pod-%02d", i)
		p.Labels = map[string]string{"i": strings.Repeat("x", i)} // objects of different sizes
		events = append(events, watch.Event{Type: watch.Added, Object: p})
	}
	w := watchProtobuf(t, events)
	defer w.Stop()
	var got []*compactObject
	for range n {
		got = append(got, next(t, w).Object.(*compactObject))
	}
	for i, c := range got {
		o, err := c.typed()
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		p := o.(*corev1.Pod)
		if want := fmt.Sprintf("pod-%02d", i); p.Name != want || c.meta.Name != want || p.Labels["i"] != strings.Repeat("x", i) {
			t.Errorf("object %d is %s (meta %s, label of %d bytes)", i, p.Name, c.meta.Name, len(p.Labels["i"]))
		}
	}
}

// watchProtobuf serves events as a protobuf watch stream and watches pods in ns through the
// typed lister, as the informers do.
func watchProtobuf(t *testing.T, events []watch.Event) watch.Interface {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), protobufContentType)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", protobufContentType+";stream=watch")
		enc := restclientwatch.NewEncoder(streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(w),
			info.StreamSerializer.Serializer), info.Serializer)
		for _, ev := range events {
			if err := enc.Encode(&ev); err != nil {
				t.Error(err)
			}
		}
	}))
	t.Cleanup(srv.Close)
	l, err := newTypedLister(newTypedClients(&rest.Config{Host: srv.URL}), podsRes, "ns")
	if err != nil {
		t.Fatal(err)
	}
	w, err := l.Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWithoutManagedFields: the bytes cut without managedFields decode to the object without
// them, every other field as it was; bytes that do not parse are left alone. The cut assumes
// ObjectMeta is field 1 of every object message and managedFields its field 17: checked for
// every kind client-go's scheme knows.
func TestWithoutManagedFields(t *testing.T) {
	p := typedPod()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u-rs"}}
	p.Finalizers = []string{"f"}
	raw, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	cut, ok := withoutManagedFields([]byte("kept"), raw)
	if !ok || !bytes.HasPrefix(cut, []byte("kept")) {
		t.Fatalf("withoutManagedFields: ok %v, dst's bytes kept %v", ok, bytes.HasPrefix(cut, []byte("kept")))
	}
	var got, want corev1.Pod
	if err := got.Unmarshal(cut[len("kept"):]); err != nil {
		t.Fatal(err)
	}
	if err := want.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if len(want.ManagedFields) == 0 {
		t.Fatal("the pod has no managedFields to cut")
	}
	want.ManagedFields = nil
	if diff := cmp.Diff(&want, &got); diff != "" {
		t.Errorf("cut (-the pod without managedFields +decoded from the cut bytes):\n%s", diff)
	}
	for _, bad := range [][]byte{{0x0a, 0x7f, 1}, {0xff}, {0x0a, 0x02, 0x8a, 0x01}} {
		if out, ok := withoutManagedFields([]byte("x"), bad); ok || string(out) != "x" {
			t.Errorf("withoutManagedFields(%x) = %q, %v; want dst as it was, false", bad, out, ok)
		}
	}

	field := func(st reflect.Type, name string) (int, bool) {
		f, ok := st.FieldByName(name)
		if !ok {
			return 0, false
		}
		var num int
		parts := strings.Split(f.Tag.Get("protobuf"), ",")
		if len(parts) < 2 {
			return 0, false
		}
		_, err := fmt.Sscanf(parts[1], "%d", &num)
		return num, err == nil
	}
	if n, ok := field(reflect.TypeFor[metav1.ObjectMeta](), "ManagedFields"); !ok || n != 17 {
		t.Errorf("ObjectMeta.ManagedFields is protobuf field %d, not 17", n)
	}
	kinds := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if _, ok := typ.FieldByName("ObjectMeta"); !ok {
			continue
		}
		if _, ok := reflect.New(typ).Interface().(interface{ Marshal() ([]byte, error) }); !ok {
			continue
		}
		kinds++
		if n, ok := field(typ, "ObjectMeta"); !ok || n != 1 {
			t.Errorf("%s: ObjectMeta is protobuf field %d, not 1", gvk, n)
		}
	}
	if kinds < 50 {
		t.Errorf("only %d kinds with ObjectMeta and protobuf checked", kinds)
	}
}
