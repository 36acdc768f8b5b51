package recording

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Encode writes a line whose payload is its line (lines.go) straight from the event: the bytes
// encoding/json writes of its wire value (lineCodec.encode, which Record returns), without
// building that value. Each member's writer is compiled once, like the sorted encoder's
// (sortenc.go) but in the line's order; what it does not write itself (a json.Marshaler, a map)
// it hands to encoding/json. TestLineWritersMatchWireValues holds both to the same bytes.

// appendFunc appends the JSON of v to b.
type appendFunc func(b []byte, v reflect.Value) ([]byte, error)

// writer is how a member is written: its key, when it is left out, and its value.
type writer struct {
	key  string // `,"name":`
	omit func(v reflect.Value) bool
	app  appendFunc
}

// appendLine appends ev's line (without its newline) to b.
func (c *lineCodec) appendLine(b []byte, ev *watch.Event) ([]byte, error) {
	b = append(b, `{"time":"`...)
	b = recordable(ev.Time).AppendFormat(b, TimeFormat)
	b = append(b, '"')
	b = append(b, `,"type":`...)
	b = appendJSONString(b, string(ev.Type))
	for i, s := range [...]string{ev.Resource.Group, ev.Resource.Version, ev.Resource.Resource, ev.Resource.Kind} {
		b = append(b, ',', '"')
		b = append(b, headFields[2+i]...)
		b = append(b, '"', ':')
		b = appendJSONString(b, s)
	}
	e := reflect.ValueOf(ev).Elem()
	var err error
	for i := range c.members {
		m := &c.members[i]
		in, ok := m.in(e, false)
		var v reflect.Value
		if ok {
			v = in.Field(m.field)
		} else {
			v = reflect.Zero(m.ftype)
		}
		if m.flag >= 0 && (!ok || !in.Field(m.flag).Bool()) || m.w.omit != nil && m.w.omit(v) {
			continue
		}
		b = append(b, m.w.key...)
		if m.list && v.IsNil() {
			b = append(b, '[', ']')
			continue
		}
		if b, err = m.w.app(b, v); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// newWriter is a member's writer: a payload field sf with its unit, on its line as name.
func newWriter(sf reflect.StructField, name string, omitEmpty, positive bool) writer {
	w := writer{key: `,"` + name + `":`}
	unit := sf.Tag.Get("unit")
	w.app = unitAppender(sf.Type, unit)
	switch {
	case positive:
		w.omit = func(v reflect.Value) bool { return v.Int() <= 0 }
	case omitEmpty && unit == "time":
		w.omit = func(v reflect.Value) bool { return timeOf(v).IsZero() }
	case omitEmpty && (unit == "s" || unit == "s-trunc"):
		w.omit = func(v reflect.Value) bool { return time.Duration(v.Int()).Seconds() == 0 }
	case omitEmpty && unit == "ms":
		w.omit = func(v reflect.Value) bool { return msFloat(time.Duration(v.Int())) == 0 }
	case omitEmpty:
		w.omit = isEmptyValue
	}
	return w
}

// unitAppender writes a value of type t in its unit ("" for none).
func unitAppender(t reflect.Type, unit string) appendFunc {
	switch unit {
	case "s", "s-trunc":
		return func(b []byte, v reflect.Value) ([]byte, error) {
			return appendJSONFloat(b, time.Duration(v.Int()).Seconds())
		}
	case "ms":
		return func(b []byte, v reflect.Value) ([]byte, error) {
			return appendJSONFloat(b, msFloat(time.Duration(v.Int())))
		}
	case "time":
		return func(b []byte, v reflect.Value) ([]byte, error) {
			b = append(b, '"')
			b = recordable(timeOf(v)).AppendFormat(b, TimeFormat)
			return append(b, '"'), nil
		}
	}
	return appenderOf(t)
}

// appenderOf writes a value of type t as encoding/json does.
func appenderOf(t reflect.Type) appendFunc {
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return appendMarshaled
	}
	switch t.Kind() {
	case reflect.String:
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendJSONString(b, v.String()), nil }
	case reflect.Bool:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendBool(b, v.Bool()), nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendInt(b, v.Int(), 10), nil }
	case reflect.Float64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendJSONFloat(b, v.Float()) }
	case reflect.Pointer:
		elem := appenderOf(t.Elem())
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return elem(b, v.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return appendMarshaled
		}
		return sliceAppender(appenderOf(t.Elem()))
	case reflect.Struct:
		return structAppender(t)
	}
	return appendMarshaled
}

func sliceAppender(elem appendFunc) appendFunc {
	return func(b []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = elem(b, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
}

// structAppender writes a payload's nested struct (a Trigger, a Regarding): its json-tagged
// fields in their order, with their units and omitempty.
func structAppender(t reflect.Type) appendFunc {
	var ws []writer
	var index []int
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "" || tag == "-" || !sf.IsExported() {
			if tag == "" && sf.IsExported() {
				return appendMarshaled // a field named by Go: encoding/json's rules
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ws, index = append(ws, newWriter(sf, name, strings.Contains(opts, "omitempty"), false)), append(index, i)
	}
	return func(b []byte, v reflect.Value) ([]byte, error) {
		b = append(b, '{')
		first := len(b)
		var err error
		for j := range ws {
			f := v.Field(index[j])
			if ws[j].omit != nil && ws[j].omit(f) {
				continue
			}
			key := ws[j].key
			if len(b) == first {
				key = key[1:]
			}
			b = append(b, key...)
			if b, err = ws[j].app(b, f); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
}

// timeOf is the time.Time v holds (through its address when it has one: no copy to the heap).
func timeOf(v reflect.Value) time.Time {
	if v.CanAddr() {
		return *v.Addr().Interface().(*time.Time)
	}
	return v.Interface().(time.Time)
}

// appendMarshaled has encoding/json write v.
func appendMarshaled(b []byte, v reflect.Value) ([]byte, error) {
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	j, err := json.Marshal(x)
	return append(b, j...), err
}

// appendJSONString writes s as encoding/json does (HTML escaped, invalid UTF-8 as U+FFFD):
// itself when no byte needs an escape.
func appendJSONString(b []byte, s string) []byte {
	if needsEscape(s) {
		j, _ := json.Marshal(s) // a string always encodes
		return append(b, j...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// needsEscape reports whether encoding/json would write s other than as its bytes in quotes: a
// control byte, a byte outside ASCII, a quote, a backslash or an HTML character.
func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return true
		}
	}
	return false
}

// appendJSONFloat writes f as encoding/json writes a float64; NaN and infinities are its error.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		_, err := json.Marshal(f)
		return nil, err
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 as e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
