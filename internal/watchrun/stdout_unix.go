//go:build unix

package watchrun

import (
	"context"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// watchClosedStdout calls gone when out is a pipe whose reader went away (`| head -1`), so the
// plugin stops within half a second instead of at its next write, which may be much later.
func watchClosedStdout(ctx context.Context, out io.Writer, gone func()) {
	f, ok := out.(*os.File)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	fd := int32(f.Fd())
	go func() {
		for ctx.Err() == nil {
			// With no events asked for, poll reports only POLLERR/POLLHUP: the read end closed.
			fds := []unix.PollFd{{Fd: fd}}
			n, err := unix.Poll(fds, 500)
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
		}
	}()
}
