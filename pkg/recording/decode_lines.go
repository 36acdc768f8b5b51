package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// lineRecords are the codecs of the types DecodeLine reads (KnownTypes): each line is read into
// its wire form (a *lineValue, lines.go), then turned back into its event.
var lineRecords = func() map[watch.Type]*lineCodec {
	out := map[watch.Type]*lineCodec{}
	for _, t := range KnownTypes {
		if c := lineCodecs[t]; c != nil {
			out[t] = c
		}
	}
	return out
}()

// readRecord unmarshals a line of type typ into l. Unknown fields are ignored, so newer
// recordings stay readable.
func readRecord(line []byte, typ watch.Type, l *lineValue) error {
	err := json.Unmarshal(line, l.target())
	if fe, ok := errors.AsType[*fieldError](err); ok && fe.onLine {
		return fmt.Errorf("%w on a %s line", err, typ)
	}
	if err != nil {
		return jsonError(err)
	}
	return nil
}

// fill fills d from l: the resource its head names, then the event's members (d.Event has its
// type and time), and an Informer line's plugin version and redaction.
func fill(d *Decoded, l *lineValue) error {
	d.Event.Resource = l.headResource()
	err := l.event(&d.Event)
	if info := d.Event.Lifecycle.Info; d.Event.Type == watch.Informer && info != nil {
		d.PluginVersion, d.SecretsRedacted = info.PluginVersion, info.SecretsRedacted
	}
	return err
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
