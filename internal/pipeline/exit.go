package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// StdoutError is what a failed write to stdout means for the exit: nothing when the reader went
// away (`| head`: a quiet end, exit 0, as kubectl does), and otherwise (a full disk, a file size
// limit, an I/O error) one line and exit 1, since the output is cut short.
func StdoutError(err error) error {
	if err == nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, fs.ErrClosed) {
		return nil
	}
	return fmt.Errorf("stdout: %w (the output is incomplete)", err)
}

// TemplateFailed is the error of a run whose -o template failed on some events (each said on
// stderr as it came): the output is not what was asked for, so the exit is not 0.
func TemplateFailed(p *printer.Printer) error {
	if n := p.TemplateFailures(); n > 0 {
		return fmt.Errorf("the -o template failed on %d events (each said above)", n)
	}
	return nil
}
