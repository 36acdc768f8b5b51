package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// record is a line type's record struct, the one Encode writes (objectRecord, lifecycleRecord,
// ...), or the wire form of a line whose payload is its line (*lineValue), as DecodeLine reads it:
// unmarshalled from the line, then turned back into its event.
type record interface {
	event(ev *watch.Event) error
}

func newRecord[R any, P interface {
	*R
	record
}]() record {
	return P(new(R))
}

// lineRecords give a new record for each type DecodeLine reads.
var lineRecords = map[watch.Type]func() record{
	watch.Added: newRecord[objectRecord], watch.Updated: newRecord[objectRecord], watch.Deleted: newRecord[objectRecord],
	watch.List: newRecord[lifecycleRecord], watch.Watch: newRecord[lifecycleRecord],
	watch.WatchClosed: newRecord[lifecycleRecord], watch.Bookmark: newRecord[lifecycleRecord],
	watch.Synced: newRecord[lifecycleRecord], watch.Resync: newRecord[lifecycleRecord],
	watch.Relist: newRecord[lifecycleRecord], watch.Error: newRecord[lifecycleRecord],
	watch.Recovered:       newRecord[lifecycleRecord],
	watch.Informer:        newRecord[informerRecord],
	watch.ControllerQueue: newRecord[controllerQueueRecord],
	watch.Throttled:       newRecord[throttledRecord],
	// The lines whose payload is their line (lines.go).
	watch.Reconciled:          lineCodecs[watch.Reconciled].newLine,
	watch.ControllerReconcile: lineCodecs[watch.ControllerReconcile].newLine,
	watch.HotLoop:             lineCodecs[watch.HotLoop].newLine,
	watch.HotLoopEnded:        lineCodecs[watch.HotLoopEnded].newLine,
	watch.KubeEvent:           lineCodecs[watch.KubeEvent].newLine,
	watch.ApiStats:            lineCodecs[watch.ApiStats].newLine,
}

// readRecord unmarshals a line of type typ into r. Unknown fields are ignored, so newer
// recordings stay readable.
func readRecord(line []byte, typ watch.Type, r record) error {
	var target any = r
	if l, ok := r.(*lineValue); ok {
		target = l.target()
	}
	err := json.Unmarshal(line, target)
	if fe, ok := errors.AsType[*fieldError](err); ok && fe.onLine {
		return fmt.Errorf("%w on a %s line", err, typ)
	}
	if err != nil {
		return jsonError(err)
	}
	return nil
}

// fill fills d from r: the resource of a record with a head (eventHead), the Informer line's
// own fields, then the event's (d.Event has its type and time).
func fill(d *Decoded, r record) error {
	if h, ok := r.(interface{ headResource() discovery.Resource }); ok {
		d.Event.Resource = h.headResource()
	}
	if i, ok := r.(*informerRecord); ok {
		d.PluginVersion, d.SecretsRedacted = i.PluginVersion, i.SecretsRedacted
	}
	return r.event(&d.Event)
}

// fieldError is a field that is not what its line's type has; onLine: its wording ends with the
// type ("on a HotLoop line").
type fieldError struct {
	field, want string
	onLine      bool
}

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: want %s", e.field, e.want) }

// decodeHeader reads a recording's header line.
func decodeHeader(line []byte) (Decoded, error) {
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
