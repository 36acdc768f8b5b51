package watch

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// protobuf). The objects stay typed, as the protobuf path's do: the cache keeps a
// PartialObjectMetadata (a fraction of the unstructured map it was once converted to) and a line
// converts it when it needs it (toUnstructured: apiVersion, kind and metadata, as before).
type metadataLister struct {
	r   metadata.ResourceInterface
	gvk schema.GroupVersionKind
}

// example is what the reflector's type check expects.
func (m metadataLister) example() runtime.Object {
	p := &metav1.PartialObjectMetadata{}
	p.SetGroupVersionKind(m.gvk)
	return p
}

func (m metadataLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l, err := m.r.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	l.SetGroupVersionKind(m.gvk.GroupVersion().WithKind(m.gvk.Kind + "List"))
	for i := range l.Items {
		l.Items[i].SetGroupVersionKind(m.gvk)
	}
	return l, nil
}

func (m metadataLister) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := m.r.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newMappedWatch(w, func(ev watch.Event) (watch.Event, bool) {
		if p, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
			p.SetGroupVersionKind(m.gvk)
		}
		return ev, true
	}), nil
}
