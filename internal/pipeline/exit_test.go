package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// A run whose -o template failed on some events does not exit 0; one that failed on none does.
func TestTemplateFailed(t *testing.T) {
	for _, tt := range []struct {
		template string
		wantErr  string
	}{
		{template: "go-template={{index .managers 0}}", wantErr: "the -o template failed on 1 events"},
		{template: "go-template={{.type}}"},
	} {
		p := printer.New(io.Discard, printer.Options{Output: printer.OutputFormat(tt.template), ErrOut: io.Discard})
		_ = p.Print(&watch.Event{Type: watch.Added, Name: "a"})
		err := TemplateFailed(p)
		if got := fmt.Sprint(err); (tt.wantErr == "" && err != nil) || !strings.Contains(got, tt.wantErr) {
			t.Errorf("%s: TemplateFailed() = %v, want %q", tt.template, err, tt.wantErr)
		}
	}
}

// A reader that went away ends a run quietly; any other failed write is the run's error.
func TestStdoutError(t *testing.T) {
	if err := StdoutError(fmt.Errorf("write: %w", syscall.EPIPE)); err != nil {
		t.Errorf("EPIPE: %v", err)
	}
	if err := StdoutError(os.ErrClosed); err != nil {
		t.Errorf("closed: %v", err)
	}
	if err := StdoutError(syscall.ENOSPC); err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "the output is incomplete") {
		t.Errorf("ENOSPC: %v", err)
	}
}
