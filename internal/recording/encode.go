// Package recording is kubectl informer's recording format: the JSON contract (docs/json.md)
// that `-o json` prints and `--record FILE` writes, one JSON line per event after a header
// line. It encodes a watch.Event to its line (Encode), decodes a line back (DecodeLine, and
// Decoder for a whole stream), and writes recording files (Writer). What a line says beyond
// the event (an object's state, who made an update, Secret redaction) the caller derives:
// pkg/printer does, through Options.Derive.
package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/internal/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// TimeFormat is RFC 3339 with nanoseconds, always nine digits, in UTC.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// eventHead is the start of every line but Informer and ControllerQueue: when, what, and the
// resource it is about.
type eventHead struct {
	Time     string     `json:"time"`
	Type     watch.Type `json:"type"`
	Group    string     `json:"group"`
	Version  string     `json:"version"`
	Resource string     `json:"resource"`
	Kind     string     `json:"kind"`
}

func headOf(ev *watch.Event) eventHead {
	return eventHead{Time: formatTime(ev.Time), Type: ev.Type,
		Group: ev.Resource.Group, Version: ev.Resource.Version, Resource: ev.Resource.Resource, Kind: ev.Resource.Kind}
}

// objectRecord is an object event in the JSON contract (docs/json.md). Field names are public:
// add fields, never rename them.
type objectRecord struct {
	eventHead
	Namespace          string      `json:"namespace"`
	Name               string      `json:"name"`
	ResourceVersion    string      `json:"resourceVersion"`
	OldResourceVersion *string     `json:"oldResourceVersion,omitempty"`
	InitialList        bool        `json:"initialList"`
	Delta              watch.Delta `json:"delta"`
	Tombstone          bool        `json:"tombstone"`
	// State: what state the object is in (kstatus and the kind's columns); absent for objects
	// that say nothing about it (docs/fields.md).
	State  *State         `json:"state,omitempty"`
	Object map[string]any `json:"object"`
	Queue  *queueRecord   `json:"queue,omitempty"`
	// Managers: Updated lines that changed the object; who made the update (diff.Attribute).
	Managers *[]diff.Manager `json:"managers,omitempty"`
	// Attribution: the same lines; how Managers was found: entry, ownership, binding, delete
	// or unknown.
	Attribution string `json:"attribution,omitempty"`
	// AttributionReason: why no manager is named (binding, delete, unknown, a no-op).
	AttributionReason string `json:"attributionReason,omitempty"`
	// NoOp: the update changed nothing but metadata.resourceVersion and managedFields.
	NoOp bool `json:"noop,omitempty"`
	// Changes: with --diff, the same Updated lines; the changed fields.
	Changes *[]Change `json:"changes,omitempty"`
	// Diff: with --diff=full, a unified diff of the object as YAML.
	Diff string `json:"diff,omitempty"`
	// Filtered: the --predicate that kept this event out of the simulated workqueue.
	Filtered string `json:"filtered,omitempty"`
	// Owners: with --owned, an owned object's chain from the watched root down to its owner.
	Owners []ownerRecord `json:"owners,omitempty"`
	// Ignored: the update changed only --ignore-path fields; OutOfFocus: none of the
	// --only-path fields. Human output hides such lines (noise.Filter).
	Ignored    bool `json:"ignored,omitempty"`
	OutOfFocus bool `json:"outOfFocus,omitempty"`
}

// queueRecord is the workqueue's figures (the standard metrics) at one moment.
type queueRecord struct {
	Depth   int64 `json:"depth"`
	Adds    int64 `json:"adds"`
	Retries int64 `json:"retries"`
}

func queueOf(q *watch.QueueFigures) *queueRecord {
	if q == nil {
		return nil
	}
	return &queueRecord{Depth: q.Depth, Adds: q.Adds, Retries: q.Retries}
}

