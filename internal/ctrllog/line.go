// Package ctrllog reads a running controller's own log: it detects the format of each line
// (controller-runtime's zap JSON and console encoders, klog text, klog/component-base JSON),
// rebuilds the controller's reconciles from it, and joins each reconcile to the watched events
// that caused it (Join). Lines that are not part of a reconcile are counted, never fatal.
package ctrllog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Format names a log line's encoding.
type Format string

// Formats a line may be in.
const (
	FormatZapJSON    Format = "zap-json"    // controller-runtime, zap's JSON encoder (production)
	FormatZapConsole Format = "zap-console" // controller-runtime, zap's console encoder (--zap-devel)
	FormatKlogText   Format = "klog-text"   // klog's text format (client-go controllers, kube-controller-manager)
	FormatKlogJSON   Format = "klog-json"   // component-base's JSON format (--logging-format=json)
)

// Line is one parsed log line.
type Line struct {
	Format Format
	Time   time.Time
	// Precise: the timestamp has sub-second digits (zap's default RFC 3339 encoder has none).
	Precise bool
	// Error: the line is at error level (zap "error", klog E/F).
	Error  bool
	Logger string
	Msg    string
	// Fields are the line's key/value pairs: JSON values as decoded (objects are
	// map[string]any), klog text values as strings.
	Fields map[string]any
}

// Str returns the field key as a string ("" when absent; numbers formatted).
func (l *Line) Str(key string) string {
	switch v := l.Fields[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// ParseLine parses one line (without its newline) in any of the formats; ok is false for a line
// in none of them (a stack trace, a panic, plain text). year is the year klog text lines are in
// (klog's header has none).
func ParseLine(b []byte, year int) (Line, bool) {
	b = bytes.TrimRight(b, "\r")
	// A controller run under a supervisor may prefix lines (kubectl logs --prefix, make's
	// output): the format starts at the first '{' only when the line is JSON at all.
	if len(b) == 0 {
		return Line{}, false
	}
	switch {
	case b[0] == '{':
		return parseJSON(b)
	case isKlogHeader(b):
		return parseKlogText(b, year)
	case b[0] >= '0' && b[0] <= '9':
		return parseConsole(b)
	}
	return Line{}, false
}

// parseJSON parses a zap JSON or component-base JSON line.
func parseJSON(b []byte) (Line, bool) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&m); err != nil || m == nil {
		return Line{}, false
	}
	l := Line{Fields: m}
	l.Msg, _ = m["msg"].(string)
	if l.Msg == "" {
		if _, has := m["msg"]; !has {
			return Line{}, false
		}
	}
	l.Logger, _ = m["logger"].(string)
	if lvl, ok := m["level"].(string); ok {
		l.Format = FormatZapJSON
		l.Error = lvl == "error" || lvl == "dpanic" || lvl == "panic" || lvl == "fatal"
	} else {
		l.Format = FormatKlogJSON
		// component-base writes "v" on info lines only; an error line has "err" and no "v".
		_, info := m["v"]
		l.Error = !info
	}
	switch ts := m["ts"].(type) {
	case string:
		l.Time, l.Precise = parseTextTime(ts)
	case float64:
		l.Time, l.Precise = epochTime(ts), true
	}
	if l.Time.IsZero() {
		if ts, ok := m["time"].(string); ok {
			l.Time, l.Precise = parseTextTime(ts)
		}
	}
	return l, true
}

// epochTime reads a number as seconds (zap's epoch encoders), milliseconds (component-base) or
// nanoseconds since the epoch, by its size.
func epochTime(v float64) time.Time {
	switch {
	case v > 1e17:
		return time.Unix(0, int64(v)).UTC()
	case v > 1e11:
		return time.UnixMicro(int64(v * 1e3)).UTC()
	default:
		sec := int64(v)
		return time.Unix(sec, int64((v-float64(sec))*1e9)).UTC()
	}
}

// textTimeLayouts are the text timestamps of zap's encoders (RFC 3339, RFC 3339 nano,
// ISO 8601 with milliseconds and a numeric zone).
var textTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05.999999999Z07:00"}

// parseTextTime parses a text timestamp; precise when it has a fraction of a second.
func parseTextTime(s string) (time.Time, bool) {
	for _, layout := range textTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, strings.Contains(s, ".")
		}
	}
	// An epoch number written as a string.
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 1e8 {
		return epochTime(f), true
	}
	return time.Time{}, false
}

// parseConsole parses a zap console line: TIME \t LEVEL \t [LOGGER \t] [CALLER \t] MSG [\t {JSON}].
func parseConsole(b []byte) (Line, bool) {
	parts := strings.Split(string(b), "\t")
	if len(parts) < 3 {
		return Line{}, false
	}
	t, precise := parseTextTime(parts[0])
	if t.IsZero() {
		return Line{}, false
	}
	lvl := parts[1]
	if !isConsoleLevel(lvl) {
		return Line{}, false
	}
	l := Line{Format: FormatZapConsole, Time: t, Precise: precise, Fields: map[string]any{}}
	l.Error = lvl == "ERROR" || lvl == "DPANIC" || lvl == "PANIC" || lvl == "FATAL"
	rest := parts[2:]
	if last := rest[len(rest)-1]; len(rest) > 1 && strings.HasPrefix(last, "{") {
		d := json.NewDecoder(strings.NewReader(last))
		if err := d.Decode(&l.Fields); err != nil {
			return Line{}, false
		}
		rest = rest[:len(rest)-1]
	}
	// What is left: [logger] [caller] msg; a caller is file.go:123.
	l.Msg = rest[len(rest)-1]
	for _, p := range rest[:len(rest)-1] {
		if !isCaller(p) && l.Logger == "" {
			l.Logger = p
		}
	}
	return l, true
}

func isConsoleLevel(s string) bool {
	switch s {
	case "DEBUG", "INFO", "WARN", "ERROR", "DPANIC", "PANIC", "FATAL":
		return true
	}
	return strings.HasPrefix(s, "LEVEL(") || strings.HasPrefix(s, "Level(")
}

func isCaller(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || !strings.HasSuffix(s[:i], ".go") {
		return false
	}
	_, err := strconv.Atoi(s[i+1:])
	return err == nil
}
