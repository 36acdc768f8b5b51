package printer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/printers"
)

// Escape makes a string that came from the server safe for a terminal line: ESC and CR as
// cli-runtime's EscapeTerminal writes them, and every other control character (BEL, newline,
// C1 controls such as the 8-bit CSI) as a visible \x or \u escape, so one event stays one line.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	s = printers.EscapeTerminal(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			return true
		}
	}
	return false
}