// reconciledRecord is a simulated worker's reconcile of one key.
type reconciledRecord struct {
	eventHead
	Key      string       `json:"key"`
	WaitMs   float64      `json:"waitMs"`
	WorkMs   float64      `json:"workMs"`
	Requeues int          `json:"requeues"`
	Error    bool         `json:"error"`
	Queue    *queueRecord `json:"queue"`
	// TriggerCount: the object events that coalesced into this reconcile (exact); Triggers:
	// them, capped at watch.MaxTriggers (the oldest two and the newest kept).
	TriggerCount int             `json:"triggerCount"`
	Triggers     []triggerRecord `json:"triggers,omitempty"`
	// Requeue: the key came back because its previous reconcile failed; RequeueReason says so.
	Requeue       bool   `json:"requeue"`
	RequeueReason string `json:"requeueReason,omitempty"`
}

// triggerRecord is an object event that put a key in the workqueue.
type triggerRecord struct {
	Type            watch.Type  `json:"type"`
	Delta           watch.Delta `json:"delta"`
	ResourceVersion string      `json:"resourceVersion"`
	Managers        []string    `json:"managers,omitempty"`
	Attribution     string      `json:"attribution,omitempty"`
	Time            string      `json:"time"`
	// Resource and Key: the owned object whose event enqueued its owner (--owned).
	Resource string `json:"resource,omitempty"`
	Key      string `json:"key,omitempty"`
}

func triggersOf(ts []watch.Trigger) []triggerRecord {
	if len(ts) == 0 {
		return nil
	}
	out := make([]triggerRecord, len(ts))
	for i, t := range ts {
		out[i] = triggerRecord{Type: t.Type, Delta: t.Delta, ResourceVersion: t.ResourceVersion, Managers: t.Managers, Attribution: t.Attribution, Time: formatTime(t.Time),
			Resource: t.Resource, Key: t.Key}
	}
	return out
}

// lifecycleRecord is a lifecycle event in the JSON contract; each type fills its own fields.
type lifecycleRecord struct {
	eventHead

	ResourceVersion     *string    `json:"resourceVersion,omitempty"`
	Items               *int       `json:"items,omitempty"`
	DurationMs          *int64     `json:"durationMs,omitempty"`
	Initial             *bool      `json:"initial,omitempty"`
	SendInitialEvents   *bool      `json:"sendInitialEvents,omitempty"`
	TimeoutSeconds      *int64     `json:"timeoutSeconds,omitempty"`
	InitialEventsEnd    *bool      `json:"initialEventsEnd,omitempty"`
	Reason              *string    `json:"reason,omitempty"`
	Message             *string    `json:"message,omitempty"`
	Verb                *string    `json:"verb,omitempty"`
	FromResourceVersion *string    `json:"fromResourceVersion,omitempty"`
	Added               *int       `json:"added,omitempty"`
	Updated             *int       `json:"updated,omitempty"`
	Deleted             *int       `json:"deleted,omitempty"`
	Unchanged           *int       `json:"unchanged,omitempty"`
	NotFound            *keyRecord `json:"notFound,omitempty"`
	Pages               *int       `json:"pages,omitempty"`
	ListMode            string     `json:"listMode,omitempty"`
	FellBack            *bool      `json:"fellBack,omitempty"`
	BackoffMs           *float64   `json:"backoffMs,omitempty"`
	apfRecord
}

// keyRecord names one object.
type keyRecord struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

