package recording

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// FormatVersion is the version of the recording format this build writes and reads.
const FormatVersion = 1

// Header is the first line of a recording.
type Header struct {
	Type            string               `json:"type"` // "Recording"
	FormatVersion   int                  `json:"formatVersion"`
	Time            string               `json:"time"`
	PluginVersion   string               `json:"pluginVersion"`
	ServerVersion   string               `json:"serverVersion"`
	Resources       []discovery.Resource `json:"resources"`
	SecretsRedacted bool                 `json:"secretsRedacted"`
	// Flags are the options that shaped the stream (namespace, selectors, resync, workers...),
	// never credentials.
	Flags map[string]string `json:"flags"`
	// Cluster is the recorded cluster's identity, which a replay's spans carry as the live
	// run's did; nil in a recording made before it was recorded.
	Cluster *Cluster `json:"cluster,omitempty"`
}

// Cluster is a cluster's identity: the kubeconfig context's cluster name, and the uid of its
// kube-system namespace ("" when it could not be read), as OpenTelemetry's k8s.cluster.name and
// k8s.cluster.uid.
type Cluster struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// Writer writes the full event stream (the JSON contract, objects included) to a file, one
// whole line per event, written as it comes, so a crash leaves a readable file.
type Writer struct {
	f    *os.File
	opts Options
}

// Create creates path with mode 0600 (truncating it) and writes the header: h, with its type,
// format version and time set, resources, and the plugin version and redaction of opts, which
// then encode every event.
func Create(path string, h Header, resources []discovery.Resource, opts Options) (*Writer, error) {
	// A symbolic link is not followed: truncating and chmodding its target (a link planted in
	// a shared directory) is not what --record FILE asks for.
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: give the file itself (a recording is never written through a link)", path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	// An existing file keeps its mode on open: make sure it is private too.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	h.Type = HeaderType
	h.FormatVersion = FormatVersion
	h.Time = time.Now().UTC().Format(TimeFormat)
	h.PluginVersion = opts.PluginVersion
	h.SecretsRedacted = opts.SecretsRedacted
	h.Resources = append([]discovery.Resource{}, resources...)
	b, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return nil, err
	}
	return &Writer{f: f, opts: opts}, nil
}

// Write writes ev's line (Encode).
func (w *Writer) Write(ev *watch.Event) error {
	b, err := Encode(ev, w.opts)
	if err != nil {
		return err
	}
	// One write per line: a crash never leaves a line without its end.
	_, err = w.f.Write(b)
	return err
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }
