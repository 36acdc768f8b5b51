package watchrun

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgressLine returns the progress line of long lists for w, nil unless w is a terminal.
func newProgressLine(w io.Writer) *printer.ProgressLine {
	if !isTerminal(w) {
		return nil
	}
	f := w.(*os.File)
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return printer.NewProgressLine(w, width)
}
