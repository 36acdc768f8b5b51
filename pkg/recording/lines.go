package recording

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// No line has a record struct of its own: its family's payload is its line. watch.LineMembers
// lists the members of every line but an object's, whose table (objectMembers, object.go) adds
// what the printer derived (Derived). A lineCodec is made once per type from its table and the
// payloads' json and unit tags: the line's wire form, a struct type of the head and then each lineMember with its payload field's type
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
	derived bool         // where is from the line's Derived (an object line's), not its Event
	object  bool         // the object line's object: Derived.ObjectJSON when the printer encoded it
	where   []int        // the fields, from the Event, of the struct that holds it (none: the Event's own)
	field   int          // its field there
	ftype   reflect.Type // that field's type
	conv    *wireConv
	w       writer // how Encode writes it (lineenc.go)
	list    bool   // nil is written []
	// positive: written when above zero; conds: written when they all hold.
	positive  bool
	omitEmpty bool
	conds     []cond
	fallback  bool // read back only into a zero field
}

// cond is a condition of a member (watch.LineMembers' if=): a field (field, in the struct that
// derived and where reach, as a lineMember's) is not zero, or is the string value; neg negates it.
type cond struct {
	derived  bool
	where    []int
	field    int
	value    string
	hasValue bool
	neg      bool
}

// lineRoots are what a line's members are read from or written to: its Event and, on an object
// line, what the printer derived (Derived; invalid on other lines).
type lineRoots struct{ ev, derived reflect.Value }

// rootsOf are the roots of ev's line; d is what the printer derived of an object line, or nil.
func rootsOf(ev *watch.Event, d *Derived) lineRoots {
	r := lineRoots{ev: reflect.ValueOf(ev).Elem()}
	if d != nil {
		r.derived = reflect.ValueOf(d).Elem()
	}
	return r
}

// root is the Event, or the Derived when derived.
func (r lineRoots) root(derived bool) (reflect.Value, bool) {
	if derived {
		return r.derived, r.derived.IsValid()
	}
	return r.ev, true
}

// walk is the struct that where reaches from the Event (or the Derived, derived), allocating a
// nil payload on the way when alloc; ok is false for a nil payload not allocated, or no Derived.
func (r lineRoots) walk(derived bool, where []int, alloc bool) (reflect.Value, bool) {
	e, ok := r.root(derived)
	if !ok {
		return reflect.Value{}, false
	}
	for _, i := range where {
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

// holds reports whether c holds for the line; a nil payload on the way is a zero field, and a
// list or map is zero when empty.
func (c *cond) holds(r lineRoots) bool {
	e, ok := r.walk(c.derived, c.where, false)
	if ok {
		e = e.Field(c.field)
	}
	switch {
	case !ok:
	case c.hasValue:
		ok = e.String() == c.value
	case e.Kind() == reflect.Slice || e.Kind() == reflect.Map:
		ok = e.Len() > 0
	default:
		ok = !e.IsZero()
	}
	return ok != c.neg
}

// holds reports whether every condition of m holds for the line.
func (m *lineMember) holds(r lineRoots) bool {
	for i := range m.conds {
		if !m.conds[i].holds(r) {
			return false
		}
	}
	return true
}

// setFlag sets, reading a line that has m, the flag its first condition names (a bool field,
// not negated), allocating the payloads on the way.
func (m *lineMember) setFlag(r lineRoots) {
	if len(m.conds) == 0 || m.conds[0].neg || m.conds[0].hasValue {
		return
	}
	c := &m.conds[0]
	if in, ok := r.walk(c.derived, c.where, true); ok {
		if e := in.Field(c.field); e.Kind() == reflect.Bool {
			e.SetBool(true)
		}
	}
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
	"HotLoop.managers":     reflect.TypeFor[managerNames](),
	"Obj.queue":            reflect.TypeFor[*queueRecord](),
	"Derived.object":       reflect.TypeFor[objectJSON](),
	"Lifecycle.Info.queue": reflect.TypeFor[queueName](),
}

// lineCodecs are the codecs of the types watch.LineMembers lists.
var lineCodecs = func() map[watch.Type]*lineCodec {
	out := map[watch.Type]*lineCodec{}
	for _, t := range append(KnownTypes[:len(KnownTypes):len(KnownTypes)], watch.Dropped) {
		if ms := watch.LineMembers(t); ms != nil {
			out[t] = newLineCodec(t, ms)
		} else if t.IsObject() {
			out[t] = newLineCodec(t, objectMembers)
		}
	}
	return out
}()

var (
	eventType   = reflect.TypeFor[watch.Event]()
	derivedType = reflect.TypeFor[Derived]()
)

func newLineCodec(typ watch.Type, specs []string) *lineCodec {
	c := &lineCodec{typ: typ}
	var fields []reflect.StructField
	for i, name := range c.head() {
		ft := reflect.TypeFor[string]()
		if name == "type" {
			ft = reflect.TypeFor[watch.Type]()
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("H%d", i), Type: ft, Tag: reflect.StructTag(`json:"` + name + `"`)})
	}
	for i, spec := range specs {
		m, tag := newMember(spec)
		wire := m.conv.wire
		if m.positive || len(m.conds) > 0 {
			wire = reflect.PointerTo(wire)
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("M%d", i), Type: wire, Tag: reflect.StructTag(`json:"` + tag + `"`)})
		c.members = append(c.members, m)
	}
	c.wire = reflect.StructOf(fields)
	return c
}

// head is the head of c's lines: headFields, or their time and type only.
func (c *lineCodec) head() []string {
	if watch.LineHasResource(c.typ) {
		return headFields
	}
	return headFields[:2]
}

// newMember resolves one watch.LineMembers entry; tag is its json tag on the wire struct.
func newMember(spec string) (m lineMember, tag string) {
	path, opts, _ := strings.Cut(spec, ",")
	at := strings.LastIndex(path, ".")
	name := path[at+1:]
	var in reflect.Type
	m.derived, m.where, in = resolveWhere(path[:max(at, 0)])
	m.object = path == "Derived.object"
	sf := fieldByTag(in, name)
	m.field, m.ftype = sf.Index[0], sf.Type
	unit := sf.Tag.Get("unit")
	for o := range strings.SplitSeq(opts, ",") {
		switch {
		case o == "omitempty":
			m.omitEmpty = true
		case o == "list":
			m.list = true
		case o == "positive":
			m.positive = true
		case o == "fallback":
			m.fallback = true
		case strings.HasPrefix(o, "as="):
			name = strings.TrimPrefix(o, "as=")
		case strings.HasPrefix(o, "unit="):
			unit = strings.TrimPrefix(o, "unit=")
		case strings.HasPrefix(o, "if="):
			m.conds = append(m.conds, newCond(strings.TrimPrefix(o, "if=")))
		case o != "":
			panic("watch.LineMembers: unknown option " + o + " in " + spec)
		}
	}
	m.conv = convOf(sf.Type, unit, m.omitEmpty, name, "")
	m.w = newWriter(sf.Type, unit, name, m.omitEmpty, m.positive)
	if w, ok := wireOverrides[path]; ok {
		m.conv = &wireConv{wire: w,
			to:   func(dst, src reflect.Value) { dst.Set(src.Convert(w)) },
			from: func(dst, src reflect.Value) error { dst.Set(src.Convert(dst.Type())); return nil }}
	}
	tag = name
	if m.omitEmpty || m.positive || len(m.conds) > 0 {
		tag += ",omitempty"
	}
	return m, tag
}

// resolveWhere resolves dotted Go field names from the Event, or from the Derived when they
// start with Derived: the indexes on the way, and the struct type they reach (a pointer
// payload's element).
func resolveWhere(path string) (derived bool, where []int, in reflect.Type) {
	in = eventType
	if path == "Derived" || strings.HasPrefix(path, "Derived.") {
		derived, in, path = true, derivedType, strings.TrimPrefix(path[len("Derived"):], ".")
	}
	for name := range strings.SplitSeq(path, ".") {
		if name == "" {
			continue
		}
		sf := fieldByName(in, name)
		where, in = append(where, sf.Index[0]), sf.Type
		if in.Kind() == reflect.Pointer {
			in = in.Elem()
		}
	}
	return derived, where, in
}

// newCond resolves an if= condition: [!]Path[=value], Path Go field names from the Event.
func newCond(s string) cond {
	var c cond
	s, c.neg = strings.CutPrefix(s, "!")
	s, c.value, c.hasValue = strings.Cut(s, "=")
	at := strings.LastIndex(s, ".")
	var in reflect.Type
	c.derived, c.where, in = resolveWhere(s[:max(at, 0)])
	f := fieldByName(in, s[at+1:])
	c.field = f.Index[0]
	if c.hasValue && f.Type.Kind() != reflect.String {
		panic("watch.LineMembers: " + s + " is not a string")
	}
	return c
}

