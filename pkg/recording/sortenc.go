package recording

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The sorted encoder writes a Go value as EncodeObject's two passes do (encoding/json, then
// SortKeys), in one: a struct's fields in the order of their JSON names, a map's keys sorted,
// strings, numbers and omitempty as encoding/json writes them. What it does not write itself
// (a json.Marshaler or encoding.TextMarshaler such as metav1.Time, resource.Quantity or
// FieldsV1, floats, arrays, interfaces, []byte) it hands to encoding/json and SortKeys, value by
// value: both passes rewrite each value on its own, so a value's bytes in the whole are its
// bytes alone. A struct type whose fields encoding/json would resolve by its dominance rules
// (one JSON name twice), or that uses the string option, is such a value too.
// FuzzSortedEncoder compares both on filled objects of the built-in types.

var errNotOnePass = errors.New("not encodable in one pass")

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodeFunc appends v to e.out.
type encodeFunc func(e *sortedEncoder, v reflect.Value) error

// sortedEncoder is one encoding's state.
type sortedEncoder struct {
	out []byte
	// s rewrites the fragments encoding/json writes (its buffers reused).
	s sorter
}

// encodeSorted is EncodeObject in one pass; an error when o is not encoded so (EncodeObject
// then takes the two passes, which say what is wrong, if anything).
func encodeSorted(o any) ([]byte, error) {
	t := reflect.TypeOf(o)
	if t == nil {
		return nil, errNotOnePass
	}
	e := encoderPool.Get().(*sortedEncoder)
	defer encoderPool.Put(e)
	e.out = e.out[:0]
	if err := sortedEncoderOf(t)(e, reflect.ValueOf(o)); err != nil {
		return nil, err
	}
	out := make([]byte, len(e.out))
	copy(out, e.out)
	if cap(e.out) > 1<<20 {
		e.out = nil // an outsized object's buffer is not kept
	}
	return out, nil
}

var encoderPool = sync.Pool{New: func() any { return &sortedEncoder{} }}

// encoders caches each type's encodeFunc; a type that cannot be written in one pass maps to
// nil.
var encoders sync.Map // reflect.Type → encodeFunc

// sortedEncoderOf returns t's encodeFunc.
func sortedEncoderOf(t reflect.Type) encodeFunc {
	if f, ok := encoders.Load(t); ok {
		return f.(encodeFunc)
	}
	c := &typeCompiler{building: map[reflect.Type]*encodeFunc{}}
	f := c.compile(t)
	encoders.Store(t, f)
	return f
}

// typeCompiler builds the encodeFuncs of a type and the types it holds. Recursive types get a
// func that calls through a pointer set once the type is built.
type typeCompiler struct {
	building map[reflect.Type]*encodeFunc
}

func (c *typeCompiler) compile(t reflect.Type) encodeFunc {
	if f, ok := encoders.Load(t); ok {
		return f.(encodeFunc)
	}
	if p, ok := c.building[t]; ok {
		return func(e *sortedEncoder, v reflect.Value) error { return (*p)(e, v) }
	}
	p := new(encodeFunc)
	c.building[t] = p
	*p = c.build(t)
	return *p
}

func (c *typeCompiler) build(t reflect.Type) encodeFunc {
	if fieldsV1Cached && (t == fieldsV1Type || t == reflect.PointerTo(fieldsV1Type)) {
		return encodeFieldsV1
	}
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return encodeFragment
	}
	if pt := reflect.PointerTo(t); t.Kind() != reflect.Pointer && (pt.Implements(marshalerType) || pt.Implements(textMarshalerType)) {
		return encodeFragment // encoding/json calls the pointer's method on an addressable value
	}
	switch t.Kind() {
	case reflect.Bool:
		return encodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encodeUint
	case reflect.String:
		return encodeString
	case reflect.Pointer:
		elem := c.compile(t.Elem())
		return func(e *sortedEncoder, v reflect.Value) error {
			if v.IsNil() {
				e.out = append(e.out, "null"...)
				return nil
			}
			return elem(e, v.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return encodeFragment // base64, or the elements' own marshalers
		}
		elem := c.compile(t.Elem())
		return func(e *sortedEncoder, v reflect.Value) error {
			if v.IsNil() {
				e.out = append(e.out, "null"...)
				return nil
			}
			e.out = append(e.out, '[')
			for i := range v.Len() {
				if i > 0 {
					e.out = append(e.out, ',')
				}
				if err := elem(e, v.Index(i)); err != nil {
					return err
				}
			}
			e.out = append(e.out, ']')
			return nil
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return encodeFragment
		}
		return c.mapEncoder(t)
	case reflect.Struct:
		return c.structEncoder(t)
	}
	// Floats, arrays, interfaces, and what encoding/json refuses (its error is EncodeObject's).
	return encodeFragment
}

// encodeFragment has encoding/json write v (its method through v's address when it is
// addressable, as encoding/json calls it) and SortKeys rewrite that.
func encodeFragment(e *sortedEncoder, v reflect.Value) error {
	if !v.CanInterface() {
		return errNotOnePass // reached through an unexported field
	}
	// Through its address, encoding/json writes an addressable value as in place: its
	// pointer-receiver methods, and its fields', are called.
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	e.s.in, e.s.pos, e.s.out = b, 0, e.out
	err = e.s.value()
	e.out, e.s.in = e.s.out, nil
	if err == nil && e.s.pos != len(b) {
		err = errSortSyntax
	}
	return err
}

