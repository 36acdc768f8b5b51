package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// HeaderType is the "type" of a recording's header line.
const HeaderType = "Recording"

// FormatVersionError is a recording header whose formatVersion is not a format version (not a
// whole number from 1). The recording cannot be read: its readers stop there.
type FormatVersionError struct{ Value string }

func (e *FormatVersionError) Error() string {
	return fmt.Sprintf(`recording header with "formatVersion" %s, which is no format version (a whole number from 1)`, e.Value)
}

// Decoded is one line of a recording (or of `-o json` output) turned back into what printed it.
type Decoded struct {
	// Header is set for a recording's header line; Event is then empty.
	Header *Header
	// Event is the event the line was printed from.
	Event watch.Event
	// PluginVersion and SecretsRedacted are the Informer line's fields that Encode takes from
	// its Options rather than from the event.
	PluginVersion   string
	SecretsRedacted bool
}

// UnknownTypeError is a well-formed line of a type this build does not know, such as one a newer
// kubectl informer added. Readers may skip such lines.
type UnknownTypeError struct{ Type string }

func (e *UnknownTypeError) Error() string { return fmt.Sprintf("unknown line type %q", e.Type) }

// KnownTypes are the line types DecodeEvent understands, in the order docs/json.md lists them.
var KnownTypes = []watch.Type{
	watch.Informer, watch.Added, watch.Updated, watch.Deleted, watch.List, watch.Watch,
	watch.WatchClosed, watch.Bookmark, watch.Synced, watch.Resync, watch.Relist, watch.Error,
	watch.Recovered, watch.Reconciled, watch.ControllerQueue, watch.HotLoop, watch.HotLoopEnded, watch.KubeEvent,
	watch.ApiStats, watch.Throttled, watch.ControllerReconcile,
}

// DecodeEvent parses one line of the JSON contract (docs/json.md) back into the event it was
// printed from: the inverse of `-o json` and of a recording's event lines. Printing the result
// with the same Options gives the same bytes. Objects come back as *unstructured.Unstructured
// with int64 and float64 numbers, as the dynamic client decodes them. Unknown fields are
// ignored; an unknown type gives an *UnknownTypeError; a header line is an error.
func DecodeEvent(line []byte) (watch.Event, error) {
	d, err := DecodeLine(line)
	if err != nil {
		return watch.Event{}, err
	}
	if d.Header != nil {
		return watch.Event{}, errors.New("a recording header, not an event")
	}
	return d.Event, nil
}

// DecodeLine parses a recording header or an event line.
func DecodeLine(line []byte) (Decoded, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Decoded{}, errors.New("empty line")
	}
	if line[0] != '{' {
		return Decoded{}, fmt.Errorf("invalid JSON: not an object (starts with %q)", truncate(string(line), 20))
	}
	// The type and time first (pointers: absent is not empty), then the type's record.
	var start struct {
		Type *string `json:"type"`
		Time *string `json:"time"`
	}
	if err := json.Unmarshal(line, &start); err != nil {
		return Decoded{}, jsonError(err)
	}
	if start.Type == nil || *start.Type == "" {
		return Decoded{}, errors.New(`no "type" field`)
	}
	if *start.Type == HeaderType {
		return decodeHeader(line)
	}
	// A known type's record is read first: a field of the wrong type is the error to give,
	// before the time's.
	typ := watch.Type(*start.Type)
	newRec, known := lineRecords[typ]
	var rec record
	if known {
		rec = newRec()
		if err := readRecord(line, typ, rec); err != nil {
			return Decoded{}, err
		}
	}
	if start.Time == nil {
		return Decoded{}, errors.New(`no "time" field`)
	}
	at, err := time.Parse(time.RFC3339Nano, *start.Time)
	if err != nil {
		return Decoded{}, fmt.Errorf(`field "time": %q is not an RFC 3339 time`, *start.Time)
	}
	if !known {
		return Decoded{}, &UnknownTypeError{Type: string(typ)}
	}
	d := Decoded{Event: watch.Event{Type: typ, Time: at}}
	if err := fill(&d, rec); err != nil {
		return Decoded{}, err
	}
	return d, nil
}

