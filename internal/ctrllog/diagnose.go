package ctrllog

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// SilentAfter is how long after its first line a log that shows no reconcile is said to show
// none (Reconstructor.Silent).
const SilentAfter = 3 * time.Second

// maxKeysNoted bounds the distinct keys a diagnosis keeps.
const maxKeysNoted = 48

// diagnosis is what a log showed, for saying why it shows no reconcile.
type diagnosis struct {
	first time.Time // when its first line was read
	said  bool
	// keys of its JSON and logfmt lines; noMessage: those lines with no message key.
	keys      map[string]int
	noMessage int
	// structured lines, and those with a controller key, with a reconcileID.
	structured, withController, withID int
	// other: the first line in no format, shortened.
	other string
}

// note takes one line as parsed.
func (d *diagnosis) note(l *Line, ok bool, b []byte, now time.Time) {
	if d.first.IsZero() {
		d.first = now
	}
	if d.said {
		return
	}
	if l.Format == FormatJSON || l.Format == FormatLogfmt || l.Format == FormatZapJSON || l.Format == FormatKlogJSON {
		d.structured++
		if d.keys == nil {
			d.keys = map[string]int{}
		}
		for k := range l.Fields {
			if _, kept := d.keys[k]; kept || len(d.keys) < maxKeysNoted {
				d.keys[k]++
			}
		}
		if !ok {
			d.noMessage++
			return
		}
	}
	if !ok {
		if d.other == "" && len(b) > 0 {
			d.other = shorten(string(b), 80)
		}
		return
	}
	if l.Str("controller") != "" {
		d.withController++
	}
	if l.Str("reconcileID") != "" {
		d.withID++
	}
}

// shorten cuts s to about n bytes, on a rune boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// Silent says, once, that the log shows no reconcile SilentAfter after its first line was
// read (by now): what it read, the keys it found and what a reconcile needs. "" otherwise.
func (r *Reconstructor) Silent(now time.Time) string {
	d := &r.diag
	if d.said || d.first.IsZero() || now.Sub(d.first) < SilentAfter {
		return ""
	}
	d.said = true
	if r.Stats.Reconciles > 0 || len(r.pending) > 0 {
		return ""
	}
	for _, rec := range r.open {
		if rec.Object.Name != "" {
			return "" // one is running
		}
	}
	return r.silence()
}

// silence is the diagnosis of a log that shows no reconcile.
func (r *Reconstructor) silence() string {
	d := &r.diag
	var b strings.Builder
	fmt.Fprintf(&b, "controller log %s: no reconcile in its %d lines read so far", r.Source, r.Stats.Lines)
	var parsed []string
	for _, f := range []Format{FormatZapJSON, FormatZapConsole, FormatKlogText, FormatKlogJSON, FormatJSON, FormatLogfmt} {
		if n := r.Stats.ByFormat[f]; n > 0 {
			parsed = append(parsed, fmt.Sprintf("%d %s", n, f))
		}
	}
	if len(parsed) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(parsed, ", "))
	}
	switch {
	case d.noMessage > 0 && d.noMessage*2 >= d.structured:
		fmt.Fprintf(&b, ": %d of its structured lines have no message under any key looked for (%s); their keys: %s; name the message's key with --controller-log-keys message=KEY",
			d.noMessage, strings.Join(messageKeys, ", "), keyList(d.keys, 20))
	case r.Stats.Other == r.Stats.Lines:
		fmt.Fprintf(&b, ": none is in a format known (zap JSON or console, klog text or JSON, another logger's JSON or logfmt with a message under %s), e.g. %q",
			strings.Join(messageKeys[:2], " or "), d.other)
	case d.withID == 0:
		b.WriteString(": no line carries a reconcileID (looked for " + strings.Join(reconcileIDs, ", ") + ")")
		if len(d.keys) > 0 {
			b.WriteString("; its keys: " + keyList(d.keys, 20))
		}
		b.WriteString("; nor a klog sync line (\"Successfully synced\", \"Finished syncing\"). controller-runtime puts a reconcileID on every line logged inside a reconcile: at info level a reconcile that logs nothing does not show (its metrics count it); run it at --zap-log-level=5 (klog: -v=4) to see every one, or name the key with --controller-log-keys reconcileID=KEY")
	default:
		fmt.Fprintf(&b, ": %d reconciles (lines with a reconcileID) name no object (looked for namespace and name, the kind's own key, objectRef, key, ...): a singleton controller's cannot be joined to the watch; else name the keys with --controller-log-keys namespace=KEY,name=KEY",
			r.Stats.NoObject+len(r.open))
	}
	return b.String()
}
