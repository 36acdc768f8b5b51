package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-informer/kubectl-informer/internal/scrape"
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
		var v struct {
			FormatVersion json.RawMessage `json:"formatVersion"`
		}
		if json.Unmarshal(line, &v) == nil && len(v.FormatVersion) > 0 && string(v.FormatVersion) != "null" {
			// Not a version this build can name (1e300, -1, 1.5): nothing after it can be read.
			if n, err := strconv.Atoi(string(v.FormatVersion)); err != nil || n < 1 {
				return Decoded{}, &FormatVersionError{Value: truncate(string(v.FormatVersion), 40)}
			}
		}
		var h Header
		if err := json.Unmarshal(line, &h); err != nil {
			return Decoded{}, jsonError(err)
		}
		if h.FormatVersion < 1 {
			return Decoded{}, errors.New(`recording header without a "formatVersion"`)
		}
		return Decoded{Header: &h}, nil
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
		if w.Resource == "" {
			return Decoded{}, fmt.Errorf(`%s line without "resource"`, typ)
		}
		if w.Name == "" {
			return Decoded{}, fmt.Errorf(`%s line without "name"`, typ)
		}
		ev.Namespace, ev.Name, ev.ResourceVersion = w.Namespace, w.Name, w.ResourceVersion
		// A namespaced resource's objects have a namespace: the best guess a line allows.
		ev.Resource.Namespaced = w.Namespace != ""
		if ev.Type == watch.Updated {
			ev.OldResourceVersion = w.OldResourceVersion
		}
		ev.InitialList, ev.Delta, ev.Tombstone, ev.Filtered = w.InitialList, w.Delta, w.Tombstone, w.Filtered
		ev.Owners = ownersFrom(w.Owners)
		if ev.Object, err = decodeObject(w.Object); err != nil {
			return Decoded{}, err
		}
		if ev.Queue, err = decodeQueue(w.Queue); err != nil {
			return Decoded{}, err
		}
	case watch.KubeEvent:
		if err := kubeEventFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	case watch.Reconciled:
		ev.Key, ev.Wait, ev.Work, ev.Requeues, ev.Failed = w.Key, fromMs(w.WaitMs), fromMs(w.WorkMs), w.Requeues, w.Error
		ev.TriggerCount, ev.Requeue, ev.RequeueReason = w.TriggerCount, w.Requeue, w.RequeueReason
		if ev.Triggers, err = triggersFrom(w.Triggers); err != nil {
			return Decoded{}, err
		}
		if ev.Queue, err = decodeQueue(w.Queue); err != nil {
			return Decoded{}, err
		}
	case watch.ControllerReconcile:
		if err := controllerReconcileFrom(&w, &ev); err != nil {
			return Decoded{}, err
		}
	case watch.ControllerQueue:
		ev.Resource = discovery.Resource{}
		ev.URL = w.URL
		if w.Name == "" && w.Message != "" { // a page without workqueue metrics
			ev.Message = w.Message
			break
		}
		ev.Sample = &scrape.QueueSample{
			Name: w.Name, Controller: w.Controller, Depth: w.Depth, Adds: w.Adds, Retries: w.Retries,
			UnfinishedSeconds: w.UnfinishedSeconds, LongestRunningSeconds: w.LongestRunningSeconds,
		}
		if w.QueueP50Seconds != nil || w.QueueP99Seconds != nil {
			ev.Sample.HasQueueLatency = true
			ev.Sample.QueueP50, ev.Sample.QueueP99 = deref(w.QueueP50Seconds), deref(w.QueueP99Seconds)
		}
		if w.WorkP50Seconds != nil || w.WorkP99Seconds != nil {
			ev.Sample.HasWorkLatency = true
			ev.Sample.WorkP50, ev.Sample.WorkP99 = deref(w.WorkP50Seconds), deref(w.WorkP99Seconds)
		}
		w.sampleExtra(ev.Sample)
	case watch.Informer:
		ev.Resource = discovery.Resource{}
		info := &watch.InformerInfo{
			ClientGoVersion: w.ClientGoVersion, AtomicEvents: w.AtomicEvents,
			UnlockWhileProcessing: w.UnlockWhileProcessing, WatchList: w.WatchList,
			Namespace: w.Namespace, LabelSelector: w.LabelSelector, FieldSelector: w.FieldSelector,
			MetadataOnly: w.MetadataOnly, DropManagedFields: w.DropManagedFields,
			ListMode: w.ListMode, PageSize: w.PageSize, QPS: w.QPS, Burst: w.Burst, Wires: w.Wires,
		}
		if len(w.Queue) > 0 && string(w.Queue) != "null" {
			if err := json.Unmarshal(w.Queue, &info.Queue); err != nil {
				return Decoded{}, errors.New(`field "queue": want a string on an Informer line`)
			}
		}
		switch {
		case w.ResyncPeriod != "":
			if info.ResyncPeriod, err = time.ParseDuration(w.ResyncPeriod); err != nil {
				return Decoded{}, fmt.Errorf(`field "resyncPeriod": %q is not a duration`, w.ResyncPeriod)
			}
		default:
			info.ResyncPeriod = time.Duration(math.Round(w.ResyncSeconds * float64(time.Second)))
		}
		for _, r := range w.Resources {
			info.Resources = append(info.Resources, r.resource())
		}
		for _, r := range w.OwnedResources {
			info.OwnedResources = append(info.OwnedResources, r.resource())
		}
		info.Events = w.Events
		ev.Info = info
		d.PluginVersion, d.SecretsRedacted = w.PluginVersion, w.SecretsRedacted
	case watch.List:
		ev.ResourceVersion, ev.Items, ev.Duration, ev.Initial = w.ResourceVersion, w.Items, time.Duration(w.DurationMs)*time.Millisecond, w.Initial
		ev.Pages, ev.APF = w.Pages, w.apfRecord.apf()
	case watch.Watch:
		ev.ResourceVersion, ev.SendInitialEvents, ev.TimeoutSeconds = w.ResourceVersion, w.SendInitialEvents, w.TimeoutSeconds
		ev.APF = w.apfRecord.apf()
	case watch.ApiStats:
		decodeAPIStats(&w, &ev)
	case watch.Throttled:
		ev.Reason, ev.Verb, ev.APF = w.Reason, w.Verb, w.apfRecord.apf()
		ev.Duration, ev.RetryAfter = time.Duration(math.Round(w.DelayMs*float64(time.Millisecond))), fromSeconds(w.RetryAfterSeconds)
	case watch.WatchClosed:
		ev.Reason, ev.ResourceVersion = w.Reason, w.ResourceVersion
	case watch.Bookmark:
		ev.ResourceVersion, ev.InitialEventsEnd = w.ResourceVersion, w.InitialEventsEnd
	case watch.Synced:
		ev.Items, ev.Duration, ev.ResourceVersion = w.Items, time.Duration(w.DurationMs)*time.Millisecond, w.ResourceVersion
		if w.NotFound != nil && w.NotFound.Name != "" {
			ev.NotFound = &watch.ObjectKey{Namespace: w.NotFound.Namespace, Name: w.NotFound.Name}
		}
		ev.ListMode, ev.FellBack = w.ListMode, w.FellBack
	case watch.Resync:
		ev.Items = w.Items
	case watch.Relist:
		ev.Reason, ev.FromResourceVersion, ev.ResourceVersion = w.Reason, w.FromResourceVersion, w.ResourceVersion
		ev.Counts = watch.RelistCounts{Added: w.Added, Updated: w.Updated, Deleted: w.Deleted, Unchanged: w.Unchanged}
	case watch.Error, watch.Recovered:
		ev.Reason, ev.Message, ev.Verb = w.Reason, w.Message, w.Verb
		ev.Backoff = time.Duration(math.Round(w.BackoffMs * float64(time.Millisecond)))
	case watch.HotLoop:
		var managers []string
		if len(w.Managers) > 0 && string(w.Managers) != "null" {
			if err := json.Unmarshal(w.Managers, &managers); err != nil {
				return Decoded{}, errors.New(`field "managers": want an array of strings on a HotLoop line`)
			}
		}
		ev.Namespace, ev.Name, ev.Key = w.Namespace, w.Name, w.Key
		ev.HotLoop = &watch.HotLoopInfo{Reason: w.Reason, Loop: w.Loop, Suggestion: w.Suggestion, Managers: managers, Fields: w.Fields,
			Updates: w.Updates, Window: time.Duration(math.Round(w.WindowSeconds * float64(time.Second)))}
	case watch.HotLoopEnded:
		var managers []string
		if len(w.Managers) > 0 && string(w.Managers) != "null" {
			if err := json.Unmarshal(w.Managers, &managers); err != nil {
				return Decoded{}, errors.New(`field "managers": want an array of strings on a HotLoopEnded line`)
			}
		}
		ev.Namespace, ev.Name, ev.Key = w.Namespace, w.Name, w.Key
		ev.HotLoop = &watch.HotLoopInfo{Loop: w.Loop, Managers: managers, Updates: w.Updates,
			Duration: time.Duration(math.Round(deref(w.DurationSeconds) * float64(time.Second))), Deleted: w.ObjectDeleted}
	default:
		return Decoded{}, &UnknownTypeError{Type: typ}
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

// decodeObject decodes an event's object the way the dynamic client does: integers as int64,
// other numbers as float64, so the object deep-copies and re-encodes as it was.
func decodeObject(raw json.RawMessage) (*unstructured.Unstructured, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New(`field "object": want a JSON object`)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func decodeQueue(raw json.RawMessage) (*watch.QueueFigures, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var q queueRecord
	if err := json.Unmarshal(raw, &q); err != nil {
		return nil, errors.New(`field "queue": want {"depth", "adds", "retries"} numbers`)
	}
	return &watch.QueueFigures{Depth: q.Depth, Adds: q.Adds, Retries: q.Retries}, nil
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
