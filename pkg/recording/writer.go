package printer

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// RecordingFormatVersion is the version of the recording format this build writes and reads.
const RecordingFormatVersion = 1

// RecordingHeader is the first line of a recording.
type RecordingHeader struct {
	Type            string           `json:"type"` // "Recording"
	FormatVersion   int              `json:"formatVersion"`
	Time            string           `json:"time"`
	PluginVersion   string           `json:"pluginVersion"`
	ServerVersion   string           `json:"serverVersion"`
	Resources       []resourceRecord `json:"resources"`
	SecretsRedacted bool             `json:"secretsRedacted"`
	// Flags are the options that shaped the stream (namespace, selectors, resync, workers...),
	// never credentials.
	Flags map[string]string `json:"flags"`
}

// Recorder writes the full event stream (the JSON contract, objects included) to a file, one
// whole line per event, flushed as written, so a crash leaves a readable file.
type Recorder struct {
	*Printer
	f *os.File
}

// NewRecorder creates path with mode 0600 (truncating it) and writes the header.
func NewRecorder(path string, h RecordingHeader, resources []discovery.Resource, showSecrets bool, pluginVersion string) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	// An existing file keeps its mode on open: make sure it is private too.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("--record: %w", err)
	}
	h.Type = "Recording"
	h.FormatVersion = RecordingFormatVersion
	h.Time = time.Now().UTC().Format(TimeFormat)
	h.PluginVersion = pluginVersion
	h.SecretsRedacted = !showSecrets
	h.Resources = []resourceRecord{}
	for _, r := range resources {
		h.Resources = append(h.Resources, resourceRecordOf(r))
	}
	b, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("--record: %w", err)
	}
	p := New(f, Options{Output: "json", ShowSecrets: showSecrets, FlushEach: true, PluginVersion: pluginVersion})
	return &Recorder{Printer: p, f: f}, nil
}

// Close flushes and closes the file.
func (r *Recorder) Close() error {
	ferr := r.Flush()
	cerr := r.f.Close()
	if ferr != nil {
		return ferr
	}
	return cerr
}
