package printer

import (
	"fmt"
	"io"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// TimeFormat is the time format of every line (recording.TimeFormat).
const TimeFormat = recording.TimeFormat

// KnownTypes are the line types of the JSON contract, in the order docs/json.md lists them
// (recording.KnownTypes).
var KnownTypes = recording.KnownTypes

// encoding is how a recording of this printer's lines encodes them (NewRecorder): the recording
// format, with what the printer derives from an object event (derive) asked for line by line.
func (p *Printer) encoding() recording.Options {
	return recording.Options{PluginVersion: p.opts.PluginVersion, SecretsRedacted: !p.opts.ShowSecrets, Derive: p.derive}
}

// lineEncoding is how ev's line is encoded: the recording format, with what the printer derives
// of an object line derived here, before it is encoded (no call back from the encoding).
func (p *Printer) lineEncoding(ev *watch.Event) recording.Options {
	o := recording.Options{PluginVersion: p.opts.PluginVersion, SecretsRedacted: !p.opts.ShowSecrets}
	if ev.Type.IsObject() {
		d := p.derive(ev)
		o.Derived = &d
	}
	return o
}

// record builds the JSON value of an event.
func (p *Printer) record(ev *watch.Event) any { return recording.Record(ev, p.lineEncoding(ev)) }

func (p *Printer) writeJSON(ev *watch.Event) error {
	b, err := recording.Encode(ev, p.lineEncoding(ev))
	if err != nil {
		return err
	}
	// One write per line: a crash never leaves a line without its end.
	_, err = p.w.Write(b)
	return err
}

// derive is what an object line says beyond its event: the object, its Secret values redacted
// unless shown; its state; and on an update, who made it and, with --diff, what it changed.
func (p *Printer) derive(ev *watch.Event) recording.Derived {
	var d recording.Derived
	if ev.HasObject() {
		d.Object, d.ObjectJSON = p.objectOf(ev)
		d.State = p.stateOf(ev).record()
	}
	if u := p.updateOf(ev); u != nil {
		d.Update = &recording.Update{Attribution: u.attribution}
		if p.opts.Diff != "" {
			records := p.changeRecords(u.changes)
			changes := make([]recording.Change, len(records))
			for i, c := range records {
				changes[i] = recording.Change(c)
			}
			d.Update.Changes, d.Update.Diff = &changes, u.unified
		}
	}
	return d
}

// NewRecorder creates a recording at path (recording.Create) whose lines are this package's
// -o json lines: Secret values redacted unless showSecrets, objects' states and updates'
// managers included.
func NewRecorder(path string, h recording.Header, resources []discovery.Resource, showSecrets bool, pluginVersion string) (*recording.Writer, error) {
	p := New(io.Discard, Options{Output: "json", ShowSecrets: showSecrets, PluginVersion: pluginVersion})
	w, err := recording.Create(path, h, resources, p.encoding())
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	return w, nil
}

// objectOf is an object line's object: a typed object (watch.Event.Obj.Typed) encoded from its Go
// type for JSON lines, unless its values are redacted (Secrets) or the line is rendered from
// its map (YAML, templates); else the map, redacted unless shown.
func (p *Printer) objectOf(ev *watch.Event) (map[string]any, []byte) {
	if p.encodesTyped(ev) {
		if p.prepared != nil {
			return nil, p.prepared
		}
		if b, err := recording.EncodeObject(ev.Obj.Typed); err == nil {
			return nil, b
		}
	}
	return p.redact(ev.Resource, ev.Materialize().Object), nil
}

// encodesTyped reports whether ev's object is encoded from its Go type: a typed object in JSON
// output whose values are not redacted.
func (p *Printer) encodesTyped(ev *watch.Event) bool {
	return ev.Obj.Object == nil && p.out == outputJSON && (p.opts.ShowSecrets || !IsSecret(ev.Resource)) && ev.TypedObject() != nil
}

// Prepared is what was made of a line ahead of its printing: the object of a typed line in JSON
// output (Prepare), or the state of a typed line in human output (Lighten). The zero value is
// nothing prepared.
type Prepared struct {
	object []byte
	// state is the line's state, when Lighten read it (and dropped the typed object).
	state    objectState
	hasState bool
}

// Prepares reports whether Prepare may have work for this printer's lines (-o json); when it
// does not, there is nothing to gain from preparing lines ahead.
func (p *Printer) Prepares() bool { return p.out == outputJSON }

// Prepare encodes ahead what it can of ev's line without the printer's state: the object of a
// typed line in JSON output (recording.EncodeObject, the slowest part of such a line). It only
// reads the printer's options, so any goroutine may call it, concurrently with Print and with
// itself; ev must not change until it returns. PrintPrepared prints the line with it.
func (p *Printer) Prepare(ev *watch.Event) Prepared {
	if !p.encodesTyped(ev) {
		return Prepared{}
	}
	b, err := recording.EncodeObject(ev.Obj.Typed)
	if err != nil {
		return Prepared{} // Print tries again and falls back to the map
	}
	return Prepared{object: b}
}

// PrintPrepared is Print with what Prepare encoded of ev, or what Lighten read of it: the same
// bytes as Print(ev) before either.
func (p *Printer) PrintPrepared(ev *watch.Event, pr Prepared) error {
	if pr.hasState {
		p.preparedState, p.hasPreparedState = pr.state, true
		defer func() { p.preparedState, p.hasPreparedState = objectState{}, false }()
		return p.Print(ev)
	}
	if pr.object == nil || !p.encodesTyped(ev) {
		return p.Print(ev)
	}
	p.prepared = pr.object
	defer func() { p.prepared = nil }()
	return p.Print(ev)
}
