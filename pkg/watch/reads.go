package watch

import (
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// AddedReader is the seam between the informer and what renders its lines (Config.Prepare):
// for a resource, whether its Added lines need their decoded objects, or only what a reader
// reads of each (pkg/printer's Printer: the state a human line shows). The informer then reads
// them as it decodes them, and the lines carry what was read instead of the objects.
type AddedReader interface {
	// PrepareAdded says what res's Added lines need: a Preparer with no Reader when they need
	// their objects.
	PrepareAdded(res discovery.Resource) Preparer
}

// ObjectReader reads what an Added line needs of its object (AddedReader).
type ObjectReader interface {
	// ReadObject reads what a line needs of its object, decoded without managedFields (and
	// without what Preparer.Reads leaves out). It must keep neither the object nor a pod's
	// containers, init containers, status conditions or container statuses (their arrays): the
	// object is zeroed and the next decoded into it, a pod's lists into the same arrays. Its
	// strings and other slices stay as they are. nil: it could not read it, and the line
	// carries its object as others do.
	ReadObject(runtime.Object) Prepared
}

// Prepared is what an ObjectReader read of a line's object: the watch package carries it on
// the line (Event.Obj.Prepared) and never looks into it; the reader's own output does
// (Event.TakePrepared).
type Prepared interface{}

// Preparer is what an AddedReader says of a resource whose Added lines it prepares.
type Preparer struct {
	// Reader reads each Added line's object (nil: the lines carry their objects).
	Reader ObjectReader
	// Reads, when set, is all that Read looks at of the objects: the rest is cut from the
	// protobuf bytes before they are decoded (a kwok pod's containers, volumes, labels and
	// owners were about a third of its decoding, for a state that reads how many containers it
	// has).
	Reads *Reads
}

// Reads names fields of a kind's Go type that a reader reads: Metadata the ObjectMeta fields
// (nil: all of them), Spec the spec's fields, and SpecCounted lists of the spec of which it
// reads only how many items there are, each then decoded empty (both nil: all of the spec).
type Reads struct {
	Metadata, Spec, SpecCounted []string
}

// readCut is Reads as protobuf field numbers of one Go type.
type readCut struct {
	// meta: the object's metadata field, and the ObjectMeta fields kept (nil: all but
	// managedFields).
	meta     protowire.Number
	metaKeep []protowire.Number
	// spec: the object's spec field (0: the spec is not cut), its fields kept and counted.
	spec          protowire.Number
	keep, counted []protowire.Number
}

// managedFieldsNumber is ObjectMeta's managedFields in protobuf (TestWithoutManagedFields
// checks it in every kind client-go's scheme knows).
const managedFieldsNumber = 17

// newReadCut resolves r against the Go type of obj from the protobuf tags of its fields; nil
// (nothing cut but managedFields) when r names a field obj does not have, or obj has no
// metadata.
func newReadCut(obj runtime.Object, r *Reads) *readCut {
	if r == nil || obj == nil {
		return nil
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	c := &readCut{}
	md, ok := t.Elem().FieldByName("ObjectMeta")
	if c.meta = protobufNumber(md); !ok || c.meta == 0 {
		return nil
	}
	if r.Metadata != nil {
		if c.metaKeep, ok = fieldNumbers(md.Type, r.Metadata); !ok {
			return nil
		}
	}
	if r.Spec == nil && r.SpecCounted == nil {
		return c
	}
	spec, ok := t.Elem().FieldByName("Spec")
	if c.spec = protobufNumber(spec); !ok || c.spec == 0 || spec.Type.Kind() != reflect.Struct {
		return nil
	}
	if c.keep, ok = fieldNumbers(spec.Type, r.Spec); !ok {
		return nil
	}
	if c.counted, ok = fieldNumbers(spec.Type, r.SpecCounted); !ok {
		return nil
	}
	return c
}

// fieldNumbers are the protobuf numbers of the fields of t named; false when one is not there.
func fieldNumbers(t reflect.Type, names []string) ([]protowire.Number, bool) {
	var out []protowire.Number
	for _, name := range names {
		f, ok := t.FieldByName(name)
		n := protobufNumber(f)
		if !ok || n == 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// protobufNumber is the field number in f's protobuf tag (`protobuf:"bytes,2,rep,name=..."`), 0
// without one.
func protobufNumber(f reflect.StructField) protowire.Number {
	parts := strings.Split(f.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		return 0
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return 0
	}
	return protowire.Number(n)
}

// cutMessage appends to dst field num holding message b with only its fields keep says (tag
// included; counted ones each as an empty message).
func cutMessage(dst []byte, num protowire.Number, b []byte, keep func(protowire.Number) bool, counted []protowire.Number) ([]byte, bool) {
	size := 0
	if err := protoEach(b, func(n protowire.Number, f []byte) {
		switch {
		case counts(counted, n, f):
			size += protowire.SizeTag(n) + protowire.SizeVarint(0)
		case keep(n):
			size += len(f)
		}
	}); err != nil {
		return dst, false
	}
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(size))
	_ = protoEach(b, func(n protowire.Number, f []byte) {
		switch {
		case counts(counted, n, f):
			dst = protowire.AppendTag(dst, n, protowire.BytesType)
			dst = protowire.AppendVarint(dst, 0)
		case keep(n):
			dst = append(dst, f...)
		}
	})
	return dst, true
}

// keepsMeta reports an ObjectMeta field the cut keeps.
func (c *readCut) keepsMeta(n protowire.Number) bool {
	if n == managedFieldsNumber {
		return false
	}
	return c == nil || c.metaKeep == nil || hasNumber(c.metaKeep, n)
}

func (c *readCut) keepsSpec(n protowire.Number) bool { return hasNumber(c.keep, n) }

func hasNumber(ns []protowire.Number, n protowire.Number) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// counts reports an item of a counted list (a message: length-delimited).
func counts(counted []protowire.Number, n protowire.Number, f []byte) bool {
	if !hasNumber(counted, n) {
		return false
	}
	_, typ, _ := protowire.ConsumeTag(f)
	return typ == protowire.BytesType
}

// DecodeForRead decodes raw, an object of kind gvk in protobuf (its message, without the
// envelope), as the informer decodes an object for a Preparer's Read: without its
// managedFields, and without what reads leaves out (nil: nothing more). It resolves reads
// against gvk's Go type at each call (the informer does once per resource).
func DecodeForRead(raw []byte, gvk schema.GroupVersionKind, reads *Reads) (runtime.Object, error) {
	o, pm, err := newProtobufTyped(gvk)
	if err != nil {
		return nil, err
	}
	if cut, ok := cutForRead(nil, raw, newReadCut(o, reads)); ok {
		raw = cut
	}
	if err := pm.Unmarshal(raw); err != nil {
		return nil, err
	}
	o.GetObjectKind().SetGroupVersionKind(gvk)
	return o, nil
}
