package diff

import (
	"bytes"
	"maps"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	yaml "go.yaml.in/yaml/v3"
)

// Prune returns a copy of obj without the fields Compute leaves out (metadata.resourceVersion,
// metadata.managedFields). obj is not modified.
func Prune(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := maps.Clone(obj)
	if md, ok := obj["metadata"].(map[string]any); ok {
		md2 := make(map[string]any, len(md))
		for k, v := range md {
			if !ignored["metadata"+keySegment(k)] {
				md2[k] = v
			}
		}
		out["metadata"] = md2
	}
	return out
}

// YAML renders a decoded JSON value as YAML with two-space indents and sorted keys. Control
// characters in strings come out escaped in double quotes, never raw.
func YAML(v any) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// Unified returns a unified diff, with three lines of context, of the two objects as YAML, less
// the fields Compute leaves out. It is empty when they render the same.
func Unified(old, new map[string]any, oldLabel, newLabel string) (string, error) {
	a, err := YAML(Prune(old))
	if err != nil {
		return "", err
	}
	b, err := YAML(Prune(new))
	if err != nil {
		return "", err
	}
	if a == b {
		return "", nil
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b),
		FromFile: oldLabel, ToFile: newLabel, Context: 3,
	})
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(text, "\n"), nil
}

// lines splits YAML text into lines that keep their "\n", without the empty line
// difflib.SplitLines adds after a final newline.
func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if len(l) > 0 && l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}
