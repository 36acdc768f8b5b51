package watch

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Materialize returns the event's object as an unstructured map: Object, converted from Typed
// the first time when the informer handed the event on typed (Config.TypedObjects). The
// conversion is the one the informer made before: DefaultUnstructuredConverter, with the
// object's apiVersion and kind.
func (ev *Event) Materialize() *unstructured.Unstructured {
	if ev.Object == nil && ev.Typed != nil {
		ev.Object = toUnstructured(ev.Typed)
	}
	return ev.Object
}

// HasObject reports whether the event carries an object, as a map or typed.
func (ev *Event) HasObject() bool { return ev.Object != nil || ev.Typed != nil }

// typedOf decodes a cached object to its Go type when it came over protobuf and the run hands
// Added events on typed; nil otherwise (or when it does not decode: the event then carries
// the unstructured object as before, with toUnstructured's fallback).
func (ri *resourceInformer) typedOf(o interface{}) runtime.Object {
	c, ok := o.(*compactObject)
	if !ok || !ri.cfg.TypedObjects || c.codec != compactProtobuf {
		return nil
	}
	t, err := c.typed()
	if err != nil {
		return nil
	}
	return t
}

// emitAdded emits an Added event: typed when the run hands built-ins on typed, else as an
// unstructured object.
func (ri *resourceInformer) emitAdded(delta Delta, o interface{}, initial bool) {
	t := ri.typedOf(o)
	if t == nil {
		ri.emitObject(Added, delta, toUnstructured(o), nil, initial, false)
		return
	}
	a, err := meta.Accessor(t)
	if err != nil {
		ri.emitObject(Added, delta, toUnstructured(o), nil, initial, false)
		return
	}
	ev := Event{Type: Added, Delta: delta, Namespace: a.GetNamespace(), Name: a.GetName(),
		ResourceVersion: a.GetResourceVersion(), InitialList: initial, Typed: t}
	ri.emitEvent(ev, t)
}
