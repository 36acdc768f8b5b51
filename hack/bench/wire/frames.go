package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// frameReader cuts a protobuf watch stream (Accept: application/vnd.kubernetes.protobuf;
// stream=watch) into its frames: each is a 4-byte big-endian length, then that many bytes (a
// metav1.WatchEvent). It reads into one buffer and hands out slices of it; nothing is decoded.
type frameReader struct {
	r          io.Reader
	buf        []byte
	start, end int // the unread bytes are buf[start:end]
	max        int // the largest frame accepted
	// Frames and Bytes count what was read: frames handed out, and bytes including the
	// length prefixes.
	Frames, Bytes int64
}

// newFrameReader reads r through a buffer of size bytes (grown for a larger frame, up to max).
func newFrameReader(r io.Reader, size, max int) *frameReader {
	return &frameReader{r: r, buf: make([]byte, size), max: max}
}

// next returns the next frame, valid until the following call; io.EOF at the end of the stream
// between two frames, io.ErrUnexpectedEOF inside one.
func (f *frameReader) next() ([]byte, error) {
	for {
		if f.end-f.start >= 4 {
			n := int(binary.BigEndian.Uint32(f.buf[f.start:]))
			if n > f.max {
				return nil, fmt.Errorf("frame of %d bytes, larger than the %d accepted", n, f.max)
			}
			if f.end-f.start >= 4+n {
				frame := f.buf[f.start+4 : f.start+4+n]
				f.start += 4 + n
				f.Frames++
				f.Bytes += int64(4 + n)
				return frame, nil
			}
			f.room(4 + n)
		} else {
			f.room(4)
		}
		read, err := f.r.Read(f.buf[f.end:])
		f.end += read
		if err != nil && read == 0 {
			if errors.Is(err, io.EOF) && f.start != f.end {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// room makes the buffer hold need bytes from f.start on, with space to read into: the partial
// frame moves to the front, and the buffer doubles when that is not enough.
func (f *frameReader) room(need int) {
	if len(f.buf)-f.start > need {
		return
	}
	buf := f.buf
	if len(buf) <= need {
		buf = make([]byte, max(2*len(buf), need+1))
	}
	f.end = copy(buf, f.buf[f.start:f.end])
	f.start, f.buf = 0, buf
}

// A frame is a metav1.WatchEvent in protobuf: field 1 its type, field 2 the object as a
// runtime.RawExtension (field 1 the bytes), which are the object in the protobuf envelope:
// the magic k8s\0, then a runtime.Unknown (field 2 the object's own bytes). The object's
// field 1 is its ObjectMeta: field 1 the name, field 3 the namespace.
var (
	bookmark = []byte("BOOKMARK")
	errorTyp = []byte("ERROR")
	magic    = []byte("k8s\x00")
	// endMark is the map entry of the annotation that marks the end of the initial events:
	// the key (field 1), then the value (field 2, 4 bytes) "true".
	endMark = []byte("k8s.io/initial-events-end\x12\x04true")
)

// eventType is the frame's event type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR).
func eventType(frame []byte) []byte {
	t, _ := field(frame, 1)
	return t
}

// initialEventsEnd tells whether a frame is the BOOKMARK that ends the initial events: found
// by its annotation's bytes, not by decoding the object.
func initialEventsEnd(frame []byte) bool {
	return bytes.Equal(eventType(frame), bookmark) && bytes.Contains(frame, endMark)
}

// objectKey finds the namespace and name of a frame's object by stepping over the fields
// around them, without decoding the object.
func objectKey(frame []byte) (namespace, name []byte, ok bool) {
	raw, ok := fieldPath(frame, 2, 1)
	if !ok || !bytes.HasPrefix(raw, magic) {
		return nil, nil, false
	}
	meta, ok := fieldPath(raw[len(magic):], 2, 1)
	if !ok {
		return nil, nil, false
	}
	name, ok = field(meta, 1)
	namespace, _ = field(meta, 3)
	return namespace, name, ok
}

// fieldPath follows length-delimited fields, one field number per level.
func fieldPath(msg []byte, nums ...uint64) ([]byte, bool) {
	for _, n := range nums {
		var ok bool
		if msg, ok = field(msg, n); !ok {
			return nil, false
		}
	}
	return msg, true
}

// field returns the bytes of the first length-delimited field num of a protobuf message,
// stepping over the others by their wire type.
func field(msg []byte, num uint64) ([]byte, bool) {
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 {
			return nil, false
		}
		msg = msg[n:]
		var skip uint64
		switch tag & 7 {
		case 0: // varint
			if _, n = binary.Uvarint(msg); n <= 0 {
				return nil, false
			}
			skip = uint64(n)
		case 1: // 64-bit
			skip = 8
		case 2: // length-delimited
			l, n := binary.Uvarint(msg)
			if n <= 0 || l > uint64(len(msg)-n) {
				return nil, false
			}
			if tag>>3 == num {
				return msg[n : n+int(l)], true
			}
			skip = uint64(n) + l
		case 5: // 32-bit
			skip = 4
		default:
			return nil, false
		}
		if skip > uint64(len(msg)) {
			return nil, false
		}
		msg = msg[skip:]
	}
	return nil, false
}
