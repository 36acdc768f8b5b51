package ctrllog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// maxLine bounds one line; longer ones (a huge object dumped into a log) are cut there.
const maxLine = 1 << 20

// pollEvery is how often a followed file at its end is looked at again (tail -F polls each
// second; a reconcile wants less).
const pollEvery = 100 * time.Millisecond

// tailLen is how many of the last bytes read are kept to recognize the file before each read: a
// log emptied in place (logrotate's copytruncate) and written again past where the reader was is
// shorter than its offset no more, but no longer holds those bytes there.
const tailLen = 64

// Follow reads the file at path as `tail -F` does, from its first line: at its end it waits for
// more, a truncated file is read again from its start (also when it has grown past the offset
// again by the next read: the last bytes read are no longer where they were),
// a file replaced (rotated) is reopened, and a missing one is waited for. Each complete line
// goes to line with the time it was read. It returns when ctx ends; notice says once that the
// file is not there yet.
//
// A path that is not a regular file (a FIFO, a socket, a device) is read as a stream instead:
// opened without waiting for a writer, read until ctx ends.
func Follow(ctx context.Context, path string, line func([]byte, time.Time), notice func(string)) error {
	return follow(ctx, path, line, notice, nil)
}

// follow is Follow; lag (nil: none) is kept at the bytes of the file not read yet.
func follow(ctx context.Context, path string, line func([]byte, time.Time), notice func(string), lag *atomic.Int64) error {
	var f *os.File
	var info os.FileInfo
	var off int64
	var partial, tail []byte
	waited, atEnd := false, false
	reads := 0
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	for ctx.Err() == nil {
		if f == nil {
			// A FIFO (also one made where a missing file was awaited) is not opened as a file:
			// that waits for a writer, beyond the run's end.
			if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
				return followStream(ctx, path, fi, line)
			}
			var err error
			if f, err = openOrWait(ctx, path, &waited, notice); err != nil {
				return err
			}
			if f == nil {
				continue
			}
			info, _ = f.Stat()
			off, partial, tail = 0, partial[:0], tail[:0]
		}
		if off > 0 && truncated(f, off, tail) {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			off, partial, tail = 0, partial[:0], tail[:0]
		}
		n, err := f.Read(buf)
		if n > 0 {
			off += int64(n)
			if reads++; lag != nil && reads%16 == 0 {
				storeLag(lag, f, off)
			}
			tail = append(tail, buf[max(0, n-tailLen):n]...)
			tail = tail[max(0, len(tail)-tailLen):]
			partial = lines(append(partial, buf[:n]...), line)
			atEnd = false
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if lag != nil {
			lag.Store(0)
		}
		// At the end: replaced, or truncated (read again from its start by the next round), or
		// just nothing new yet.
		if cur, err := os.Stat(path); err != nil || !os.SameFile(info, cur) {
			f.Close()
			f = nil
			continue
		}
		if truncated(f, off, tail) {
			continue
		}
		atEnd = true
		sleep(ctx, pollEvery)
	}
	if f != nil && (atEnd || unread(f, off) <= int64(len(buf))) {
		// The run ends while it waited at the end, or had all but a read's worth of the file. A
		// reading still far behind the file's end stops where it is (the run is over).
		readLast(f, partial, line)
	}
	return nil
}

// openOrWait opens path to follow it. A missing file is waited for: nil and no error after a
// poll's wait, notice told the first time (waited).
func openOrWait(ctx context.Context, path string, waited *bool, notice func(string)) (*os.File, error) {
	f, err := os.Open(path)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if !*waited && notice != nil {
		notice("waiting for " + path + " to appear")
	}
	*waited = true
	sleep(ctx, pollEvery)
	return nil, nil
}

// readLast reads what the file holds by now after partial (up to maxFinalRead) when the run
// ends, so that lines written before the stop are not lost to the poll's wait or to the read it
// was between.
func readLast(f *os.File, partial []byte, line func([]byte, time.Time)) {
	rest, _ := io.ReadAll(io.LimitReader(f, maxFinalRead))
	lines(append(partial, rest...), line)
}

// unread is how many bytes of f are after off (0 when f cannot be read).
func unread(f *os.File, off int64) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return max(0, st.Size()-off)
}

// storeLag keeps in lag how many bytes of f are after off.
func storeLag(lag *atomic.Int64, f *os.File, off int64) {
	lag.Store(unread(f, off))
}

// maxFinalRead bounds the last read of a followed file when the run ends.
const maxFinalRead = 16 << 20

// truncated reports whether the open file no longer holds what was read up to off: it is
// shorter, or its bytes before off are not the last ones read.
func truncated(f *os.File, off int64, tail []byte) bool {
	st, err := f.Stat()
	if err != nil || st.Size() < off {
		return true
	}
	if len(tail) == 0 {
		return false
	}
	got := make([]byte, len(tail))
	if _, err := f.ReadAt(got, off-int64(len(tail))); err != nil {
		return true
	}
	return !bytes.Equal(got, tail)
}

// lines hands every complete line of b to line and returns what is left (the start of the next
// line), cut at maxLine.
func lines(b []byte, line func([]byte, time.Time)) []byte {
	now := time.Now()
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(b) > maxLine {
				line(b[:maxLine], now)
				return b[:0]
			}
			return b
		}
		line(b[:i], now)
		b = b[i+1:]
	}
}

// ReadStream reads r (standard input) to its end, a line at a time: a line longer than maxLine
// is cut there as a followed file's is, and the lines after it are read.
func ReadStream(ctx context.Context, r io.Reader, line func([]byte, time.Time)) error {
	buf := make([]byte, 64<<10)
	var partial []byte
	for ctx.Err() == nil {
		n, err := r.Read(buf)
		if n > 0 {
			partial = lines(append(partial, buf[:n]...), line)
		}
		if errors.Is(err, io.EOF) {
			if len(partial) > 0 {
				line(partial, time.Now()) // the last line, without its newline
			}
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

// followStream reads a file that is not a regular one (a FIFO, a socket, a device) as a stream
// until ctx ends: a FIFO is opened without waiting for a writer, and read again when a writer
// comes after the last one left. The file is closed when ctx ends, which ends a read waiting
// for data (a FIFO's, a socket's, through the runtime's poller).
func followStream(ctx context.Context, path string, fi os.FileInfo, line func([]byte, time.Time)) error {
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory: give a controller's log file", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	defer func() {
		if stop() {
			_ = f.Close()
		}
	}()
	for ctx.Err() == nil {
		if err := ReadStream(ctx, f, line); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if fi.Mode()&os.ModeNamedPipe == 0 {
			return nil // a device or a socket at its end
		}
		sleep(ctx, pollEvery) // a FIFO whose writer left: wait for the next
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
