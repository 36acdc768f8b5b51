package recording

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// The lines whose members watch.LineMembers lists (HotLoop, HotLoopEnded, KubeEvent, Reconciled,
// ControllerReconcile, ApiStats) have no record struct of their own: their family's payload is their line.
// A lineCodec is made once per type from that table and the payloads' json and unit tags: the
// line's wire form, a struct type of the head and then each lineMember with its payload field's type
// (its unit's for a duration or time), which encoding/json writes and reads. Encode fills one
// from the event; DecodeLine reads a line into one and copies it back into the event.

// lineCodec is one line type's wire form and members.
type lineCodec struct {
	typ     watch.Type
	wire    reflect.Type
	members []lineMember
}

// lineMember is one member of a line: where the event holds it, and how it is on the line.
type lineMember struct {
	where []int        // the fields, from the Event, of the struct that holds it (none: the Event's own)
	field int          // its field there
	ftype reflect.Type // that field's type
	conv  *wireConv
	w     writer // how Encode writes it (lineenc.go)
	list  bool   // nil is written []
	// positive: written when above zero; flag >= 0: written when that payload field is true.
	positive bool
	flag     int
}

// wireConv is how values of a payload type are on the line.
type wireConv struct {
	wire reflect.Type
	to   func(dst, src reflect.Value)
	from func(dst, src reflect.Value) error
}

// headFields are the wire struct's first fields, every line's head (eventHead).
var headFields = []string{"time", "type", "group", "version", "resource", "kind"}

// wireOverrides give a member the wire type of the same shape that words its decoding error
// as the line's contract does ("want an array of strings on a HotLoop line").
var wireOverrides = map[string]reflect.Type{
	"HotLoop.managers": reflect.TypeFor[managerNames](),
	"Obj.queue":        reflect.TypeFor[*queueRecord](),
}

// lineCodecs are the codecs of the types watch.LineMembers lists.
var lineCodecs = func() map[watch.Type]*lineCodec {
	out := map[watch.Type]*lineCodec{}
	for _, t := range KnownTypes {
		if ms := watch.LineMembers(t); ms != nil {
			out[t] = newLineCodec(t, ms)
		}
	}
	return out
}()

var eventType = reflect.TypeFor[watch.Event]()

func newLineCodec(typ watch.Type, specs []string) *lineCodec {
	c := &lineCodec{typ: typ}
	var fields []reflect.StructField
	for i, name := range headFields {
		ft := reflect.TypeFor[string]()
		if name == "type" {
			ft = reflect.TypeFor[watch.Type]()
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("H%d", i), Type: ft, Tag: reflect.StructTag(`json:"` + name + `"`)})
	}
	for i, spec := range specs {
		m, tag := newMember(spec)
		wire := m.conv.wire
		if m.positive || m.flag >= 0 {
			wire = reflect.PointerTo(wire)
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("M%d", i), Type: wire, Tag: reflect.StructTag(`json:"` + tag + `"`)})
		c.members = append(c.members, m)
	}
	c.wire = reflect.StructOf(fields)
	return c
}

// newMember resolves one watch.LineMembers entry; tag is its json tag on the wire struct.
func newMember(spec string) (m lineMember, tag string) {
	path, opts, _ := strings.Cut(spec, ",")
	at := strings.LastIndex(path, ".")
	name := path[at+1:]
	m = lineMember{flag: -1}
	in := eventType
	for where := range strings.SplitSeq(path[:max(at, 0)], ".") {
		if where == "" {
			continue
		}
		sf, ok := in.FieldByName(where)
		if !ok {
			panic("watch.LineMembers: no field " + where + " in " + in.Name())
		}
		m.where, in = append(m.where, sf.Index[0]), sf.Type
		if in.Kind() == reflect.Pointer {
			in = in.Elem()
		}
	}
	sf := fieldByTag(in, name)
	m.field, m.ftype = sf.Index[0], sf.Type
	omitEmpty := false
	for o := range strings.SplitSeq(opts, ",") {
		switch {
		case o == "omitempty":
			omitEmpty = true
		case o == "list":
			m.list = true
		case o == "positive":
			m.positive = true
		case strings.HasPrefix(o, "if="):
			f, ok := in.FieldByName(strings.TrimPrefix(o, "if="))
			if !ok || f.Type.Kind() != reflect.Bool {
				panic("watch.LineMembers: no flag " + o + " in " + in.Name())
			}
			m.flag = f.Index[0]
		}
	}
	m.conv = convOf(sf.Type, sf.Tag.Get("unit"), omitEmpty, name, "")
	m.w = newWriter(sf, name, omitEmpty, m.positive)
	if w, ok := wireOverrides[path]; ok {
		m.conv = &wireConv{wire: w,
			to:   func(dst, src reflect.Value) { dst.Set(src.Convert(w)) },
			from: func(dst, src reflect.Value) error { dst.Set(src.Convert(dst.Type())); return nil }}
	}
	tag = name
	if omitEmpty || m.positive || m.flag >= 0 {
		tag += ",omitempty"
	}
	return m, tag
}

