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
	ri.emitAddedTyped(delta, o, ri.typedOf(o), initial)
}

// emitAddedTyped is emitAdded with o's Go type decoded already (nil: not typed).
func (ri *resourceInformer) emitAddedTyped(delta Delta, o interface{}, t runtime.Object, initial bool) {
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

// aheadWindow is how many objects the list's decoder hands over at once, and aheadMin the
// smallest list decoded ahead: a few objects are not worth a goroutine.
const (
	aheadWindow = 128
	aheadMin    = 2 * aheadWindow
)

// typedAhead decodes the Go types of a list's added objects on a goroutine of its own while
// the informer emits the lines before them: the decoding of a large initial list on the second
// core, in the list's order, at most a few windows ahead (their typed objects are the memory
// it costs).
type typedAhead struct {
	windows chan []runtime.Object
	done    chan struct{}
	cur     []runtime.Object
}

// decodeAhead starts decoding objs (nil entries are skipped, and get returns nil for them);
// stop ends it.
func (ri *resourceInformer) decodeAhead(objs []interface{}) *typedAhead {
	a := &typedAhead{windows: make(chan []runtime.Object, 4), done: make(chan struct{})}
	go func() {
		defer close(a.windows)
		for start := 0; start < len(objs); start += aheadWindow {
			w := make([]runtime.Object, min(aheadWindow, len(objs)-start))
			for i := range w {
				if o := objs[start+i]; o != nil {
					w[i] = ri.typedOf(o)
				}
			}
			select {
			case a.windows <- w:
			case <-a.done:
				return
			}
		}
	}()
	return a
}

// next returns the next object's Go type (nil when it was not decoded).
func (a *typedAhead) next() runtime.Object {
	if len(a.cur) == 0 {
		a.cur = <-a.windows
		if len(a.cur) == 0 {
			return nil
		}
	}
	o := a.cur[0]
	a.cur = a.cur[1:]
	return o
}

func (a *typedAhead) stop() { close(a.done) }
