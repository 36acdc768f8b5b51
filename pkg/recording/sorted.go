package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// EncodeObject encodes a typed object (a built-in Go type) as the line's object: the JSON
// encoding/json writes for the unstructured map DefaultUnstructuredConverter makes of it, keys
// sorted at every level, without building the map. The struct is encoded, then every object's
// members are sorted by key; what the map would have written otherwise (raw JSON of a
// json.Marshaler, such as managedFields' fieldsV1) is rewritten as the map would write it:
// escapes normalized, numbers as int64 or float64 print. It writes those bytes in one pass
// (sortenc.go: struct fields in their names' order, encoding/json and SortKeys only for the
// values they write best), and takes the two passes for an object the one pass gives up on.
func EncodeObject(o any) ([]byte, error) {
	if b, err := encodeSorted(o); err == nil {
		return b, nil
	}
	return encodeTwoPasses(o)
}

// encodeTwoPasses is EncodeObject as encoding/json and SortKeys.
func encodeTwoPasses(o any) ([]byte, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	return SortKeys(b)
}

// SortKeys rewrites compact JSON (as encoding/json writes it) with every object's keys sorted
// and strings and numbers as encoding/json writes them from a decoded map[string]any (numbers
// decoded as int64 when integral, else float64).
func SortKeys(b []byte) ([]byte, error) {
	s := sorter{in: b, out: make([]byte, 0, len(b))}
	if err := s.value(); err != nil {
		return nil, err
	}
	if s.pos != len(b) {
		return nil, errSortSyntax
	}
	return s.out, nil
}

var errSortSyntax = errors.New("sorting JSON keys: unexpected input")

type sorter struct {
	in  []byte
	pos int
	out []byte
	// free holds members slices for reuse by nested objects; scratch is the copy an unsorted
	// object is rewritten from.
	free    [][]member
	scratch []byte
}

// value copies one JSON value at pos to out.
func (s *sorter) value() error {
	if s.pos >= len(s.in) {
		return errSortSyntax
	}
	switch s.in[s.pos] {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		str, err := s.str()
		s.out = append(s.out, str...)
		return err
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.in[s.pos:], []byte(lit)) {
				s.out = append(s.out, lit...)
				s.pos += len(lit)
				return nil
			}
		}
		return errSortSyntax
	default:
		return s.number()
	}
}

// str returns the string token at pos as encoding/json writes the string it holds.
func (s *sorter) str() ([]byte, error) {
	start := s.pos
	escaped := false
	for i := start + 1; i < len(s.in); i++ {
		switch s.in[i] {
		case '\\':
			// encoding/json's own escapes stay; any other is rewritten as it would write it.
			if i+1 < len(s.in) && bytes.IndexByte([]byte(`"\\nrt`), s.in[i+1]) < 0 {
				escaped = true
			}
			i++
		case '"':
			s.pos = i + 1
			tok := s.in[start:s.pos]
			// Invalid UTF-8 is written as U+FFFD from a map.
			if !escaped && (!hasNonASCII(tok) || utf8.Valid(tok)) {
				return tok, nil
			}
			var v string
			if err := json.Unmarshal(tok, &v); err != nil {
				return nil, err
			}
			return json.Marshal(v)
		}
	}
	return nil, errSortSyntax
}

// number copies the number at pos as encoding/json writes an int64 or, when it is not one, a
// float64.
func (s *sorter) number() error {
	start := s.pos
	for s.pos < len(s.in) && bytes.IndexByte([]byte("+-0123456789.eE"), s.in[s.pos]) >= 0 {
		s.pos++
	}
	tok := s.in[start:s.pos]
	if len(tok) == 0 {
		return errSortSyntax
	}
	if plainInt(tok) {
		s.out = append(s.out, tok...)
		return nil
	}
	if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
		s.out = strconv.AppendInt(s.out, n, 10)
		return nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	s.out = append(s.out, b...)
	return nil
}

