package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// benchStream is 20,000 ConfigMaps of 1 KiB of data (the bench's workload) as the server
// streams them, then the bookmark that ends the initial events.
func benchStream(b *testing.B) []byte {
	b.Helper()
	data := map[string]string{"data": string(bytes.Repeat([]byte("x"), 1024))}
	frames := make([][]byte, 0, 20001)
	for i := range 20000 {
		frames = append(frames, frame(b, "ADDED", cm(fmt.Sprintf("bench-%06d", i), nil, data)))
	}
	frames = append(frames, frame(b, "BOOKMARK", cm("", endAnnotation, nil)))
	return stream(b, frames...)
}

// reads hands out data in reads of 16 KiB, the size of an HTTP/2 DATA frame.
func reads(data []byte) io.Reader { return &chunks{data: data, sizes: []int{16 << 10}} }

// BenchmarkFollowInitialList is what the wire tool does with the initial list: frames cut by
// their lengths, each one's type looked at, the end found. Beside BenchmarkCopyInitialList (the
// same bytes read and dropped) it is the wire tool's own cost over a bare copy: docs/performance.md.
func BenchmarkFollowInitialList(b *testing.B) {
	s := benchStream(b)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		err := follow(newFrameReader(reads(s), 1<<20, 64<<20), io.Discard, resource{version: "v1", plural: "configmaps"})
		if !errors.Is(err, io.EOF) {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyInitialList reads the same bytes into one buffer and drops them.
func BenchmarkCopyInitialList(b *testing.B) {
	s := benchStream(b)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	buf := make([]byte, 1<<20)
	for b.Loop() {
		r := reads(s)
		for {
			if _, err := r.Read(buf); err != nil {
				break
			}
		}
	}
}