// fieldByTag is t's field whose json tag names name.
func fieldByTag(t reflect.Type, name string) reflect.StructField {
	for i := range t.NumField() {
		sf := t.Field(i)
		if n, _, _ := strings.Cut(sf.Tag.Get("json"), ","); n == name {
			return sf
		}
	}
	panic("watch.LineMembers: no field tagged " + name + " in " + t.Name())
}

// encode is ev's line as a value encoding/json writes.
func (c *lineCodec) encode(ev *watch.Event) any {
	p := reflect.New(c.wire)
	v := p.Elem()
	head := [...]string{formatTime(ev.Time), string(ev.Type), ev.Resource.Group, ev.Resource.Version, ev.Resource.Resource, ev.Resource.Kind}
	for i, s := range head {
		v.Field(i).SetString(s)
	}
	e := reflect.ValueOf(ev).Elem()
	for i := range c.members {
		m := &c.members[i]
		in, ok := m.in(e, false)
		dst := v.Field(len(headFields) + i)
		var src reflect.Value
		if ok {
			src = in.Field(m.field)
		} else { // a nil payload: its zero values
			src = reflect.Zero(m.ftype)
		}
		switch {
		case m.positive && src.Int() <= 0, m.flag >= 0 && (!ok || !in.Field(m.flag).Bool()):
			continue
		case m.positive || m.flag >= 0:
			dst.Set(reflect.New(m.conv.wire))
			dst = dst.Elem()
		}
		if m.list && src.IsNil() {
			dst.Set(reflect.MakeSlice(m.conv.wire, 0, 0))
			continue
		}
		m.conv.to(dst, src)
	}
	return p.Interface()
}

// in is the struct that holds m in e (the Event, or one of its payloads), allocating a nil
// payload when alloc; ok is false for a nil payload not allocated.
func (m *lineMember) in(e reflect.Value, alloc bool) (reflect.Value, bool) {
	for _, i := range m.where {
		e = e.Field(i)
		if e.Kind() != reflect.Pointer {
			continue
		}
		if e.IsNil() {
			if !alloc {
				return reflect.Value{}, false
			}
			e.Set(reflect.New(e.Type().Elem()))
		}
		e = e.Elem()
	}
	return e, true
}

// lineValue is one line being decoded: the wire value encoding/json reads it into (target), copied
// back into the event (event).
type lineValue struct {
	c *lineCodec
	p reflect.Value
}

func (c *lineCodec) newLine() record { return &lineValue{c: c, p: reflect.New(c.wire)} }

func (l *lineValue) target() any { return l.p.Interface() }

func (l *lineValue) headResource() discovery.Resource {
	v := l.p.Elem()
	return discovery.Resource{Group: v.Field(2).String(), Version: v.Field(3).String(), Resource: v.Field(4).String(), Kind: v.Field(5).String()}
}

// event copies the line into ev (which has its type, time and resource): every lineMember, each
// payload it names allocated.
func (l *lineValue) event(ev *watch.Event) error {
	v, e := l.p.Elem(), reflect.ValueOf(ev).Elem()
	var errs []error
	for i := range l.c.members {
		m := &l.c.members[i]
		in, _ := m.in(e, true)
		src := v.Field(len(headFields) + i)
		if m.positive || m.flag >= 0 {
			if src.IsNil() {
				continue
			}
			src = src.Elem()
			if m.flag >= 0 {
				in.Field(m.flag).SetBool(true)
			}
		}
		if err := m.conv.from(in.Field(m.field), src); err != nil {
			errs = append(errs, err)
		}
	}
	if err := lineChecks(l.c.typ, ev); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// lineChecks are what a line type's decoding asks beyond its members, before their own errors.
func lineChecks(typ watch.Type, ev *watch.Event) error {
	switch typ {
	case watch.KubeEvent:
		ev.Resource.Namespaced = true // an Event is namespaced
	case watch.ControllerReconcile:
		if ev.Reconcile.Result == "" {
			return errors.New(`ControllerReconcile line without "result"`)
		}
		ev.Resource.Namespaced = ev.Namespace != ""
	case watch.ApiStats:
		ev.Stats.API.Resource = ev.Resource.String()
	}
	return nil
}

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
	case "time":
		return timeConv(omitEmpty, name, in)
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