type resourceRecord struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Resource   string `json:"resource"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
	// PrinterColumns: a custom resource's additionalPrinterColumns, read from its CRD at
	// startup; replay evaluates them from here, as the live run did.
	PrinterColumns []printerColumnRecord `json:"printerColumns,omitempty"`
}

// printerColumnRecord is one of a CRD's additionalPrinterColumns.
type printerColumnRecord struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	JSONPath string `json:"jsonPath"`
	Priority int32  `json:"priority,omitempty"`
}

func resourceRecordOf(r discovery.Resource) resourceRecord {
	rec := resourceRecord{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
	for _, c := range r.PrinterColumns {
		rec.PrinterColumns = append(rec.PrinterColumns, printerColumnRecord(c))
	}
	return rec
}

// resource is the inverse of resourceRecordOf.
func (r resourceRecord) resource() discovery.Resource {
	res := discovery.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
	for _, c := range r.PrinterColumns {
		res.PrinterColumns = append(res.PrinterColumns, discovery.PrinterColumn(c))
	}
	return res
}

type informerRecord struct {
	Time                  string           `json:"time"`
	Type                  watch.Type       `json:"type"`
	PluginVersion         string           `json:"pluginVersion"`
	ClientGoVersion       string           `json:"clientGoVersion"`
	Queue                 string           `json:"queue"`
	AtomicEvents          bool             `json:"atomicEvents"`
	UnlockWhileProcessing bool             `json:"unlockWhileProcessing"`
	WatchList             bool             `json:"watchList"`
	ResyncPeriod          string           `json:"resyncPeriod"`
	ResyncSeconds         float64          `json:"resyncSeconds"`
	Namespace             string           `json:"namespace"`
	LabelSelector         string           `json:"labelSelector"`
	FieldSelector         string           `json:"fieldSelector"`
	SecretsRedacted       bool             `json:"secretsRedacted"`
	MetadataOnly          bool             `json:"metadataOnly"`
	DropManagedFields     bool             `json:"dropManagedFields"`
	Resources             []resourceRecord `json:"resources"`
	// OwnedResources: with --owned, the resources followed below Resources.
	OwnedResources []resourceRecord `json:"ownedResources,omitempty"`
	// Events: with --events, Events about the shown objects are KubeEvent lines.
	Events   bool     `json:"events,omitempty"`
	ListMode string   `json:"listMode,omitempty"`
	PageSize int64    `json:"pageSize,omitempty"`
	QPS      *float32 `json:"qps,omitempty"`
	Burst    int      `json:"burst,omitempty"`
	// Wires: each resource's wire format (protobuf or json), by resource name.
	Wires map[string]string `json:"wires,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// msFloat is a duration in milliseconds with microsecond precision.
