package recording

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// How a payload field is on its line (lines.go): its wire type and the conversions both ways,
// by its unit or, for a nested struct with units, field by field.

// convOf is how a payload field of type t, unit unit, is on a line; name is its json name and
// in the struct it is nested in ("" at the line's top).
func convOf(t reflect.Type, unit string, omitEmpty bool, name, in string) *wireConv {
	switch unit {
	case "s":
		return floatConv(func(d time.Duration) float64 { return d.Seconds() }, fromSeconds)
	case "s-trunc":
		return floatConv(func(d time.Duration) float64 { return d.Seconds() },
			func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) })
	case "ms":
		return floatConv(msFloat, fromMs)
	case "ms-trunc":
		return &wireConv{wire: reflect.TypeFor[int64](),
			to:   func(dst, src reflect.Value) { dst.SetInt(time.Duration(src.Int()).Milliseconds()) },
			from: func(dst, src reflect.Value) error { dst.SetInt(src.Int() * int64(time.Millisecond)); return nil }}
	case "time":
		return timeConv(omitEmpty, name, in)
	case "go":
		return &wireConv{wire: reflect.TypeFor[string](),
			to: func(dst, src reflect.Value) { dst.SetString(time.Duration(src.Int()).String()) },
			from: func(dst, src reflect.Value) error {
				if src.String() == "" {
					return nil // none: a fallback member may say it
				}
				d, err := time.ParseDuration(src.String())
				if err != nil {
					return fmt.Errorf(`field %q: %q is not a duration`, name, src.String())
				}
				dst.SetInt(int64(d))
				return nil
			}}
	case "":
	default:
		panic("unknown unit " + unit)
	}
	switch t.Kind() {
	case reflect.Struct:
		if hasUnits(t) {
			return structConv(t)
		}
	case reflect.Slice:
		if hasUnits(t.Elem()) {
			return sliceConv(t, convOf(t.Elem(), "", false, name, ""))
		}
	}
	// A list of structs reads back as none when empty, as a list of a payload's does.
	noneWhenEmpty := t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
	return &wireConv{wire: t,
		to: func(dst, src reflect.Value) { dst.Set(src) },
		from: func(dst, src reflect.Value) error {
			if !noneWhenEmpty || src.Len() > 0 {
				dst.Set(src)
			}
			return nil
		}}
}

func floatConv(to func(time.Duration) float64, from func(float64) time.Duration) *wireConv {
	return &wireConv{wire: reflect.TypeFor[float64](),
		to:   func(dst, src reflect.Value) { dst.SetFloat(to(time.Duration(src.Int()))) },
		from: func(dst, src reflect.Value) error { dst.SetInt(int64(from(src.Float()))); return nil }}
}

// timeConv writes a time as formatTime does, "" for the zero time when omitEmpty, and reads it
// back; a time that does not parse is an error naming its field, or its struct ("trigger time").
func timeConv(omitEmpty bool, name, in string) *wireConv {
	return &wireConv{wire: reflect.TypeFor[string](),
		to: func(dst, src reflect.Value) {
			t := src.Interface().(time.Time)
			if !omitEmpty || !t.IsZero() {
				dst.SetString(formatTime(t))
			}
		},
		from: func(dst, src reflect.Value) error {
			s := src.String()
			if s == "" && omitEmpty {
				return nil
			}
			t, err := time.Parse(time.RFC3339Nano, s)
			switch {
			case err != nil && in != "":
				return fmt.Errorf("%s %s: %w", in, name, err)
			case err != nil:
				return fmt.Errorf(`field %q: %q is not an RFC 3339 time`, name, s)
			}
			*dst.Addr().Interface().(*time.Time) = t // no copy of t to the heap
			return nil
		}}
}

// hasUnits reports whether struct type t has a field with a unit tag.
func hasUnits(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("unit") != "" {
			return true
		}
	}
	return false
}

// structConv is a nested struct with units (a Trigger): its tagged fields in their order.
func structConv(t reflect.Type) *wireConv {
	var fields []reflect.StructField
	var convs []*wireConv
	var index []int
	in := strings.ToLower(t.Name())
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "" || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		c := convOf(sf.Type, sf.Tag.Get("unit"), strings.Contains(opts, "omitempty"), name, in)
		fields = append(fields, reflect.StructField{Name: sf.Name, Type: c.wire, Tag: reflect.StructTag(`json:"` + tag + `"`)})
		convs, index = append(convs, c), append(index, i)
	}
	return &wireConv{wire: reflect.StructOf(fields),
		to: func(dst, src reflect.Value) {
			for j, c := range convs {
				c.to(dst.Field(j), src.Field(index[j]))
			}
		},
		from: func(dst, src reflect.Value) error {
			for j, c := range convs {
				if err := c.from(dst.Field(index[j]), src.Field(j)); err != nil {
					return err
				}
			}
			return nil
		}}
}

// sliceConv is a list of such structs; an empty one reads back as none.
func sliceConv(t reflect.Type, elem *wireConv) *wireConv {
	wire := reflect.SliceOf(elem.wire)
	return &wireConv{wire: wire,
		to: func(dst, src reflect.Value) {
			if src.Len() == 0 {
				return // nil
			}
			out := reflect.MakeSlice(wire, src.Len(), src.Len())
			for i := range src.Len() {
				elem.to(out.Index(i), src.Index(i))
			}
			dst.Set(out)
		},
		from: func(dst, src reflect.Value) error {
			if src.Len() == 0 {
				return nil
			}
			out := reflect.MakeSlice(t, src.Len(), src.Len())
			for i := range src.Len() {
				if err := elem.from(out.Index(i), src.Index(i)); err != nil {
					return err
				}
			}
			dst.Set(out)
			return nil
		}}
}