func encodeBool(e *sortedEncoder, v reflect.Value) error {
	e.out = strconv.AppendBool(e.out, v.Bool())
	return nil
}

func encodeInt(e *sortedEncoder, v reflect.Value) error {
	e.out = strconv.AppendInt(e.out, v.Int(), 10)
	return nil
}

func encodeUint(e *sortedEncoder, v reflect.Value) error {
	if n := v.Uint(); n <= math.MaxInt64 {
		e.out = strconv.AppendUint(e.out, n, 10)
		return nil
	}
	return encodeFragment(e, v) // SortKeys writes it as a float64
}

func encodeString(e *sortedEncoder, v reflect.Value) error {
	e.appendString(v.String())
	return nil
}

// appendString writes s quoted as encoding/json does (HTML escaped, invalid UTF-8 as U+FFFD),
// then SortKeys: itself when no byte needs an escape, else through both.
func (e *sortedEncoder) appendString(s string) {
	if needsEscape(s) {
		b, _ := json.Marshal(s) // a string always encodes
		e.s.in, e.s.pos = b, 0
		tok, err := e.s.str() // as SortKeys rewrites it (U+FFFD unescaped)
		if err != nil {
			tok = b
		}
		e.out = append(e.out, tok...)
		e.s.in = nil
		return
	}
	e.out = append(e.out, '"')
	e.out = append(e.out, s...)
	e.out = append(e.out, '"')
}

func (c *typeCompiler) mapEncoder(t reflect.Type) encodeFunc {
	elem := c.compile(t.Elem())
	return func(e *sortedEncoder, v reflect.Value) error {
		if v.IsNil() {
			e.out = append(e.out, "null"...)
			return nil
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		e.out = append(e.out, '{')
		for i, k := range keys {
			if i > 0 {
				e.out = append(e.out, ',')
			}
			e.appendString(k.String())
			e.out = append(e.out, ':')
			if err := elem(e, v.MapIndex(k)); err != nil {
				return err
			}
		}
		e.out = append(e.out, '}')
		return nil
	}
}

func (c *typeCompiler) structEncoder(t reflect.Type) encodeFunc {
	fields, ok := jsonFields(t)
	if !ok {
		return encodeFragment // encoding/json's rules decide; SortKeys sorts it
	}
	for i := range fields {
		fields[i].enc = c.compile(t.FieldByIndex(fields[i].index).Type)
	}
	return func(e *sortedEncoder, v reflect.Value) error {
		e.out = append(e.out, '{')
		first := true
	next:
		for i := range fields {
			f := &fields[i]
			fv := v
			for _, j := range f.index {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue next
					}
					fv = fv.Elem()
				}
				fv = fv.Field(j)
			}
			if f.omitted(fv) {
				continue
			}
			if !first {
				e.out = append(e.out, ',')
			}
			first = false
			e.appendString(f.name)
			e.out = append(e.out, ':')
			if err := f.enc(e, fv); err != nil {
				return err
			}
		}
		e.out = append(e.out, '}')
		return nil
	}
}

// A list's objects repeat their managedFields' fieldsV1 (a ReplicaSet's pods: the same fields
// of the same managers), the largest part of a pod's JSON and the costliest to write (compacted
// by encoding/json, then sorted). What is written depends on the raw bytes alone (FieldsV1 has
// no other field: fieldsV1Cached), so it is remembered by them: at most fieldsCacheMax entries
// of at most fieldsCacheRaw bytes each, forgotten all at once when full.
const (
	fieldsCacheMax = 256
	fieldsCacheRaw = 16 << 10
)

var (
	fieldsV1Type   = reflect.TypeFor[metav1.FieldsV1]()
	fieldsV1Cached = fieldsV1Type.NumField() == 1 && fieldsV1Type.Field(0).Name == "Raw" &&
		fieldsV1Type.Field(0).Type == reflect.TypeFor[[]byte]()
	fieldsCache = struct {
		sync.Mutex
		m map[string][]byte
	}{m: map[string][]byte{}}
)

// encodeFieldsV1 writes a FieldsV1 (or a pointer to one) as encodeFragment does, remembered by
// its raw bytes.
func encodeFieldsV1(e *sortedEncoder, v reflect.Value) error {
	f := v
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return encodeFragment(e, v)
		}
		f = f.Elem()
	}
	raw := f.Field(0).Bytes()
	if len(raw) == 0 || len(raw) > fieldsCacheRaw {
		return encodeFragment(e, v)
	}
	fieldsCache.Lock()
	b, ok := fieldsCache.m[string(raw)]
	fieldsCache.Unlock()
	if ok {
		e.out = append(e.out, b...)
		return nil
	}
	start := len(e.out)
	if err := encodeFragment(e, v); err != nil {
		return err
	}
	b = slices.Clone(e.out[start:])
	fieldsCache.Lock()
	if len(fieldsCache.m) >= fieldsCacheMax {
		clear(fieldsCache.m)
	}
	fieldsCache.m[string(raw)] = b
	fieldsCache.Unlock()
	return nil
}