func (s *sorter) array() error {
	s.pos++
	s.out = append(s.out, '[')
	for first := true; ; first = false {
		if s.pos >= len(s.in) {
			return errSortSyntax
		}
		if s.in[s.pos] == ']' {
			s.pos++
			s.out = append(s.out, ']')
			return nil
		}
		if !first {
			if s.in[s.pos] != ',' {
				return errSortSyntax
			}
			s.pos++
			s.out = append(s.out, ',')
		}
		if err := s.value(); err != nil {
			return err
		}
	}
}

// member is one key and where its `"key":value` was written in out.
type member struct {
	key        []byte
	start, end int
}

// object copies the object at pos with its members sorted: they are written in their order,
// then rewritten sorted (encoding/json sorts a map's keys as strings; a struct never repeats
// one).
func (s *sorter) object() error {
	s.pos++
	s.out = append(s.out, '{')
	begin := len(s.out)
	var members []member
	if n := len(s.free); n > 0 {
		members, s.free = s.free[n-1][:0], s.free[:n-1]
	}
	defer func() { s.free = append(s.free, members) }()
	for first := true; ; first = false {
		if s.pos >= len(s.in) {
			return errSortSyntax
		}
		if s.in[s.pos] == '}' {
			s.pos++
			break
		}
		if !first {
			if s.in[s.pos] != ',' {
				return errSortSyntax
			}
			s.pos++
			s.out = append(s.out, ',')
		}
		m, err := s.member()
		if err != nil {
			return err
		}
		members = append(members, m)
	}
	less := func(a, b member) int { return bytes.Compare(a.key, b.key) }
	if !strictlySorted(members) {
		// Sorted, and of a key given twice (raw JSON may) the last value, as a map keeps it.
		slices.SortStableFunc(members, less)
		s.scratch = append(s.scratch[:0], s.out[begin:]...)
		written := s.scratch
		s.out = s.out[:begin]
		for i, m := range members {
			if i+1 < len(members) && bytes.Equal(m.key, members[i+1].key) {
				continue
			}
			if len(s.out) > begin {
				s.out = append(s.out, ',')
			}
			s.out = append(s.out, written[m.start-begin:m.end-begin]...)
		}
	}
	s.out = append(s.out, '}')
	return nil
}

// member copies `"key":value` at pos to out, and says where.
func (s *sorter) member() (member, error) {
	if s.pos >= len(s.in) || s.in[s.pos] != '"' {
		return member{}, errSortSyntax
	}
	begin := len(s.out)
	m := member{}
	quoted, err := s.str()
	if err != nil {
		return m, err
	}
	if m.key, err = unquote(quoted); err != nil {
		return m, err
	}
	if s.pos >= len(s.in) || s.in[s.pos] != ':' {
		return m, errSortSyntax
	}
	s.pos++
	s.out = append(s.out, quoted...)
	s.out = append(s.out, ':')
	err = s.value()
	// Offsets from the object's first member: the object is rewritten from a copy of them.
	m.start, m.end = begin, len(s.out)
	return m, err
}

func strictlySorted(members []member) bool {
	for i := 1; i < len(members); i++ {
		if bytes.Compare(members[i-1].key, members[i].key) >= 0 {
			return false
		}
	}
	return true
}

// plainInt reports whether tok is an integer an int64 holds and prints the same: digits, no
// leading zero, not -0, at most 18 of them.
func plainInt(tok []byte) bool {
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(tok) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// unquote is the string a string token holds, as bytes: the token's own when it has no
// escape, the simple escapes undone by hand, others by encoding/json.
func unquote(quoted []byte) ([]byte, error) {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	out := make([]byte, 0, len(inner))
	for i := 0; i < len(inner); i++ {
		c := inner[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i >= len(inner) {
			return nil, errSortSyntax
		}
		switch inner[i] {
		case '"', '\\', '/':
			out = append(out, inner[i])
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			var v string
			if err := json.Unmarshal(quoted, &v); err != nil {
				return nil, err
			}
			return []byte(v), nil
		}
	}
	return out, nil
}
