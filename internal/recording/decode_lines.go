package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// lineDecoders decode the lines of each type DecodeLine reads, into the type's record.
var lineDecoders = map[watch.Type]func(line []byte, d *Decoded) error{
	watch.Added: decodeAs[objectRecord], watch.Updated: decodeAs[objectRecord], watch.Deleted: decodeAs[objectRecord],
	watch.List: decodeAs[lifecycleRecord], watch.Watch: decodeAs[lifecycleRecord],
	watch.WatchClosed: decodeAs[lifecycleRecord], watch.Bookmark: decodeAs[lifecycleRecord],
	watch.Synced: decodeAs[lifecycleRecord], watch.Resync: decodeAs[lifecycleRecord],
	watch.Relist: decodeAs[lifecycleRecord], watch.Error: decodeAs[lifecycleRecord],
	watch.Recovered:           decodeAs[lifecycleRecord],
	watch.Informer:            decodeAs[informerRecord],
	watch.Reconciled:          decodeAs[reconciledRecord],
	watch.ControllerQueue:     decodeAs[controllerQueueRecord],
	watch.ControllerReconcile: decodeAs[controllerReconcileRecord],
	watch.HotLoop:             decodeAs[hotLoopRecord],
	watch.HotLoopEnded:        decodeAs[hotLoopEndedRecord],
	watch.KubeEvent:           decodeAs[kubeEventRecord],
	watch.ApiStats:            decodeAs[apiStatsRecord],
	watch.Throttled:           decodeAs[throttledRecord],
}

// lineRecord is a pointer to a record struct (R) that turns back into its event.
type lineRecord[R any] interface {
	*R
	event(ev *watch.Event) error
}

// decodeAs reads a line into its type's record R (unknown fields ignored, so newer recordings
// stay readable) and fills d's event, whose type and time are set, from it: the resource of a
// record with a head (eventHead), then the record's own fields.
func decodeAs[R any, P lineRecord[R]](line []byte, d *Decoded) error {
	var r R
	if err := json.Unmarshal(line, &r); err != nil {
		if fe, ok := errors.AsType[*fieldError](err); ok && fe.onLine {
			return fmt.Errorf("%w on a %s line", err, d.Event.Type)
		}
		return jsonError(err)
	}
	if h, ok := any(&r).(interface{ headResource() discovery.Resource }); ok {
		d.Event.Resource = h.headResource()
	}
	if i, ok := any(&r).(*informerRecord); ok {
		d.PluginVersion, d.SecretsRedacted = i.PluginVersion, i.SecretsRedacted
	}
	return P(&r).event(&d.Event)
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
