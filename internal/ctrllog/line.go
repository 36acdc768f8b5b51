// Package ctrllog reads a running controller's own log: it detects the format of each line
// (controller-runtime's zap JSON and console encoders, klog text, klog/component-base JSON, any
// other JSON or logfmt logger's, its keys found or named),
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
	FormatJSON       Format = "json"        // another JSON logger's (zap configured otherwise, logrus, slog, ...): keys found or named
	FormatLogfmt     Format = "logfmt"      // key=value lines (logrus's text formatter, go-kit, slog's TextHandler)
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
	l, ok := parseLine(b, year, nil)
	if !ok {
		return Line{}, false
	}
	return l, true
}

// parseLine is ParseLine with the keys --controller-log-keys names. A JSON or logfmt line it
// does not take (no message under any key) comes back with its Fields, for the diagnosis.
func parseLine(b []byte, year int, keys *Keys) (Line, bool) {
	b = bytes.TrimRight(b, "\r")
	if len(b) == 0 {
		return Line{}, false
	}
	switch {
	case b[0] == '{':
		return parseJSON(b, keys)
	case isKlogHeader(b):
		return parseKlogText(b, year)
	case b[0] >= '0' && b[0] <= '9':
		return parseConsole(b)
	case isKeyStart(b[0]):
		return parseLogfmt(b, keys)
	}
	return Line{}, false
}

// parseJSON parses a JSON line: zap's (controller-runtime), component-base's (klog), or any
// other logger's whose keys are found (keys.go) or named.
func parseJSON(b []byte, keys *Keys) (Line, bool) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&m); err != nil || m == nil {
		return Line{}, false
	}
	return structured(m, true, keys)
}

// parseLogfmt parses a logfmt line (key=value pairs, values quoted when they hold a space:
// logrus's text formatter, go-kit, slog's TextHandler).
func parseLogfmt(b []byte, keys *Keys) (Line, bool) {
	m := map[string]any{}
	parseKV(string(b), m)
	if len(m) == 0 {
		return Line{}, false
	}
	return structured(m, false, keys)
}

func isKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '@'
}

// structured reads the parts of a JSON or logfmt line from its keys: the message (a line
// without one is not taken), the level, the time, the logger; then the keys the
// reconstruction reads are filled from other spellings (normalize).
func structured(m map[string]any, isJSON bool, keys *Keys) (Line, bool) {
	var named Keys
	if keys != nil {
		named = *keys
	}
	l := Line{Fields: m, Format: FormatLogfmt}
	if isJSON {
		l.Format = FormatJSON
	}
	msgKey, mv := firstKey(m, named.Message, messageKeys)
	msg, isStr := mv.(string)
	if msgKey == "" || !isStr {
		return l, false
	}
	l.Msg = msg
	levelKey, lv := firstKey(m, named.Level, levelKeys)
	_, levelName := lv.(string)
	switch {
	case isJSON && msgKey == "msg" && levelKey == "level" && levelName:
		l.Format = FormatZapJSON
	case isJSON && msgKey == "msg" && levelKey == "":
		l.Format = FormatKlogJSON
	}
	if l.Format == FormatKlogJSON {
		// component-base writes "v" on info lines only; an error line has "err" and no "v".
		_, info := m["v"]
		l.Error = !info
	} else {
		l.Error = isErrorLevel(lv)
	}
	l.Time, l.Precise = timeOf(m, named.Time)
	_, lg := firstKey(m, named.Logger, loggerKeys)
	l.Logger, _ = lg.(string)
	normalize(m, keys)
	return l, true
}

// timeOf reads the line's time from the first of its time keys that holds one: RFC 3339 (or
// ISO 8601) text, or a number of seconds, milliseconds or nanoseconds since the epoch.
func timeOf(m map[string]any, named string) (time.Time, bool) {
	keys := timeKeys
	if named != "" {
		keys = append([]string{named}, timeKeys...)
	}
	for _, k := range keys {
		v, ok := lookup(m, k)
		if !ok {
			continue
		}
		switch ts := v.(type) {
		case string:
			if t, precise := parseTextTime(ts); !t.IsZero() {
				return t, precise
			}
		case float64:
			return epochTime(ts), true
		}
	}
	return time.Time{}, false
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
