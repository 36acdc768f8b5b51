package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// What an update changed, as this printer renders it.
type updateInfo struct {
	attribution diff.Attribution
	changes     []diff.Change // with Options.Diff only; Secret values marked Sensitive
	unified     string        // with Options.Diff == "full" only
}

// IsChange reports whether ev is an update that changed the object on the server: a watch
// MODIFIED event or a relist finding a new resourceVersion, with both versions at hand (not a
// resync, not a relist's unchanged redelivery).
func IsChange(ev *watch.Event) bool { return ev.IsChange() }

// updateOf returns what ev changed, or nil when it is not a change (see IsChange): the
// analysis step's attribution and changes (internal/analysis), with the changed Secret values
// marked for redaction and, for --diff=full, the unified diff.
func (p *Printer) updateOf(ev *watch.Event) *updateInfo {
	if !IsChange(ev) {
		return nil
	}
	u := &updateInfo{}
	if ev.Obj.Attribution != nil {
		u.attribution = *ev.Obj.Attribution
	}
	if p.opts.Diff == "" {
		return u
	}
	old, cur := ev.Obj.OldObject.Object, ev.Obj.Object.Object
	secret := IsSecret(ev.Resource) && !p.opts.ShowSecrets
	u.changes = slices.Clone(ev.Obj.Changes)
	for i := range u.changes {
		u.changes[i].Sensitive = secret && diff.IsSecretPath(u.changes[i].Path)
	}
	if p.opts.Diff == "full" {
		// Ignored fields leave the unified diff too: the new side gets their old values.
		var ignored []diff.Change
		for _, c := range u.changes {
			if c.Ignored {
				ignored = append(ignored, c)
			}
		}
		if len(ignored) > 0 {
			cur = diff.Revert(cur, ignored)
		}
		if secret {
			old, cur = redactPair(old, cur)
		}
		text, err := diff.Unified(old, cur, "rv="+ev.Obj.OldResourceVersion, "rv="+ev.ResourceVersion)
		if err != nil {
			text = "(no diff: " + err.Error() + ")"
		}
		u.unified = text
	}
	return u
}

// redactPair redacts two versions of a Secret so that a value that changed still shows as
// changed in a diff of the two, even when its length did not: the new one says ", changed".
func redactPair(old, cur map[string]any) (map[string]any, map[string]any) {
	ro, rc := redactSecret(old), redactSecret(cur)
	for _, field := range []string{"data", "stringData"} {
		om, _ := old[field].(map[string]any)
		cm, _ := cur[field].(map[string]any)
		rm, _ := rc[field].(map[string]any)
		for k, v := range cm {
			if ov, ok := om[k]; ok && !reflect.DeepEqual(ov, v) {
				rm[k] = changedRedaction(v)
			}
		}
	}
	oa := annotation(old, lastAppliedAnnotation)
	if ca := annotation(cur, lastAppliedAnnotation); oa != nil && ca != nil && !reflect.DeepEqual(oa, ca) {
		md := rc["metadata"].(map[string]any)
		md["annotations"].(map[string]any)[lastAppliedAnnotation] = changedRedaction(ca)
	}
	return ro, rc
}

func changedRedaction(v any) string {
	return strings.TrimSuffix(redactedValue(v), ">") + ", changed>"
}

func annotation(obj map[string]any, key string) any {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	return ann[key]
}

// changeRecord is one changed field in the JSON contract: old is absent when the field was
// added, new when it was removed; null is a value.
type changeRecord struct {
	Path string          `json:"path"`
	Old  json.RawMessage `json:"old,omitempty"`
	New  json.RawMessage `json:"new,omitempty"`
	// Ignored: the field is under an --ignore-path (human output leaves it out).
	Ignored bool `json:"ignored,omitempty"`
}

func (p *Printer) changeRecords(changes []diff.Change) []changeRecord {
	out := make([]changeRecord, 0, len(changes))
	for _, c := range changes {
		r := changeRecord{Path: c.Path, Ignored: c.Ignored}
		if c.HasOld {
			r.Old = rawValue(c.Old, c.Sensitive)
		}
		if c.HasNew {
			r.New = rawValue(c.New, c.Sensitive)
		}
		out = append(out, r)
	}
	return out
}

