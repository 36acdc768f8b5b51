// Package recording is kubectl informer's recording format: the JSON contract (docs/json.md)
// that `-o json` prints and `--record FILE` writes, one JSON line per event after a header
// line. It encodes a watch.Event to its line (Encode), decodes a line back (DecodeLine, and
// Decoder for a whole stream), and writes recording files (Writer). What a line says beyond
// the event (an object's state, who made an update, Secret redaction) the caller derives:
// pkg/printer does, before it encodes a line (Options.Derived), or through Options.Derive.
package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// TimeFormat is RFC 3339 with nanoseconds, always nine digits, in UTC.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// eventHead is the line of an event whose type has none of its own (Folded, never written):
// when, what, and the resource it is about, as every line but Informer and ControllerQueue starts.
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

// msFloat is a duration in milliseconds with microsecond precision.
func msFloat(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// formatTime formats t, clamped to the years RFC 3339 can say (0000 to 9999): every time
// written is one DecodeLine reads.
func formatTime(t time.Time) string { return recordable(t).Format(TimeFormat) }

// recordable is t in UTC, clamped to the years RFC 3339 can say.
func recordable(t time.Time) time.Time {
	t = t.UTC()
	switch {
	case t.Before(minRecordable):
		t = minRecordable
	case t.After(maxRecordable):
		t = maxRecordable
	}
	return t
}

var (
	minRecordable = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	maxRecordable = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// Options are what a line says that the event does not hold.
type Options struct {
	// PluginVersion and SecretsRedacted are the Informer line's: the build that printed the
	// stream, and whether its Secret values are redacted.
	PluginVersion   string
	SecretsRedacted bool
	// Derive gives an object line's object as written and what was read from it (pkg/printer's
	// Printer.Derive). Nil: the object as it is, and nothing derived.
	Derive func(ev *watch.Event) Derived
	// Derived, when set, is what the caller derived already of the one object line encoded with
	// these options (pkg/printer's lines): Derive is not called.
	Derived *Derived
}

// Derived is what an object line carries beyond its event, computed by the caller.
type Derived struct {
	// Object is the object as written: with Secret values redacted unless they are shown.
	Object map[string]any `json:"object"`
	// ObjectJSON, set instead of Object, is the object already encoded as Encode would write
	// Object (EncodeObject). Encode writes it as it is; Record, which returns a value, has no
	// object then.
	ObjectJSON []byte `json:"-"`
	// State is the object's state (pkg/state); nil for objects that say nothing about it.
	State *State `json:"state"`
	// Update is set on an update that changed the object (watch.Event.IsChange).
	Update *Update
}

// Update is what an update changed and who made it.
type Update struct {
	// Attribution names the managers of the update (pkg/diff).
	Attribution diff.Attribution
	// Changes are the changed fields (with --diff; nil without); Diff is a unified diff of the
	// object as YAML (with --diff=full).
	Changes *[]Change `json:"changes"`
	Diff    string    `json:"diff"`
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

// derive is what an object line carries beyond its event: the caller's Derived, or what its
// Derive gives, or the object as it is.
func (o *Options) derive(ev *watch.Event) Derived {
	var d Derived
	switch {
	case o.Derived != nil:
		d = *o.Derived
	case o.Derive != nil:
		d = o.Derive(ev)
	case ev.Obj.Object != nil:
		d.Object = ev.Obj.Object.Object
	}
	if a := ev.Obj.Attribution; ev.Type == watch.Deleted && a != nil && a.Reconcile != nil {
		// Deleted by a controller, as its log shows: its line names it as an update's does.
		d.Update = &Update{Attribution: diff.Attribution{Managers: a.Managers, Rule: a.Rule, Reconcile: a.Reconcile}}
	}
	return d
}

// Record returns the JSON value of an event's line: what Encode marshals, for outputs that
// render it otherwise (YAML, templates).
func Record(ev *watch.Event, o Options) any {
	if c := lineCodecs[ev.Type]; c != nil {
		return c.encode(lineOf(ev, o))
	}
	return headOf(ev) // a type with no line of its own
}

// lineOf is what ev's line is written from with o: the event, an Informer line's with the
// plugin version and redaction of o (the build and the options that write it), and what is
// derived of an object line (nil for other lines).
func lineOf(ev *watch.Event, o Options) (*watch.Event, *Derived) {
	if ev.Type.IsObject() {
		d := o.derive(ev)
		return ev, &d
	}
	if ev.Type != watch.Informer {
		return ev, nil
	}
	e := *ev
	var info watch.InformerInfo
	if ev.Lifecycle.Info != nil {
		info = *ev.Lifecycle.Info
	}
	info.PluginVersion, info.SecretsRedacted = o.PluginVersion, o.SecretsRedacted
	e.Lifecycle.Info = &info
	return &e, nil
}

// Encode returns an event's line, ending in a newline.
func Encode(ev *watch.Event, o Options) ([]byte, error) {
	var b []byte
	var err error
	if c := lineCodecs[ev.Type]; c != nil {
		e, d := lineOf(ev, o)
		size := 512
		if d != nil {
			size += len(d.ObjectJSON)
		}
		b, err = c.appendLine(make([]byte, 0, size), e, d)
	} else {
		b, err = json.Marshal(headOf(ev))
	}
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
