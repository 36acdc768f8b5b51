package watch

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// lister is what the tap calls: a compact JSON client (compactLister), a protobuf client of a
// built-in resource (typedLister) or the metadata client, adapted. List returns a list object.
type lister interface {
	List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// dynamicLister serves a resource through the dynamic client, in JSON: only when the run has no
// REST configuration (the fake clients of tests); the plugin uses compactLister.
type dynamicLister struct{ r dynamic.ResourceInterface }

func (d dynamicLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := d.r.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (d dynamicLister) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return d.r.Watch(ctx, opts)
}

// metadataLister serves a resource through the metadata client (PartialObjectMetadata, in
// protobuf), as unstructured objects holding apiVersion, kind and metadata only, so everything
// downstream works unchanged at a fraction of the decoding and memory cost.
type metadataLister struct {
	r   metadata.ResourceInterface
	gvk schema.GroupVersionKind
}

func (m metadataLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := m.r.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Object: map[string]interface{}{
		"apiVersion": m.gvk.GroupVersion().String(), "kind": m.gvk.Kind + "List",
	}}
	out.SetResourceVersion(l.ResourceVersion)
	out.SetContinue(l.Continue)
	out.Items = make([]unstructured.Unstructured, 0, len(l.Items))
	for i := range l.Items {
		out.Items = append(out.Items, *m.convert(&l.Items[i]))
	}
	return out, nil
}

func (m metadataLister) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := m.r.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if p, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
			ev.Object = m.convert(p)
		}
		return ev, true
	}), nil
}

func (m metadataLister) convert(p *metav1.PartialObjectMetadata) *unstructured.Unstructured {
	md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&p.ObjectMeta)
	if err != nil {
		md = map[string]interface{}{"name": p.Name, "namespace": p.Namespace, "resourceVersion": p.ResourceVersion}
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": m.gvk.GroupVersion().String(),
		"kind":       m.gvk.Kind,
		"metadata":   md,
	}}
}