func msFloat(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func formatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Options are what a line says that the event does not hold.
type Options struct {
	// PluginVersion and SecretsRedacted are the Informer line's: the build that printed the
	// stream, and whether its Secret values are redacted.
	PluginVersion   string
	SecretsRedacted bool
	// Derive gives an object line's object as written and what was read from it (pkg/printer's
	// Printer.Derive). Nil: the object as it is, and nothing derived.
	Derive func(ev *watch.Event) Derived
}

// Derived is what an object line carries beyond its event, computed by the caller.
type Derived struct {
	// Object is the object as written: with Secret values redacted unless they are shown.
	Object map[string]any
	// State is the object's state (internal/state); nil for objects that say nothing about it.
	State *State
	// Update is set on an update that changed the object (watch.Event.IsChange).
	Update *Update
}

// Update is what an update changed and who made it.
type Update struct {
	// Attribution names the managers of the update (internal/diff).
	Attribution diff.Attribution
	// Changes are the changed fields (with --diff; nil without); Diff is a unified diff of the
	// object as YAML (with --diff=full).
	Changes *[]Change
	Diff    string
}

// State is an object's state in the JSON contract (docs/json.md).
type State struct {
	Status          string   `json:"status"`
	Summary         string   `json:"summary,omitempty"`
	Message         string   `json:"message,omitempty"`
	Finalizers      []string `json:"finalizers,omitempty"`
	Previous        string   `json:"previous,omitempty"`
	PreviousSummary string   `json:"previousSummary,omitempty"`
}

// Change is one changed field in the JSON contract: old is absent when the field was added, new
// when it was removed; null is a value.
type Change struct {
	Path string          `json:"path"`
	Old  json.RawMessage `json:"old,omitempty"`
	New  json.RawMessage `json:"new,omitempty"`
	// Ignored: the field is under an --ignore-path (human output leaves it out).
	Ignored bool `json:"ignored,omitempty"`
}

func (o *Options) derive(ev *watch.Event) Derived {
	if o.Derive != nil {
		return o.Derive(ev)
	}
	d := Derived{}
	if ev.Object != nil {
		d.Object = ev.Object.Object
	}
	return d
}

// Record returns the JSON value of an event's line: what Encode marshals, for outputs that
// render it otherwise (YAML, templates).
func Record(ev *watch.Event, o Options) any {
	switch {
	case ev.Type.IsObject():
		return objectRecordOf(ev, o)
	case ev.Type == HotLoop:
		return hotLoopOf(ev)
	case ev.Type == HotLoopEnded:
		return hotLoopEndedOf(ev)
	case ev.Type == watch.ControllerQueue:
		return controllerQueueOf(ev)
	case ev.Type == watch.ControllerReconcile:
		return controllerReconcileOf(ev)
	case ev.Type == watch.KubeEvent:
		return kubeEventOf(ev)
	case ev.Type == watch.ApiStats:
		return apiStatsOf(ev)
	case ev.Type == watch.Throttled:
		return throttledOf(ev)
	case ev.Type == watch.Reconciled:
		return reconciledRecord{
			eventHead: headOf(ev),
			Key:       ev.Key, WaitMs: msFloat(ev.Wait), WorkMs: msFloat(ev.Work), Requeues: ev.Requeues, Error: ev.Failed,
			Queue:        queueOf(ev.Queue),
			TriggerCount: ev.TriggerCount, Triggers: triggersOf(ev.Triggers),
			Requeue: ev.Requeue, RequeueReason: ev.RequeueReason,
		}
	case ev.Type == watch.Informer:
		return informerRecordOf(ev, o)
	}
	return lifecycleOf(ev)
}

// objectRecordOf is an object event's line: the object as the options show it, its state, and
// what an update changed and who made it.
func objectRecordOf(ev *watch.Event, o Options) objectRecord {
	r := objectRecord{
		eventHead: headOf(ev),
		Namespace: ev.Namespace, Name: ev.Name, ResourceVersion: ev.ResourceVersion,
		InitialList: ev.InitialList, Delta: ev.Delta, Tombstone: ev.Tombstone,
	}
	if ev.Type == watch.Updated {
		r.OldResourceVersion = ptr(ev.OldResourceVersion)
	}
	d := o.derive(ev)
	r.Object, r.State = d.Object, d.State
	r.Queue = queueOf(ev.Queue)
	r.Filtered = ev.Filtered
	r.Owners = ownersOf(ev.Owners)
	r.Ignored, r.OutOfFocus = ev.Ignored, ev.OutOfFocus
	if u := d.Update; u != nil {
		managers := append([]diff.Manager{}, u.Attribution.Managers...)
		r.Managers = &managers
		r.Attribution, r.NoOp = u.Attribution.Rule, u.Attribution.NoOp
		if len(u.Attribution.Managers) == 0 {
			r.AttributionReason = u.Attribution.Why
		}
		r.Changes, r.Diff = u.Changes, u.Diff
	}
	return r
}

// informerRecordOf is the Informer line: how the informers were configured.
func informerRecordOf(ev *watch.Event, o Options) informerRecord {
	info := ev.Info
	r := informerRecord{
		Time: formatTime(ev.Time), Type: ev.Type, PluginVersion: o.PluginVersion,
		ClientGoVersion: info.ClientGoVersion, Queue: info.Queue, AtomicEvents: info.AtomicEvents,
		UnlockWhileProcessing: info.UnlockWhileProcessing, WatchList: info.WatchList,
		ResyncPeriod: info.ResyncPeriod.String(), ResyncSeconds: info.ResyncPeriod.Seconds(),
		Namespace: info.Namespace, LabelSelector: info.LabelSelector, FieldSelector: info.FieldSelector,
		SecretsRedacted: o.SecretsRedacted, Resources: []resourceRecord{},
		MetadataOnly: info.MetadataOnly, DropManagedFields: info.DropManagedFields,
		ListMode: info.ListMode, PageSize: info.PageSize, Burst: info.Burst, Wires: info.Wires,
	}
	if info.QPS != 0 {
		r.QPS = ptr(info.QPS)
	}
	for _, res := range info.Resources {
		r.Resources = append(r.Resources, resourceRecordOf(res))
	}
	for _, res := range info.OwnedResources {
		r.OwnedResources = append(r.OwnedResources, resourceRecordOf(res))
	}
	r.Events = info.Events
	return r
}

// lifecycleOf is the line of an informer's lifecycle event: only the fields its type has.
func lifecycleOf(ev *watch.Event) lifecycleRecord {
	r := lifecycleRecord{
		eventHead: headOf(ev),
	}
	switch ev.Type {
	case watch.List:
		r.ResourceVersion, r.Items, r.DurationMs, r.Initial = ptr(ev.ResourceVersion), ptr(ev.Items), ptr(ev.Duration.Milliseconds()), ptr(ev.Initial)
		if ev.Pages > 0 {
			r.Pages = ptr(ev.Pages)
		}
		r.apfRecord = apfRecordOf(ev.APF)
	case watch.Watch:
		r.ResourceVersion, r.SendInitialEvents, r.TimeoutSeconds = ptr(ev.ResourceVersion), ptr(ev.SendInitialEvents), ptr(ev.TimeoutSeconds)
		r.apfRecord = apfRecordOf(ev.APF)
	case watch.WatchClosed:
		r.Reason, r.ResourceVersion = ptr(ev.Reason), ptr(ev.ResourceVersion)
	case watch.Bookmark:
		r.ResourceVersion, r.InitialEventsEnd = ptr(ev.ResourceVersion), ptr(ev.InitialEventsEnd)
	case watch.Synced:
		r.Items, r.DurationMs, r.ResourceVersion = ptr(ev.Items), ptr(ev.Duration.Milliseconds()), ptr(ev.ResourceVersion)
		if ev.NotFound != nil {
			r.NotFound = &keyRecord{Namespace: ev.NotFound.Namespace, Name: ev.NotFound.Name}
		}
		if ev.ListMode != "" {
			r.ListMode, r.FellBack = ev.ListMode, ptr(ev.FellBack)
		}
	case watch.Dropped:
		r.Items = ptr(ev.Items)
	case watch.Recovered:
		r.Verb, r.Message = ptr(ev.Verb), ptr(ev.Message)
		if ev.Backoff > 0 {
			r.BackoffMs = ptr(msFloat(ev.Backoff))
		}
	case watch.Resync:
		r.Items = ptr(ev.Items)
	case watch.Relist:
		r.Reason, r.FromResourceVersion, r.ResourceVersion = ptr(ev.Reason), ptr(ev.FromResourceVersion), ptr(ev.ResourceVersion)
		r.Added, r.Updated, r.Deleted, r.Unchanged = ptr(ev.Counts.Added), ptr(ev.Counts.Updated), ptr(ev.Counts.Deleted), ptr(ev.Counts.Unchanged)
	case watch.Error:
		r.Reason, r.Message, r.Verb = ptr(ev.Reason), ptr(ev.Message), ptr(ev.Verb)
		if ev.Backoff > 0 {
			r.BackoffMs = ptr(msFloat(ev.Backoff))
		}
	}
	return r
}

// Encode returns an event's line, ending in a newline.
func Encode(ev *watch.Event, o Options) ([]byte, error) {
	b, err := json.Marshal(Record(ev, o))
	if err != nil {
		return nil, err
	}
	if hasNonASCII(b) && bytes.IndexFunc(b, IsFormatChar) >= 0 {
		// encoding/json leaves C1 controls and bidirectional overrides raw: escape them too,
		// so that no line can act on a terminal.
		b = []byte(EscapeFormatChars(string(b)))
	}
	return append(b, '\n'), nil
}

// hasNonASCII reports whether b holds a byte outside ASCII. Every format character is, and most
// lines are ASCII only: this spares them the rune-by-rune IsFormatChar scan, which cost as much
// CPU as encoding the line (make bench profile, -o json).
func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// IsFormatChar reports runes that JSON and YAML encoders leave raw and a terminal may act on
// (C1 controls, line and paragraph separators, bidirectional controls).
func IsFormatChar(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

// EscapeFormatChars writes format characters as \uXXXX: valid inside JSON strings and YAML
// double-quoted scalars, where they can only be.
func EscapeFormatChars(s string) string {
	var b strings.Builder
	for _, r := range s {
		if IsFormatChar(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