func rawValue(v any, sensitive bool) json.RawMessage {
	if sensitive {
		v = redactedValue(v)
	}
	b, err := marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// marshal is json.Marshal without HTML escaping (<redacted> stays readable), no newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Limits of the human diff.
const (
	inlineMaxChanges = 3   // more changes than this go under the line
	inlineMaxWidth   = 100 // and so do changes longer than this together
	valueMaxRunes    = 80  // a longer value is cut, with …
	blockMaxLines    = 50  // lines under one event; the rest are counted
)

// humanChanges renders the changes inline (a few short ones) or as lines under the event's line.
func (p *Printer) humanChanges(u *updateInfo) (inline string, block []string) {
	if p.opts.Diff == "full" {
		if u.unified == "" {
			return p.paint(colorDim, "(no field changed)"), nil
		}
		for _, l := range strings.Split(u.unified, "\n") {
			color := ""
			switch {
			case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
				color = colorDim
			case strings.HasPrefix(l, "@@"):
				color = colorCyan
			case strings.HasPrefix(l, "-"):
				color = colorRed
			case strings.HasPrefix(l, "+"):
				color = colorGreen
			}
			block = append(block, p.paint(color, Escape(l)))
		}
		return "", capBlock(block)
	}
	if len(u.changes) == 0 {
		return p.paint(colorDim, "(no field changed)"), nil
	}
	// Ignored fields leave the diff; a count says they were there.
	changes := make([]diff.Change, 0, len(u.changes))
	for _, c := range u.changes {
		if !c.Ignored {
			changes = append(changes, c)
		}
	}
	ignored := ""
	if n := len(u.changes) - len(changes); n > 0 {
		ignored = p.paint(colorDim, fmt.Sprintf("(+%d ignored)", n))
		if len(changes) == 0 {
			return ignored, nil
		}
	}
	plain := make([]string, len(changes))
	colored := make([]string, len(changes))
	width := 0
	for i, c := range changes {
		path := Escape(c.Path)
		o, n := humanValue(c.Old, c.HasOld, c.Sensitive), humanValue(c.New, c.HasNew, c.Sensitive)
		plain[i] = path + ": " + o + " → " + n
		colored[i] = path + ": " + p.paint(colorRed, o) + " → " + p.paint(colorGreen, n)
		width += utf8.RuneCountInString(plain[i]) + 2
	}
	if ignored != "" {
		colored = append(colored, ignored)
	}
	if len(changes) <= inlineMaxChanges && width <= inlineMaxWidth {
		return strings.Join(colored, "; "), nil
	}
	return "", capBlock(colored)
}

func capBlock(lines []string) []string {
	if len(lines) <= blockMaxLines {
		return lines
	}
	more := len(lines) - blockMaxLines
	return append(lines[:blockMaxLines:blockMaxLines], fmt.Sprintf("… %d more lines", more))
}

// humanValue is a value as compact JSON (strings quoted), cut when long, escaped for a terminal;
// "(none)" when absent; Secret values redacted.
func humanValue(v any, present, sensitive bool) string {
	if !present {
		return "(none)"
	}
	if sensitive {
		return redactedValue(v)
	}
	b, err := marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprint(v)
	}
	if utf8.RuneCountInString(s) > valueMaxRunes {
		s = abridge(v, s)
	}
	return Escape(s)
}

// abridge says what a value too long for a line is instead of cutting it mid-way: a list as its
// length and its elements' keys (`[3 items: type=Initialized, type=Ready, …]`), a map as its
// scalar fields (`{status=True, type=Ready}`); anything else cut with …. --diff=full shows it
// whole.
func abridge(v any, s string) string {
	cut := func(s string, n int) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n-1]) + "…"
		}
		return s
	}
	switch x := v.(type) {
	case []any:
		head := fmt.Sprintf("[%d items", len(x))
		if len(x) == 1 {
			head = "[1 item"
		}
		var names []string
		if key := diff.MergeKey(x); key != "" {
			for _, e := range x {
				names = append(names, fmt.Sprintf("%s=%v", key, e.(map[string]any)[key]))
			}
		}
		if len(names) == 0 {
			return head + "]"
		}
		return cut(head+": "+strings.Join(names, ", "), valueMaxRunes-1) + "]"
	case map[string]any:
		// key=value for its scalars (nulls left out), {…} or […] for what is nested.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			switch v := x[k].(type) {
			case nil:
			case map[string]any:
				parts = append(parts, k+"={…}")
			case []any:
				parts = append(parts, k+"=[…]")
			default:
				parts = append(parts, fmt.Sprintf("%s=%v", k, v))
			}
		}
		return cut("{"+strings.Join(parts, ", "), valueMaxRunes-1) + "}"
	}
	return cut(s, valueMaxRunes)
}

// wideDetail adds -o wide's columns: generation/observedGeneration, the controller owner, the
// kind's own columns, labels.
func (p *Printer) wideDetail(b *strings.Builder, ev *watch.Event) {
	obj := ev.Materialize()
	if obj == nil || obj.Object == nil {
		return
	}
	o := obj.Object
	md, _ := o["metadata"].(map[string]any)
	if gen, ok := md["generation"]; ok {
		fmt.Fprintf(b, "  gen=%v", gen)
		if st, _ := o["status"].(map[string]any); st != nil {
			if og, ok := st["observedGeneration"]; ok {
				fmt.Fprintf(b, "/%v", og)
			}
		}
	}
	if refs, _ := md["ownerReferences"].([]any); len(refs) > 0 {
		for _, r := range refs {
			ref, _ := r.(map[string]any)
			if c, _ := ref["controller"].(bool); c {
				fmt.Fprintf(b, "  owner=%s", Escape(fmt.Sprintf("%v/%v", ref["kind"], ref["name"])))
				break
			}
		}
	}
	p.kindColumns(b, ev)
	if labels, _ := md["labels"].(map[string]any); len(labels) > 0 {
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%v", k, labels[k])
		}
		b.WriteString("  labels=")
		b.WriteString(Escape(strings.Join(parts, ",")))
	}
}
