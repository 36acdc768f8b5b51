// Package input opens what the plugin reads from files: a recording (replay, report; a FIFO or
// stdin too, every wait honouring the run's context) and token or CA files (regular files of
// bounded size only).
package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Open opens the recording replay and report read: FILE, or stdin for "-". The errors are
// kubectl's wording for a path (as `kubectl apply -f` says it), the same for both commands.
//
// Every wait honours ctx (a signal, --timeout): opening a FIFO with no writer blocks in the
// kernel, so it happens beside the caller, who returns when ctx ends; a FIFO or pipe (and stdin
// when it is one) is closed when ctx ends, which ends a read waiting on it. A device such as
// /dev/zero is read within the reader's bounds (pkg/replay).
func Open(ctx context.Context, file string, stdin io.Reader) (in io.Reader, name string, closeIn func(), err error) {
	if file == "-" {
		return interruptible(ctx, stdin, true), "standard input", func() {}, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(file)
		ch <- opened{f, err}
	}()
	var f *os.File
	select {
	case o := <-ch:
		f, err = o.f, o.err
	case <-ctx.Done():
		// The open goes on (a FIFO without a writer) and is dropped when it returns.
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, "", nil, fmt.Errorf("%s: %w while waiting for a writer (a FIFO?)", file, context.Cause(ctx))
	}
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
	return interruptible(ctx, f, false), file, func() { _ = f.Close() }, nil
}

// interruptible closes r, when it is a FIFO, a pipe or a socket, as ctx ends: Go reads those
// through its poller, so the close ends a read that waits on them. inherited says r's
// descriptor was not opened here (stdin).
func interruptible(ctx context.Context, r io.Reader, inherited bool) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return r
	}
	if inherited {
		// A file made from an inherited descriptor is read through the poller only when the
		// descriptor is non-blocking.
		f = pollable(f)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	return &stopReader{r: f, ctx: ctx, stop: stop}
}

// stopReader says why a read failed once ctx ended it.
type stopReader struct {
	r    io.Reader
	ctx  context.Context
	stop func() bool
}

func (s *stopReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && s.ctx.Err() != nil {
		return n, fmt.Errorf("stopped: %w", context.Cause(s.ctx))
	}
	return n, err
}

// maxCredentialFile bounds a token or CA file (a CA bundle of a few hundred certificates is
// well under 1 MiB).
const maxCredentialFile = 1 << 20

// ReadCredentialFile reads a token or certificate file named by flag: a regular file of at most
// maxCredentialFile bytes. A FIFO would block the run before --timeout or a signal could end it,
// a device (/dev/zero) would fill memory: both are refused.
func ReadCredentialFile(flag, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is not a regular file (%s): give the file the token or certificates are in", flag, path, FileKind(fi.Mode()))
	}
	if fi.Size() > maxCredentialFile {
		return nil, fmt.Errorf("%s %s is %d bytes, more than the %d KiB a token or CA file may have", flag, path, fi.Size(), maxCredentialFile>>10)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if len(b) > maxCredentialFile {
		return nil, fmt.Errorf("%s %s grew past the %d KiB a token or CA file may have", flag, path, maxCredentialFile>>10)
	}
	return b, nil
}

// FileKind says what a file that is not a regular file is ("a FIFO", "a device"...).
func FileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "not a file"
}
