package watch

import (
	"bytes"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// The compact cache (issue #16). The reflector, its streaming list's temporary store, the delta
// queue and the indexer all hold the objects the lister returns, every listed object at once
// during an initial list: so the lister itself returns compact objects, the encoded bytes as
// the server sent them plus the few metadata fields client-go reads (name, namespace, uid,
// resourceVersion, the initial-events-end bookmark annotation). toUnstructured decodes them
// for the line that needs one; nothing keeps what it decodes.

// compactCodec is the encoding of a compactObject's bytes.
type compactCodec uint8

const (
	// compactJSON bytes are one JSON object, as the server sent it.
	compactJSON compactCodec = iota + 1
	// compactProtobuf bytes are the object's protobuf message (no runtime.Unknown envelope).
	compactProtobuf
)

// compactObject is a cached object: its encoded bytes, decoded only when a line needs it, and
// the metadata the client-go machinery reads (meta.Accessor works through GetObjectMeta; the
// metadata is a compactMeta, a metav1.Object of five fields).
type compactObject struct {
	meta  compactMeta // Name, Namespace, UID, ResourceVersion; the bookmark annotation only
	gvk   schema.GroupVersionKind
	raw   []byte // owned by the object; packed (pack.go) before it is handed on, or by the list's preparer before anything reads it
	codec compactCodec
	// noManagedFields: --drop-managed-fields on JSON bytes, applied when they are decoded.
	noManagedFields bool
	// packed: raw is coded with its kind's table (pack.go).
	packed bool
	// packLater: raw is still to be packed (pack.go's packReceived), by the tap or, for an object
	// of an initial streaming list, by the list's preparer once it read it (listprep.go).
	packLater bool
	// listRead: 1 + the position of what the list's preparer read of it among what it read
	// (listprep.go's listRead); 0: none. In the struct's padding: no byte more per object.
	listRead uint32
}

var (
	_ runtime.Object            = &compactObject{}
	_ metav1.ObjectMetaAccessor = &compactObject{}
)

func (c *compactObject) GetObjectKind() schema.ObjectKind { return c }

func (c *compactObject) SetGroupVersionKind(gvk schema.GroupVersionKind) { c.gvk = gvk }

func (c *compactObject) GroupVersionKind() schema.GroupVersionKind { return c.gvk }

func (c *compactObject) GetObjectMeta() metav1.Object { return &c.meta }

func (c *compactObject) DeepCopyObject() runtime.Object {
	if c == nil {
		return nil
	}
	out := *c
	out.meta = c.meta.deepCopy()
	out.raw = bytes.Clone(c.raw)
	return &out
}

// setMeta keeps what client-go reads of an object's metadata, and of its annotations only the
// one that ends a streaming list.
func (c *compactObject) setMeta(name, namespace string, uid types.UID, rv string, annotations map[string]string) {
	c.meta = compactMeta{Name: name, Namespace: namespace, UID: uid, ResourceVersion: rv}
	if v, ok := annotations[initialEventsEndAnnotation]; ok {
		c.meta.Annotations = map[string]string{initialEventsEndAnnotation: v}
	}
}

// decode returns the object in the form events carry, as the dynamic client (JSON) or the
// protobuf decoder and DefaultUnstructuredConverter would have made it.
func (c *compactObject) decode() (*unstructured.Unstructured, error) {
	var m map[string]interface{}
	switch c.codec {
	case compactJSON:
		raw, done, err := c.bytes()
		if err != nil {
			return nil, err
		}
		m, err = decodeJSONObject(raw)
		done()
		if err != nil {
			return nil, err
		}
	case compactProtobuf:
		o, err := c.typed()
		if err != nil {
			return nil, err
		}
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(o); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("compact object of unknown codec %d", c.codec)
	}
	u := &unstructured.Unstructured{Object: m}
	// A typed list's items carry no apiVersion and kind: the dynamic client takes the list's.
	if u.GetKind() == "" && u.GetAPIVersion() == "" && !c.gvk.Empty() {
		u.SetGroupVersionKind(c.gvk)
	}
	if c.noManagedFields {
		unstructured.RemoveNestedField(m, "metadata", "managedFields")
	}
	return u, nil
}

// dropManagedFields removes metadata.managedFields (--drop-managed-fields): from protobuf bytes
// at once (re-encoded without them, the memory saved), from JSON bytes when they are decoded
// (JSON re-encoded could change a number's type: 1.0 would come back an integer).
func (c *compactObject) dropManagedFields() {
	if c.codec == compactProtobuf {
		if o, err := c.typed(); err == nil {
			if a, err := meta.Accessor(o); err == nil && len(a.GetManagedFields()) > 0 {
				a.SetManagedFields(nil)
				if raw, err := o.(interface{ Marshal() ([]byte, error) }).Marshal(); err == nil {
					c.raw, c.packed = pack(c.packKey(), raw)
					return
				}
			}
			return
		}
	}
	c.noManagedFields = true
}

// typed decodes protobuf bytes to the built-in Go type, with its apiVersion and kind set.
func (c *compactObject) typed() (runtime.Object, error) { return c.decodeCut(false, nil) }

// decodeForRead is typed without metadata.managedFields, nor what cut leaves out (nil: nothing
// more), cut from the bytes before they are decoded (managedFields are about a third of a kwok
// pod's decoding, and of what it allocates): for a reader that never reads them
// (Config.Prepare).
func (c *compactObject) decodeForRead(cut *readCut) (runtime.Object, error) {
	return c.decodeCut(true, cut)
}

// decodeForReadInto is decodeForRead into o, an object of c's Go type that it zeroes first
// (nil: a new one): a reader that keeps nothing of the object decodes each into the same.
func (c *compactObject) decodeForReadInto(o runtime.Object, cut *readCut) (runtime.Object, error) {
	if o == nil {
		return c.decodeForRead(cut)
	}
	pm, ok := o.(interface{ Unmarshal([]byte) error })
	if !ok {
		return nil, fmt.Errorf("%s has no protobuf decoder", c.gvk)
	}
	pod, _ := o.(*corev1.Pod)
	if pod != nil {
		zeroPodKeepingLists(pod)
	} else {
		reflect.ValueOf(o).Elem().SetZero()
	}
	if err := c.unmarshal(pm, true, cut); err != nil {
		return nil, err
	}
	if pod != nil { // as a new pod has them when there are none
		nilIfEmpty(&pod.Spec.Containers)
		nilIfEmpty(&pod.Spec.InitContainers)
		nilIfEmpty(&pod.Status.Conditions)
		nilIfEmpty(&pod.Status.ContainerStatuses)
		nilIfEmpty(&pod.Status.InitContainerStatuses)
	}
	o.GetObjectKind().SetGroupVersionKind(c.gvk)
	return o, nil
}

// zeroPodKeepingLists zeroes pod but for the arrays of its containers and init containers and
// its status's conditions and container statuses, emptied (their items zeroed): the next
// pod's are decoded into them instead of into arrays grown item by item (a kwok pod's five
// conditions were four allocations and half of its status's decoding).
func zeroPodKeepingLists(pod *corev1.Pod) {
	c, ic := pod.Spec.Containers, pod.Spec.InitContainers
	conds, cs, ics := pod.Status.Conditions, pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses
	clear(c)
	clear(ic)
	clear(conds)
	clear(cs)
	clear(ics)
	*pod = corev1.Pod{}
	pod.Spec.Containers, pod.Spec.InitContainers = c[:0], ic[:0]
	pod.Status.Conditions, pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses = conds[:0], cs[:0], ics[:0]
}

func nilIfEmpty[T any](s *[]T) {
	if len(*s) == 0 {
		*s = nil
	}
}

func (c *compactObject) decodeCut(noManagedFields bool, cut *readCut) (runtime.Object, error) {
	o, pm, err := newProtobufTyped(c.gvk)
	if err != nil {
		return nil, err
	}
	if err := c.unmarshal(pm, noManagedFields, cut); err != nil {
		return nil, err
	}
	o.GetObjectKind().SetGroupVersionKind(c.gvk)
	return o, nil
}

// newProtobufTyped is an empty object of gvk's Go type and its protobuf decoder.
func newProtobufTyped(gvk schema.GroupVersionKind) (runtime.Object, interface{ Unmarshal([]byte) error }, error) {
	o, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, nil, err
	}
	pm, ok := o.(interface{ Unmarshal([]byte) error })
	if !ok {
		return nil, nil, fmt.Errorf("%s has no protobuf decoder", gvk)
	}
	return o, pm, nil
}

// unmarshal decodes the object's protobuf bytes into pm, decoding packed bytes first into a
// pooled buffer (the Go types' decoders copy what they keep), and cutting managedFields out
// into another when asked (and what cut leaves out).
func (c *compactObject) unmarshal(pm interface{ Unmarshal([]byte) error }, noManagedFields bool, cut *readCut) error {
	raw, done, err := c.bytes()
	if err != nil {
		return err
	}
	defer done()
	if noManagedFields {
		bp := unpackBufs.Get().(*[]byte)
		defer unpackBufs.Put(bp)
		if cut, ok := cutForRead((*bp)[:0], raw, cut); ok {
			*bp, raw = cut[:0], cut
		}
	}
	return pm.Unmarshal(raw)
}

// compactList is a list of compact objects, as the reflector and its pager read lists
// (meta.ListAccessor, meta.EachListItem over Items). Each item is its own allocation, so that
// one cached object does not keep a whole list's array alive.
type compactList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []*compactObject
}

func (l *compactList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &compactList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]*compactObject, len(l.Items))
		for i, o := range l.Items {
			out.Items[i] = o.DeepCopyObject().(*compactObject)
		}
	}
	return out
}
