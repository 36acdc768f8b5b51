package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// stdoutError is what a failed write to stdout means for the exit: nothing when the reader went
// away (`| head`: a quiet end, exit 0, as kubectl does), and otherwise (a full disk, a file size
// limit, an I/O error) one line and exit 1, since the output is cut short.
func stdoutError(err error) error {
	if err == nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, fs.ErrClosed) {
		return nil
	}
	return fmt.Errorf("stdout: %w (the output is incomplete)", err)
}
