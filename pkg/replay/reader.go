// Package replay reads recordings made with `kubectl informer watch --record FILE` (or plain
// `-o json` output) and serves them to a controller's own informer as a client-go
// cache.ListerWatcher, so a test can feed a controller the exact traffic a cluster once sent:
// initial list, watch events, relists, tombstones.
//
// The recording format is documented in docs/recording.md; pkg/recording encodes and decodes
// it, and this package's Line, Reader.Header and Recording.Header are its types.
package replay

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
)

// Line is one decoded line of a recording.
type Line struct {
	// Number is the line's number in the file, from 1.
	Number int
	recording.Decoded
}

// LineError is a damaged line: it does not parse, or is not a line of the JSON contract. The
// lines after it can still be read.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// FormatError is a recording header of a format version newer than this build reads. Nothing
// after it can be trusted to mean what this build thinks.
type FormatError struct {
	Line    int
	Version int
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("line %d: the recording is in format version %d; this kubectl informer reads format version %d (upgrade it to replay this recording)",
		e.Line, e.Version, recording.FormatVersion)
}

// Reader reads a recording one line at a time. Blank lines are skipped; gzip-compressed input
// is decompressed. Updated events get their OldObject back from the stream (recording.Decoder),
// so that printing them shows what changed, as the live run did.
type Reader struct {
	br   *bufio.Reader
	dec  *recording.Decoder
	n    int
	seen bool
	err  error // sticky: a FormatError or a read error

	// Header is the last recording header read; nil until one is.
	Header *recording.Header
	// Headerless is set when the first line was an event, not a header: plain `-o json` output.
	Headerless bool
}

// Bounds on what a recording may hold, so that a hostile or broken one (/dev/zero, a gzip bomb,
// a line of gigabytes) is refused with a line saying so instead of taking the machine's memory.
const (
	// MaxLineBytes bounds one line. The largest object an API server stores is about 1.5 MiB
	// (etcd's default request limit); a line holds one object, its old version in a diff, and
	// JSON escaping: 16 MiB leaves room for all that.
	MaxLineBytes = 16 << 20
	// MaxDecompressedBytes bounds what a gzip-compressed recording may expand to.
	MaxDecompressedBytes = 4 << 30
)

// BoundError is a recording past one of the bounds above; it ends the reading.
type BoundError struct {
	Line int
	What string
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("line %d: %s: not a recording, or a damaged one", e.Line, e.What)
}

// NewReader returns a Reader for r.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 256*1024)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		br = bufio.NewReaderSize(&capReader{r: zr, n: maxDecompressed}, 256*1024)
	}
	return &Reader{br: br, dec: recording.NewDecoder()}, nil
}

// errDecompressed is what capReader says past MaxDecompressedBytes.
var errDecompressed = fmt.Errorf("the recording decompresses to more than %d GiB (the bound on a compressed recording)", MaxDecompressedBytes>>30)

// The bounds in force (tests lower them).
var maxLine, maxDecompressed int64 = MaxLineBytes, MaxDecompressedBytes

// capReader fails once more than n bytes were read.
type capReader struct {
	r io.Reader
	n int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, errDecompressed
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, errDecompressed
	}
	return n, err
}

// readLine reads up to and including the next newline, or fails past MaxLineBytes.
func (r *Reader) readLine() ([]byte, error) {
	var line []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		if int64(len(line)+len(frag)) > maxLine {
			return nil, &BoundError{Line: r.n + 1, What: fmt.Sprintf("longer than %d MiB (the bound on one line)", MaxLineBytes>>20)}
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// Next returns the next line: a header (Line.Header set) or an event. At the end it returns
// io.EOF. A damaged line gives a *LineError (an unknown line type, one wrapping a
// *recording.UnknownTypeError), after which Next can be called again. A header of a newer format
// gives a *FormatError, and a read error is returned as is; both end the reading.
func (r *Reader) Next() (Line, error) {
	if r.err != nil {
		return Line{}, r.err
	}
	for {
		raw, err := r.readLine()
		if _, bound := errors.AsType[*BoundError](err); bound || errors.Is(err, errDecompressed) {
			if !bound {
				err = &BoundError{Line: r.n + 1, What: err.Error()}
			}
			r.err = err
			return Line{}, err
		}
		if len(raw) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("after line %d: %w", r.n, err)
			}
			r.err = err
			return Line{}, err
		}
		r.n++
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		first := !r.seen
		r.seen = true
		d, derr := r.dec.Decode(raw)
		if _, bad := errors.AsType[*recording.FormatVersionError](derr); bad {
			// A header no version of kubectl informer wrote: what follows cannot be trusted.
			r.err = fmt.Errorf("line %d: %w", r.n, derr)
			return Line{}, r.err
		}
		if derr != nil {
			return Line{Number: r.n}, &LineError{Line: r.n, Err: derr}
		}
		if d.Header != nil {
			if d.Header.FormatVersion > recording.FormatVersion {
				r.err = &FormatError{Line: r.n, Version: d.Header.FormatVersion}
				return Line{}, r.err
			}
			r.Header = d.Header
		} else if first {
			r.Headerless = true
		}
		return Line{Number: r.n, Decoded: d}, nil
	}
}
