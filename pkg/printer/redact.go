package printer

import (
	"fmt"
	"maps"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// lastAppliedAnnotation holds a full copy of the applied object, secret values included.
const lastAppliedAnnotation = diff.LastAppliedAnnotation

// IsSecret reports whether res holds Secret values.
func IsSecret(res discovery.Resource) bool {
	return res.Group == "" && res.Resource == "secrets"
}

// redact returns obj with Secret values replaced, unless secrets are shown. Keys stay visible;
// the replacement names the value's length so a change of value still shows. obj is not modified.
func (p *Printer) redact(res discovery.Resource, obj map[string]any) map[string]any {
	if p.opts.ShowSecrets || !IsSecret(res) {
		return obj
	}
	return redactSecret(obj)
}

// redactSecret returns a copy of a Secret object with its data, stringData and last-applied
// annotation values redacted.
func redactSecret(obj map[string]any) map[string]any {
	if obj == nil {
		return map[string]any{}
	}
	out := maps.Clone(obj)
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			red := make(map[string]any, len(m))
			for k, v := range m {
				red[k] = redactedValue(v)
			}
			out[field] = red
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			if _, has := ann[lastAppliedAnnotation]; has {
				md2, ann2 := maps.Clone(md), maps.Clone(ann)
				ann2[lastAppliedAnnotation] = redactedValue(ann[lastAppliedAnnotation])
				md2["annotations"] = ann2
				out["metadata"] = md2
			}
		}
	}
	return out
}

func redactedValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("<redacted: %d bytes>", len(s))
	}
	return "<redacted>"
}

// PrintRecorded prints an event read from a recording. When the recording's Secret values were
// already redacted (recordedRedacted), they are not redacted again: the placeholder keeps the
// original value's length. Everything else is Print.
func (p *Printer) PrintRecorded(ev *watch.Event, recordedRedacted bool) error {
	if recordedRedacted && !p.opts.ShowSecrets && ev.HasObject() && IsSecret(ev.Resource) {
		p.opts.ShowSecrets = true
		defer func() { p.opts.ShowSecrets = false }()
	}
	return p.Print(ev)
}