// Decoder decodes the lines of one stream, in order. Beyond DecodeLine, it gives each Updated
// event back its OldObject: the previous object of the same key in the stream, which is what
// the live informer's cache held; and each object event's resource its CRD printer columns,
// from the run's Informer line (or the recording's header). Printing the decoded events then
// shows the same managers, --diff changes, states and hot loops as the live run did. (For
// redacted Secrets, only changes the redaction shows: a value's length.)
type Decoder struct {
	last    map[string]*unstructured.Unstructured
	columns map[string][]discovery.PrinterColumn // by resource and version
}

// NewDecoder returns a Decoder at the start of a stream.
func NewDecoder() *Decoder {
	return &Decoder{last: map[string]*unstructured.Unstructured{}, columns: map[string][]discovery.PrinterColumn{}}
}

// Decode decodes one line, as DecodeLine, and passes its event to Observe.
func (d *Decoder) Decode(line []byte) (Decoded, error) {
	dec, err := DecodeLine(line)
	switch {
	case err != nil:
	case dec.Header != nil:
		d.learnColumns(dec.Header.ResourceList())
	default:
		d.Observe(&dec.Event)
	}
	return dec, err
}

func (d *Decoder) learnColumns(rs []discovery.Resource) {
	for _, r := range rs {
		if len(r.PrinterColumns) > 0 {
			d.columns[r.String()+"/"+r.Version] = r.PrinterColumns
		}
	}
}

// Observe follows the cache through ev and fills in ev.OldObject for an update whose old
// resourceVersion is the cached object's, and the printer columns of ev's resource. An Informer
// line (a new run) empties the cache and says the run's columns.
func (d *Decoder) Observe(ev *watch.Event) {
	switch {
	case ev.Type == watch.Informer:
		clear(d.last)
		if ev.Lifecycle.Info != nil {
			clear(d.columns)
			d.learnColumns(ev.Lifecycle.Info.Resources)
			d.learnColumns(ev.Lifecycle.Info.OwnedResources)
		}
		return
	case !ev.Type.IsObject():
		return
	}
	if ev.Resource.PrinterColumns == nil {
		ev.Resource.PrinterColumns = d.columns[ev.Resource.String()+"/"+ev.Resource.Version]
	}
	key := ev.ObjectID()
	if prev, ok := d.last[key]; ok && ev.Type == watch.Updated && ev.Obj.OldObject == nil && prev.GetResourceVersion() == ev.Obj.OldResourceVersion {
		ev.Obj.OldObject = prev
	}
	if ev.Type == watch.Deleted || ev.Obj.Object == nil {
		delete(d.last, key)
		return
	}
	d.last[key] = ev.Obj.Object
}

// fromMs inverts msFloat: milliseconds with microsecond precision.
func fromMs(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1000)) * time.Microsecond
}

// deref is *p, the zero value for nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// jsonError words a decoding error for a person: what is wrong, and where.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var field *fieldError
	switch {
	case errors.As(err, &field):
		return field
	case errors.As(err, &syn):
		return fmt.Errorf("invalid JSON: %s (at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		for _, embedded := range embeddedRecords {
			field = strings.TrimPrefix(field, embedded)
		}
		if field == "" {
			return fmt.Errorf("invalid JSON: want an object, got %s", typ.Value)
		}
		return fmt.Errorf("field %q: want %s, got %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// embeddedRecords are the record structs other records embed: encoding/json names their fields
// through them ("eventHead.group"), a level the line does not have.
var embeddedRecords = []string{"eventHead.", "apfRecord.", "controllerQueueExtra."}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64", "float64":
		return "a number"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	}
	return goKind
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ResourceList returns the header's resources.
func (h *Header) ResourceList() []discovery.Resource {
	out := make([]discovery.Resource, 0, len(h.Resources))
	for _, r := range h.Resources {
		out = append(out, r.resource())
	}
	return out
}
