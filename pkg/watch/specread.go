package watch

import (
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Preparer is what Config.Prepare gives for a resource whose Added lines it prepares.
type Preparer struct {
	// Read reads what a line needs of its object, decoded without managedFields (and without
	// what Spec leaves out of its spec).
	Read func(runtime.Object) any
	// Spec, when set, is all that Read looks at of the object's spec: the rest of the spec is
	// cut from the protobuf bytes before they are decoded (a kwok pod's containers and volumes
	// were two fifths of its decoding, for a state that reads how many containers it has).
	Spec *SpecRead
}

// SpecRead names fields of a kind's spec by their Go names: Fields are decoded, of Counted
// (lists of messages) only how many items there are (each item is decoded empty).
type SpecRead struct {
	Fields, Counted []string
}

// specCut is a SpecRead as protobuf field numbers of one Go type: spec is the object's field
// holding its spec.
type specCut struct {
	spec          protowire.Number
	keep, counted []protowire.Number
}

// newSpecCut resolves r against the Go type of obj from the protobuf tags of its fields; nil
// (no cut: the spec is decoded whole) when obj has no spec, or r names a field its spec does
// not have.
func newSpecCut(obj runtime.Object, r *SpecRead) *specCut {
	if r == nil || obj == nil {
		return nil
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	f, ok := t.Elem().FieldByName("Spec")
	if !ok || f.Type.Kind() != reflect.Struct {
		return nil
	}
	c := &specCut{spec: protobufNumber(f)}
	if c.spec == 0 {
		return nil
	}
	for _, names := range []struct {
		names []string
		into  *[]protowire.Number
	}{{r.Fields, &c.keep}, {r.Counted, &c.counted}} {
		for _, name := range names.names {
			sf, ok := f.Type.FieldByName(name)
			n := protobufNumber(sf)
			if !ok || n == 0 {
				return nil
			}
			*names.into = append(*names.into, n)
		}
	}
	return c
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

// cutSpec appends to dst the spec message b with only the fields c keeps, and of the counted
// ones an empty message per item.
func (c *specCut) cutSpec(dst, b []byte) ([]byte, bool) {
	size := 0
	if err := protoEach(b, func(num protowire.Number, f []byte) { size += c.sizeOf(num, f) }); err != nil {
		return dst, false
	}
	dst = protowire.AppendTag(dst, c.spec, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(size))
	_ = protoEach(b, func(num protowire.Number, f []byte) {
		switch {
		case c.counts(num, f):
			dst = protowire.AppendTag(dst, num, protowire.BytesType)
			dst = protowire.AppendVarint(dst, 0)
		case c.keeps(num):
			dst = append(dst, f...)
		}
	})
	return dst, true
}

// sizeOf is how many bytes field f (number num, tag included) takes in the cut spec.
func (c *specCut) sizeOf(num protowire.Number, f []byte) int {
	switch {
	case c.counts(num, f):
		return protowire.SizeTag(num) + protowire.SizeVarint(0)
	case c.keeps(num):
		return len(f)
	}
	return 0
}

func (c *specCut) keeps(num protowire.Number) bool {
	for _, n := range c.keep {
		if n == num {
			return true
		}
	}
	return false
}

// counts reports a counted field's item (a message: length-delimited).
func (c *specCut) counts(num protowire.Number, f []byte) bool {
	for _, n := range c.counted {
		if n == num {
			_, typ, _ := protowire.ConsumeTag(f)
			return typ == protowire.BytesType
		}
	}
	return false
}

// DecodeForRead decodes raw, an object of kind gvk in protobuf (its message, without the
// envelope), as the informer decodes an object for a Preparer's Read: without its
// managedFields, and of its spec only what spec names (nil: all of it).
func DecodeForRead(raw []byte, gvk schema.GroupVersionKind, spec *SpecRead) (runtime.Object, error) {
	o, pm, err := newProtobufTyped(gvk)
	if err != nil {
		return nil, err
	}
	if cut, ok := cutForRead(nil, raw, newSpecCut(o, spec)); ok {
		raw = cut
	}
	if err := pm.Unmarshal(raw); err != nil {
		return nil, err
	}
	o.GetObjectKind().SetGroupVersionKind(gvk)
	return o, nil
}
