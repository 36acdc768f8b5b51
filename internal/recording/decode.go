package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// wireLine is the union of every line type's fields. Pointers tell "absent" from "zero" where a
// type needs it; unknown fields are ignored, so newer recordings stay readable.
type wireLine struct {
	Time *string `json:"time"`
	Type *string `json:"type"`

	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	Kind     string `json:"kind"`

	// Object events.
	Namespace          string          `json:"namespace"`
	Name               string          `json:"name"`
	ResourceVersion    string          `json:"resourceVersion"`
	OldResourceVersion string          `json:"oldResourceVersion"`
	InitialList        bool            `json:"initialList"`
	Delta              watch.Delta     `json:"delta"`
	Tombstone          bool            `json:"tombstone"`
	Object             json.RawMessage `json:"object"`
	// Queue is an object ({depth, adds, retries}) on object and Reconciled lines, and a
	// string (the delta queue's name) on the Informer line.
	Queue json.RawMessage `json:"queue"`

	// HotLoop. Managers is a list of names there, of objects on Updated lines (ignored: the
	// printer computes them again from the objects).
	Managers      json.RawMessage `json:"managers"`
	Fields        []string        `json:"fields"`
	Updates       int             `json:"updates"`
	WindowSeconds float64         `json:"windowSeconds"`
	Loop          string          `json:"loop"`
	Suggestion    string          `json:"suggestion"`
	// HotLoopEnded.
	DurationSeconds *float64 `json:"durationSeconds"`
	ObjectDeleted   bool     `json:"objectDeleted"`

	// Reconciled.
	Key           string          `json:"key"`
	WaitMs        float64         `json:"waitMs"`
	WorkMs        float64         `json:"workMs"`
	Requeues      int             `json:"requeues"`
	Error         bool            `json:"error"`
	TriggerCount  int             `json:"triggerCount"`
	Triggers      []triggerRecord `json:"triggers"`
	Requeue       bool            `json:"requeue"`
	RequeueReason string          `json:"requeueReason"`
	// Filtered: object events a --predicate kept out of the queue.
	Filtered string `json:"filtered"`
	// Owners: object and KubeEvent lines of --owned.
	Owners []ownerRecord `json:"owners"`

	// KubeEvent (Reason and Action below).
	EventType           string           `json:"eventType"`
	Note                string           `json:"note"`
	ReportingController string           `json:"reportingController"`
	ReportingInstance   string           `json:"reportingInstance"`
	Action              string           `json:"action"`
	Regarding           *regardingRecord `json:"regarding"`
	Count               int64            `json:"count"`
	EventTime           string           `json:"eventTime"`

	// ControllerQueue.
	URL                   string   `json:"url"`
	Controller            string   `json:"controller"`
	Depth                 float64  `json:"depth"`
	Adds                  float64  `json:"adds"`
	Retries               float64  `json:"retries"`
	UnfinishedSeconds     float64  `json:"unfinishedSeconds"`
	LongestRunningSeconds float64  `json:"longestRunningSeconds"`
	QueueP50Seconds       *float64 `json:"queueP50Seconds"`
	QueueP99Seconds       *float64 `json:"queueP99Seconds"`
	WorkP50Seconds        *float64 `json:"workP50Seconds"`
	WorkP99Seconds        *float64 `json:"workP99Seconds"`
	controllerQueueExtra
	// ControllerReconcile (Namespace, Name, Key, Controller, TriggerCount, Triggers, Reason,
	// Message and DurationSeconds above and below).
	controllerReconcileWire

	// Lifecycle events.
	Items               int        `json:"items"`
	DurationMs          int64      `json:"durationMs"`
	Initial             bool       `json:"initial"`
	SendInitialEvents   bool       `json:"sendInitialEvents"`
	TimeoutSeconds      int64      `json:"timeoutSeconds"`
	InitialEventsEnd    bool       `json:"initialEventsEnd"`
	Reason              string     `json:"reason"`
	Message             string     `json:"message"`
	Verb                string     `json:"verb"`
	FromResourceVersion string     `json:"fromResourceVersion"`
	Added               int        `json:"added"`
	Updated             int        `json:"updated"`
	Deleted             int        `json:"deleted"`
	Unchanged           int        `json:"unchanged"`
	NotFound            *keyRecord `json:"notFound"`
	Pages               int        `json:"pages"`
	ListMode            string     `json:"listMode"`
	FellBack            bool       `json:"fellBack"`
	BackoffMs           float64    `json:"backoffMs"`

	// ApiStats and Throttled (and the APF fields of List and Watch).
	apiStatsFields
	apfRecord
	DelayMs float64 `json:"delayMs"`

	// Informer.
	PluginVersion         string           `json:"pluginVersion"`
	ClientGoVersion       string           `json:"clientGoVersion"`
	AtomicEvents          bool             `json:"atomicEvents"`
	UnlockWhileProcessing bool             `json:"unlockWhileProcessing"`
	WatchList             bool             `json:"watchList"`
	ResyncPeriod          string           `json:"resyncPeriod"`
	ResyncSeconds         float64          `json:"resyncSeconds"`
	LabelSelector         string           `json:"labelSelector"`
	FieldSelector         string           `json:"fieldSelector"`
	SecretsRedacted       bool             `json:"secretsRedacted"`
	MetadataOnly          bool             `json:"metadataOnly"`
	DropManagedFields     bool             `json:"dropManagedFields"`
	Resources             []resourceRecord `json:"resources"`
	OwnedResources        []resourceRecord `json:"ownedResources"`
	Events                bool             `json:"events"`
	PageSize              int64            `json:"pageSize"`
	QPS                   float32          `json:"qps"`
	Burst                 int              `json:"burst"`

	// Wires: each resource's wire format (protobuf or json).
	Wires map[string]string `json:"wires"`
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
	var w wireLine
	if err := json.Unmarshal(line, &w); err != nil {
		return Decoded{}, jsonError(err)
	}
	if w.Type == nil || *w.Type == "" {
		return Decoded{}, errors.New(`no "type" field`)
	}
	typ := *w.Type
	if typ == HeaderType {
		return decodeHeader(line)
	}
	if w.Time == nil {
		return Decoded{}, errors.New(`no "time" field`)
	}
	at, err := time.Parse(time.RFC3339Nano, *w.Time)
	if err != nil {
		return Decoded{}, fmt.Errorf(`field "time": %q is not an RFC 3339 time`, *w.Time)
	}
	ev := watch.Event{
		Type: watch.Type(typ), Time: at,
		Resource: discovery.Resource{Group: w.Group, Version: w.Version, Resource: w.Resource, Kind: w.Kind},
	}
	d := Decoded{}
	switch ev.Type {
	case watch.Added, watch.Updated, watch.Deleted:
		if err := objectFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	case watch.KubeEvent:
		if err := kubeEventFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	case watch.Reconciled:
		if err := reconciledFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	case watch.ControllerReconcile:
		if err := controllerReconcileFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	case watch.ControllerQueue:
		controllerQueueFrom(&w, &ev)
	case watch.Informer:
		ev.Resource = discovery.Resource{}
		if ev.Info, err = informerFrom(&w); err != nil {
			return Decoded{}, err
		}
		d.PluginVersion, d.SecretsRedacted = w.PluginVersion, w.SecretsRedacted
	case watch.HotLoop, watch.HotLoopEnded:
		if err := hotLoopFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	default:
		if !lifecycleFrom(&w, &ev) {
			return Decoded{}, &UnknownTypeError{Type: typ}
		}
	}
	d.Event = ev
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
		if ev.Info != nil {
			clear(d.columns)
			d.learnColumns(ev.Info.Resources)
			d.learnColumns(ev.Info.OwnedResources)
		}
		return
	case !ev.Type.IsObject():
		return
	}
	if ev.Resource.PrinterColumns == nil {
		ev.Resource.PrinterColumns = d.columns[ev.Resource.String()+"/"+ev.Resource.Version]
	}
	key := ev.ObjectID()
	if prev, ok := d.last[key]; ok && ev.Type == watch.Updated && ev.OldObject == nil && prev.GetResourceVersion() == ev.OldResourceVersion {
		ev.OldObject = prev
	}
	if ev.Type == watch.Deleted || ev.Object == nil {
		delete(d.last, key)
		return
	}
	d.last[key] = ev.Object
}

// fromMs inverts msFloat: milliseconds with microsecond precision.
func fromMs(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1000)) * time.Microsecond
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// jsonError words a decoding error for a person: what is wrong, and where.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("invalid JSON: %s (at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return fmt.Errorf("invalid JSON: want an object, got %s", typ.Value)
		}
		return fmt.Errorf("field %q: want %s, got %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

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
