package recording

import (
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// A struct's JSON members as encoding/json sees them (names, tags, embedded structs, omitempty
// and omitzero), for the sorted encoder's struct encoders (sortenc.go).

// field is one JSON member of a struct: where it is (the index path through embedded structs),
// its name, and how it is written.
type field struct {
	name      string
	index     []int
	omitEmpty bool
	// omitZero: the omitzero option; isZero, its test when the type has an IsZero method.
	omitZero bool
	isZero   func(reflect.Value) bool
	enc      encodeFunc
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// zeroTest is encoding/json's omitzero test of a field of type t that has an IsZero method;
// nil when it has none (reflect's IsZero then).
func zeroTest(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) || v.Interface().(isZeroer).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return nil
}

// omitted reports whether the field's value fv is left out (omitempty, omitzero).
func (f *field) omitted(fv reflect.Value) bool {
	if f.omitEmpty && isEmptyValue(fv) {
		return true
	}
	if !f.omitZero {
		return false
	}
	if f.isZero != nil {
		return f.isZero(fv)
	}
	return fv.IsZero()
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// jsonFields are the members encoding/json writes for struct type t, sorted by name: exported
// fields by their tag's name or their own, embedded structs without a name inlined. ok is false
// when a name occurs twice (encoding/json's dominance rules would decide) or a field has the
// string option.
func jsonFields(t reflect.Type) (fields []field, ok bool) {
	type embedded struct {
		t     reflect.Type
		index []int
	}
	level := []embedded{{t: t}}
	seen := map[reflect.Type]bool{}
	names := map[string]bool{}
	for len(level) > 0 {
		var nextLevel []embedded
		for _, em := range level {
			if seen[em.t] {
				return nil, false // the same struct embedded twice
			}
			seen[em.t] = true
			for i := range em.t.NumField() {
				sf := em.t.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, omitEmpty, omitZero, quoted := parseTag(tag)
				if quoted {
					return nil, false // the string option: encoding/json's own quoting
				}
				index := append(slices.Clip(em.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					nextLevel = append(nextLevel, embedded{t: ft, index: index})
					continue
				}
				if name == "" {
					name = sf.Name
				}
				if names[name] {
					return nil, false
				}
				names[name] = true
				f := field{name: name, index: index, omitEmpty: omitEmpty, omitZero: omitZero}
				if omitZero {
					f.isZero = zeroTest(sf.Type)
				}
				fields = append(fields, f)
			}
		}
		level = nextLevel
	}
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.name, b.name) })
	return fields, true
}

// parseTag reads a json tag as encoding/json does: the member's name ("" when the tag gives
// none, or one encoding/json would not take), and its omitempty, omitzero and string options.
func parseTag(tag string) (name string, omitEmpty, omitZero, quoted bool) {
	name, opts, _ := strings.Cut(tag, ",")
	if !validTagName(name) {
		name = ""
	}
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		switch o {
		case "omitempty":
			omitEmpty = true
		case "omitzero":
			omitZero = true
		case "string":
			quoted = true
		}
	}
	return name, omitEmpty, omitZero, quoted
}

// validTagName is encoding/json's isValidTag.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