// fieldByName is t's field named name.
func fieldByName(t reflect.Type, name string) reflect.StructField {
	sf, ok := t.FieldByName(name)
	if !ok {
		panic("watch.LineMembers: no field " + name + " in " + t.Name())
	}
	return sf
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

// encode is ev's line as a value encoding/json writes; d is what the printer derived of an object
// line (nil for other lines).
func (c *lineCodec) encode(ev *watch.Event, d *Derived) any {
	p := reflect.New(c.wire)
	v := p.Elem()
	head := [...]string{formatTime(ev.Time), string(ev.Type), ev.Resource.Group, ev.Resource.Version, ev.Resource.Resource, ev.Resource.Kind}
	n := len(c.head())
	for i, s := range head[:n] {
		v.Field(i).SetString(s)
	}
	r := rootsOf(ev, d)
	for i := range c.members {
		m := &c.members[i]
		in, ok := m.in(r, false)
		dst := v.Field(n + i)
		var src reflect.Value
		if ok {
			src = in.Field(m.field)
		} else { // a nil payload: its zero values
			src = reflect.Zero(m.ftype)
		}
		switch {
		case m.positive && src.Int() <= 0, len(m.conds) > 0 && !m.holds(r), m.omitEmpty && m.w.omit(src):
			continue
		case m.positive || len(m.conds) > 0:
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

// in is the struct that holds m (the Event, one of its payloads, or the Derived), allocating a
// nil payload when alloc; ok is false for a nil payload not allocated.
func (m *lineMember) in(r lineRoots, alloc bool) (reflect.Value, bool) {
	return r.walk(m.derived, m.where, alloc)
}

// lineValue is one line being decoded: the wire value encoding/json reads it into (target), copied
// back into the event (event).
type lineValue struct {
	c *lineCodec
	p reflect.Value
	d Derived // an object line's derived members, read back
}

func (c *lineCodec) newLine() *lineValue { return &lineValue{c: c, p: reflect.New(c.wire)} }

func (l *lineValue) target() any { return l.p.Interface() }

func (l *lineValue) headResource() discovery.Resource {
	v := l.p.Elem()
	if !watch.LineHasResource(l.c.typ) {
		return discovery.Resource{}
	}
	return discovery.Resource{Group: v.Field(2).String(), Version: v.Field(3).String(), Resource: v.Field(4).String(), Kind: v.Field(5).String()}
}

// event copies the line into ev (which has its type, time and resource): every lineMember it
// has, each payload it names allocated.
func (l *lineValue) event(ev *watch.Event) error {
	v, r := l.p.Elem(), lineRoots{ev: reflect.ValueOf(ev).Elem(), derived: reflect.ValueOf(&l.d).Elem()}
	n := len(l.c.head())
	var errs []error
	for i := range l.c.members {
		m := &l.c.members[i]
		src := v.Field(n + i)
		if m.positive || len(m.conds) > 0 {
			if src.IsNil() {
				continue
			}
			src = src.Elem()
			m.setFlag(r)
		}
		if m.omitEmpty && src.IsZero() {
			continue // left out: its payload stays as it is (nil if it was)
		}
		in, _ := m.in(r, true)
		if m.fallback && !in.Field(m.field).IsZero() {
			continue
		}
		if err := m.conv.from(in.Field(m.field), src); err != nil {
			errs = append(errs, err)
		}
	}
	if err := lineChecks(l.c.typ, ev, &l.d); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// lineChecks are what a line type's decoding asks beyond its members, before their own errors;
// d is what an object line said that its printer derived.
func lineChecks(typ watch.Type, ev *watch.Event, d *Derived) error {
	switch typ {
	case watch.Added, watch.Updated, watch.Deleted:
		return objectChecks(ev, d)
	case watch.KubeEvent:
		ev.Resource.Namespaced = true // an Event is namespaced
	case watch.ControllerReconcile:
		if ev.Reconcile.Result == "" {
			return errors.New(`ControllerReconcile line without "result"`)
		}
		ev.Resource.Namespaced = ev.Namespace != ""
	case watch.ApiStats:
		ev.Stats.API.Resource = ev.Resource.String()
	case watch.Synced:
		if ev.Lifecycle.NotFound != nil && ev.Lifecycle.NotFound.Name == "" {
			ev.Lifecycle.NotFound = nil // no name: no object
		}
	}
	return nil
}
