//go:build linux

package cmd

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// openTerminal opens a pseudo-terminal and returns its terminal side.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}

// HTML is not for a terminal: without -o the report refuses one, and -o - forces it.
func TestReportRefusesTerminal(t *testing.T) {
	tty := openTerminal(t)
	for _, output := range []string{"", "-"} {
		o := NewReportOptions(genericiooptions.IOStreams{Out: tty})
		o.Output = output
		_ = o.Complete(nil, []string{"a.ndjson"})
		err := o.Validate()
		switch {
		case output == "" && (err == nil || !strings.Contains(err.Error(), "refusing to write HTML to a terminal")):
			t.Errorf("no -o, a terminal: err = %v, want a refusal", err)
		case output == "-" && err != nil:
			t.Errorf("-o -, a terminal: err = %v, want none", err)
		}
	}
}
