package diff

import (
	"fmt"
	"strconv"
	"strings"
)

// Pattern is a field path in the syntax of Change.Path, with wildcards: `*` for any map key
// (`metadata.annotations.*`), `[*]` for any list element or map key
// (`status.conditions[*].lastHeartbeatTime`). ParsePattern makes one.
type Pattern struct {
	text string
	segs []patternSeg
}

type patternSeg struct {
	kind  byte   // 'k' map key, 'e' keyed element, 'i' index, '*' any key (after a dot), '?' any ([*])
	key   string // map key, or an element's merge key
	value string // a keyed element's value, as elemSegment prints it unquoted
	index int
}

// String is the pattern as given.
func (p Pattern) String() string { return p.text }

// ParsePattern parses a path as --diff prints them (`spec.replicas`,
// `metadata.labels["app.kubernetes.io/name"]`, `spec.template.spec.containers[name=web].image`,
// `spec.args[0]`), where `*` may stand for a map key and `[*]` for a list element or map key.
func ParsePattern(s string) (Pattern, error) {
	p := Pattern{text: s}
	fail := func(i int, what string) (Pattern, error) {
		return Pattern{}, fmt.Errorf("invalid path %q: %s at offset %d", s, what, i)
	}
	if s == "" {
		return Pattern{}, fmt.Errorf("invalid path %q: empty", s)
	}
	i := 0
	first := true
	for i < len(s) {
		switch {
		case s[i] == '[':
			end, seg, err := parseBracket(s, i)
			if err != nil {
				return fail(i, err.Error())
			}
			p.segs = append(p.segs, seg)
			i = end
		case s[i] == '.' || first:
			if !first {
				i++
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			key := s[i:j]
			switch {
			case key == "*":
				p.segs = append(p.segs, patternSeg{kind: '*'})
			case key == "":
				return fail(i, "empty field name")
			case !plainKey.MatchString(key):
				return fail(i, fmt.Sprintf(`field name %q is not a plain name (quote a key with dots or slashes in brackets, as in metadata.labels["app.kubernetes.io/name"])`, key))
			default:
				p.segs = append(p.segs, patternSeg{kind: 'k', key: key})
			}
			i = j
		default:
			return fail(i, fmt.Sprintf("unexpected %q", s[i]))
		}
		first = false
	}
	return p, nil
}

// parseBracket parses the segment `[...]` starting at s[i] and returns the offset after it.
func parseBracket(s string, i int) (int, patternSeg, error) {
	rest := s[i+1:]
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return 0, patternSeg{}, fmt.Errorf("unterminated quoted key")
		}
		key, _ := strconv.Unquote(q)
		if !strings.HasPrefix(rest[len(q):], "]") {
			return 0, patternSeg{}, fmt.Errorf("missing ] after the quoted key")
		}
		return i + 1 + len(q) + 1, patternSeg{kind: 'k', key: key}, nil
	}
	// key=value, where a quoted value may hold ].
	if k, v, ok := strings.Cut(rest, "="); ok && !strings.Contains(k, "]") {
		if !plainKey.MatchString(k) {
			return 0, patternSeg{}, fmt.Errorf("merge key %q is not a field name", k)
		}
		if strings.HasPrefix(v, `"`) {
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return 0, patternSeg{}, fmt.Errorf("unterminated quoted value")
			}
			if !strings.HasPrefix(v[len(q):], "]") {
				return 0, patternSeg{}, fmt.Errorf("missing ] after the quoted value")
			}
			val, _ := strconv.Unquote(q)
			return i + 1 + len(k) + 1 + len(q) + 1, patternSeg{kind: 'e', key: k, value: val}, nil
		}
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return 0, patternSeg{}, fmt.Errorf("unclosed [")
		}
		if end == 0 {
			return 0, patternSeg{}, fmt.Errorf("empty value of %s=", k)
		}
		return i + 1 + len(k) + 1 + end + 1, patternSeg{kind: 'e', key: k, value: v[:end]}, nil
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return 0, patternSeg{}, fmt.Errorf("unclosed [")
	}
	inner := rest[:end]
	if inner == "*" {
		return i + end + 2, patternSeg{kind: '?'}, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil || n < 0 {
		return 0, patternSeg{}, fmt.Errorf(`[%s] is neither an index, *, a quoted key ["k"] nor an element [key=value]`, inner)
	}
	return i + end + 2, patternSeg{kind: 'i', index: n}, nil
}

// matchSeg reports whether one pattern segment names one path segment.
func (ps patternSeg) matches(s segment) bool {
	switch ps.kind {
	case '?':
		return true
	case '*':
		return s.kind == 'k'
	case 'k':
		return s.kind == 'k' && s.key == ps.key
	case 'i':
		return s.kind == 'i' && s.index == ps.index
	case 'e':
		return s.kind == 'e' && s.key == ps.key && fmt.Sprint(s.value) == ps.value
	}
	return false
}

// Covers reports whether c is at or under the path: the pattern names c's field or one of the
// maps or lists holding it. `status` covers `status.conditions[type=Ready].lastHeartbeatTime`.
func (p Pattern) Covers(c Change) bool {
	if len(p.segs) > len(c.segs) {
		return false
	}
	for i, ps := range p.segs {
		if !ps.matches(c.segs[i]) {
			return false
		}
	}
	return true
}

// Touches reports whether c changed the path: c is at or under it (Covers), or c replaced a
// map or list element holding it (an added condition touches `status.conditions[*].status`).
func (p Pattern) Touches(c Change) bool {
	n := min(len(p.segs), len(c.segs))
	for i := range n {
		if !p.segs[i].matches(c.segs[i]) {
			return false
		}
	}
	return true
}

// Revert returns a copy of cur with the given changes undone (each field set back to its old
// value, or removed when it had none), so that a diff of old and the copy leaves them out. A
// change whose place cannot be found in cur (its list element is gone) stays.
func Revert(cur map[string]any, changes []Change) map[string]any {
	out, _ := deepCopy(cur).(map[string]any)
	for _, c := range changes {
		if len(c.segs) == 0 {
			continue
		}
		var parent any = out
		for _, s := range c.segs[:len(c.segs)-1] {
			if parent = child(parent, s); parent == nil {
				break
			}
		}
		last := c.segs[len(c.segs)-1]
		switch p := parent.(type) {
		case map[string]any:
			if last.kind != 'k' {
				continue
			}
			if c.HasOld {
				p[last.key] = deepCopy(c.Old)
			} else {
				delete(p, last.key)
			}
		case []any:
			if i := elemIndex(p, last); i >= 0 && c.HasOld {
				p[i] = deepCopy(c.Old)
			}
		}
	}
	return out
}

// child is the value a segment names in v, or nil.
func child(v any, s segment) any {
	switch x := v.(type) {
	case map[string]any:
		if s.kind == 'k' {
			return x[s.key]
		}
	case []any:
		if i := elemIndex(x, s); i >= 0 {
			return x[i]
		}
	}
	return nil
}

// elemIndex finds the list element a segment names: by index, or by its merge key's value.
func elemIndex(l []any, s segment) int {
	switch s.kind {
	case 'i':
		if s.index < len(l) {
			return s.index
		}
	case 'e':
		for i, e := range l {
			if m, ok := e.(map[string]any); ok && equal(m[s.key], s.value) {
				return i
			}
		}
	}
	return -1
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}
