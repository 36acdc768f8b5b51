package ctrllog

import (
	"strconv"
	"strings"
	"time"
)

// isKlogHeader reports whether b starts like a klog text line: Lmmdd hh:mm:ss.uuuuuu.
func isKlogHeader(b []byte) bool {
	if len(b) < 21 || !strings.ContainsRune("IWEF", rune(b[0])) {
		return false
	}
	for i, c := range b[1:21] {
		switch i + 1 {
		case 5:
			if c != ' ' {
				return false
			}
		case 8, 11:
			if c != ':' {
				return false
			}
		case 14:
			if c != '.' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// parseKlogText parses `Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg k=v ...`: a structured
// line's message is quoted, an unstructured one is the rest of the line.
func parseKlogText(b []byte, year int) (Line, bool) {
	s := string(b)
	t, err := time.Parse("0102 15:04:05.000000", s[1:21])
	if err != nil {
		return Line{}, false
	}
	t = time.Date(year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.Local)
	end := strings.Index(s, "] ")
	if end < 0 {
		return Line{}, false
	}
	l := Line{Format: FormatKlogText, Time: t, Precise: true, Error: s[0] == 'E' || s[0] == 'F', Fields: map[string]any{}}
	rest := s[end+2:]
	if !strings.HasPrefix(rest, `"`) {
		l.Msg = rest
		return l, true
	}
	msg, n, ok := unquotePrefix(rest)
	if !ok {
		l.Msg = rest
		return l, true
	}
	l.Msg = msg
	parseKV(rest[n:], l.Fields)
	l.Logger = l.Str("logger")
	return l, true
}

// unquotePrefix reads the Go-quoted string s starts with; n is its length in s.
func unquotePrefix(s string) (string, int, bool) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			v, err := strconv.Unquote(s[:i+1])
			return v, i + 1, err == nil
		}
	}
	return "", 0, false
}

// parseKV reads klog's ` key=value` pairs: a value is Go-quoted, or runs to the next space (a
// multi-line value, `key=<`, continues on lines of its own, which are not parsed).
func parseKV(s string, into map[string]any) {
	for {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.ContainsRune(s[:eq], ' ') {
			return
		}
		key, v := s[:eq], s[eq+1:]
		if strings.HasPrefix(v, `"`) {
			val, n, ok := unquotePrefix(v)
			if !ok {
				return
			}
			into[key] = val
			s = v[n:]
			continue
		}
		sp := strings.IndexByte(v, ' ')
		if sp < 0 {
			sp = len(v)
		}
		into[key] = v[:sp]
		s = v[sp:]
	}
}
