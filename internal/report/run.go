package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/input"
)

// Config is one `kubectl informer report`: the recording and where the page goes.
type Config struct {
	// File is the recording ("-": In).
	File string
	In   io.Reader
	// Out gets the page unless Output names a file ("" and "-": Out); ErrOut the warnings.
	Out, ErrOut io.Writer
	Output      string
	// AuditLog is --audit-log: each object line joined to the audit event of its write.
	AuditLog string
}

// Run reads the recording (Config.File, "-" for In), then writes the page: nothing is written
// for input that is not a recording.
func Run(ctx context.Context, o Config) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, name, closeIn, err := input.Open(ctx, o.File, o.In)
	if err != nil {
		return err
	}
	defer closeIn()
	auditLog, err := audit.OpenLog(o.AuditLog, o.ErrOut)
	if err != nil {
		return err
	}
	defer auditLog.Close()
	r, readErr := ReadJoined(in, name, auditLog)
	var damaged *DamagedError
	if readErr != nil && !errors.As(readErr, &damaged) {
		return readErr
	}
	for _, w := range r.Warnings {
		fmt.Fprintln(o.ErrOut, "warning: "+w)
	}
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := write(o.Out, o.Output, buf.Bytes()); err != nil {
		return err
	}
	return readErr
}

// write writes the page to out, or, whole or not at all, to the file output.
func write(out io.Writer, output string, page []byte) error {
	if output == "" || output == "-" {
		_, err := out.Write(page)
		return err
	}
	// Whole or not at all: a reader of the file never sees half a page.
	tmp, err := os.CreateTemp(filepath.Dir(output), ".report-*.html")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) { // name the file asked for, not the temporary one beside it
			err = pe.Err
		}
		return fmt.Errorf("-o %s: %w", output, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(page); err != nil {
		tmp.Close()
		return fmt.Errorf("-o %s: %w", output, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("-o %s: %w", output, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("-o %s: %w", output, err)
	}
	if err := os.Rename(tmp.Name(), output); err != nil {
		return fmt.Errorf("-o %s: %w", output, err)
	}
	return nil
}
