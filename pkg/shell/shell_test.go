package shell

import (
	"os/exec"
	"testing"
)

// B10: every word survives a real shell as one argument, whatever it holds.
func TestQuote(t *testing.T) {
	words := []string{"web", "demo/web-1", "x; touch PWNED #", "$(touch PWNED2)", "`id`", "it's", "a b", "", "é\nx", "--diff", "*"}
	for _, w := range words {
		q := Quote(w)
		out, err := exec.Command("sh", "-c", "printf '%s' "+q).Output()
		if err != nil {
			t.Fatalf("%q quoted %s: %v", w, q, err)
		}
		if string(out) != w {
			t.Errorf("%q quoted %s: the shell gave %q", w, q, out)
		}
	}
	if Quote("web-1") != "web-1" {
		t.Errorf("a plain name is quoted: %s", Quote("web-1"))
	}
}
