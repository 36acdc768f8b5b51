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
	if ev.Obj.Object == nil {
		if t := ev.TypedObject(); t != nil {
			ev.Obj.Object = toUnstructured(t)
		} else if ev.Obj.Cached != nil { // it does not decode: toUnstructured's fallback says so
			ev.Obj.Object = toUnstructured(ev.Obj.Cached)
			ev.Obj.Cached = nil
		}
	}
	return ev.Obj.Object
}

// TypedObject returns the event's object as its Go type: Typed, decoded from the cached object
// the first time on a prepared line (Config.Prepare); nil when the line has none.
func (ev *Event) TypedObject() runtime.Object {
	if c, ok := ev.Obj.Cached.(*compactObject); ok && ev.Obj.Typed == nil {
		if t, err := c.typed(); err == nil {
			ev.Obj.Typed, ev.Obj.Cached = t, nil
		}
	}
	return ev.Obj.Typed
}

// HasObject reports whether the event carries an object, as a map or typed (or cached, on a
// prepared line).
func (ev *Event) HasObject() bool {
	return ev.Obj.Object != nil || ev.Obj.Typed != nil || ev.Obj.Cached != nil
}

// TakePrepared returns what Config.Prepare read of the line's object, and takes it off the
// line with the cached object: for the stage that renders what was prepared, after which the
// line holds nothing of its object (as one printer.Lighten lightened).
func (ev *Event) TakePrepared() Prepared {
	p := ev.Obj.Prepared
	ev.Obj.Prepared, ev.Obj.Cached = nil, nil
	return p
}

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
	ev := Event{
		Type: Added,
		Obj: ObjectInfo{
			Delta:       delta,
			InitialList: initial,
			Typed:       t,
		},
		Namespace:       a.GetNamespace(),
		Name:            a.GetName(),
		ResourceVersion: a.GetResourceVersion(),
	}
	ri.emitEvent(&ev, t)
}

// emitPrepared emits the Added line of a cached object with what Config.Prepare read of it.
func (ri *resourceInformer) emitPrepared(delta Delta, c *compactObject, prepared Prepared, initial bool) {
	ev := Event{
		Type: Added,
		Obj: ObjectInfo{
			Delta:       delta,
			InitialList: initial,
			Prepared:    prepared,
			Cached:      c,
		},
		Namespace:       c.meta.GetNamespace(),
		Name:            c.meta.GetName(),
		ResourceVersion: c.meta.GetResourceVersion(),
	}
	ri.emitEvent(&ev, c)
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
// it costs). With Config.Prepare it reads there what each line needs instead, and the line
// carries that and no decoded object.
type typedAhead struct {
	windows chan []aheadObject
	done    chan struct{}
	cur     []aheadObject
}

// aheadObject is one object decoded ahead: its Go type, or what Config.Prepare read of it.
type aheadObject struct {
	typed    runtime.Object
	prepared Prepared
}

// decodeAhead starts decoding objs (nil entries are skipped, and get returns nil for them);
// stop ends it.
func (ri *resourceInformer) decodeAhead(objs []interface{}) *typedAhead {
	a := &typedAhead{windows: make(chan []aheadObject, 4), done: make(chan struct{})}
	go func() {
		defer close(a.windows)
		for start := 0; start < len(objs); start += aheadWindow {
			w := make([]aheadObject, min(aheadWindow, len(objs)-start))
			for i := range w {
				if o := objs[start+i]; o != nil {
					w[i] = ri.decodeOne(o)
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

// decodeOne decodes an added object for its line: what Config.Prepare reads of it when it
// reads anything; else its Go type.
func (ri *resourceInformer) decodeOne(o interface{}) aheadObject {
	if c, ok := o.(*compactObject); ok {
		if p := ri.prepared(c); p != nil {
			return aheadObject{prepared: p}
		}
	}
	return aheadObject{typed: ri.typedOf(o)}
}

// prepared is what Config.Prepare reads of c, decoded without its managedFields (nor what its
// Reads leave out); nil when
// there is no Prepare, c is not protobuf or does not decode, or Prepare reads nothing.
func (ri *resourceInformer) prepared(c *compactObject) Prepared {
	if ri.prepare == nil || c.codec != compactProtobuf {
		return nil
	}
	reuse, _ := ri.readObjs.Get().(runtime.Object)
	if reuse != nil && reuse.GetObjectKind().GroupVersionKind() != c.gvk {
		reuse = nil
	}
	t, err := c.decodeForReadInto(reuse, ri.readCut(c.gvk))
	if err != nil {
		return nil
	}
	p := ri.prepare.ReadObject(t)
	ri.readObjs.Put(t)
	return p
}

// next returns the next object as decoded ahead (zero when it was not decoded).
func (a *typedAhead) next() aheadObject {
	if len(a.cur) == 0 {
		a.cur = <-a.windows
		if len(a.cur) == 0 {
			return aheadObject{}
		}
	}
	o := a.cur[0]
	a.cur = a.cur[1:]
	return o
}

func (a *typedAhead) stop() { close(a.done) }
