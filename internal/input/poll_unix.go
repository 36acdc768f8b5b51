//go:build unix

package input

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns f, or, for an inherited blocking descriptor (stdin from a pipe), a File of the
// same descriptor made non-blocking, which Go reads through its poller: closing it then ends a
// read that waits.
func pollable(f *os.File) *os.File {
	fd := int(f.Fd()) // Fd makes f blocking again: the flag is set after it
	if err := unix.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
