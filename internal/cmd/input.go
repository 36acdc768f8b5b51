package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// openInput opens the recording replay and report read: FILE, or stdin for "-". The errors are
// kubectl's wording for a path (as `kubectl apply -f` says it), the same for both commands.
func openInput(file string, stdin io.Reader) (in io.Reader, name string, closeIn func(), err error) {
	if file == "-" {
		return stdin, "standard input", func() {}, nil
	}
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil, fmt.Errorf("the path %q does not exist", file)
	}
	if err != nil {
		return nil, "", nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, "", nil, fmt.Errorf("%s is a directory, not a recording", file)
	}
	return f, file, func() { _ = f.Close() }, nil
}
