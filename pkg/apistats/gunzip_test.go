package apistats

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand"
	"testing"
	"time"
)

// waitLimit bounds a wait for something the code under test must do; the tests await the
// condition itself, this only turns a hang into a failure.
const waitLimit = 20 * time.Second

func newTestBody(r io.ReadCloser) (*gunzipBody, *Recorder) {
	rec := NewRecorder()
	wire := &countingBody{rec: rec, resource: "pods", rc: r, wire: true}
	return newGunzipBody(wire, &countingBody{rec: rec, resource: "pods"}), rec
}

// readN reads from g until it has n bytes, failing after waitLimit.
func readN(t *testing.T, g io.Reader, n int) []byte {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		// Reads of a buffer larger than what was sent: each must return what there is.
		var b []byte
		buf := make([]byte, 64<<10)
		for len(b) < n {
			m, err := g.Read(buf)
			b = append(b, buf[:m]...)
			if err != nil {
				got <- nil
				return
			}
		}
		got <- b
	}()
	select {
	case b := <-got:
		if b == nil {
			t.Fatal("the read failed")
		}
		return b
	case <-time.After(waitLimit):
		t.Fatalf("%d bytes, flushed by the server, were not handed on (the body waits for more)", n)
		return nil
	}
}

// A watch's events come one at a time, each flushed: each must reach the reader as soon as it
// was decompressed, however small, while the stream stays open.
func TestGunzipBodyHandsOnFlushedEvents(t *testing.T) {
	pr, pw := io.Pipe()
	g, rec := newTestBody(pr)
	defer g.Close()
	// One writer, as the server's: each event written and flushed, the stream left open.
	events := make(chan []byte)
	defer close(events)
	go func() {
		zw := gzip.NewWriter(pw)
		for e := range events {
			_, _ = zw.Write(e)
			_ = zw.Flush()
		}
	}()
	for i := range 5 {
		event := bytes.Repeat([]byte{byte('a' + i)}, 100+i)
		events <- event
		if got := readN(t, g, len(event)); !bytes.Equal(got, event) {
			t.Fatalf("event %d: got %q, want %q", i, got, event)
		}
	}
	want := int64(0)
	for i := range 5 {
		want += int64(100 + i)
	}
	if got := rec.get("pods").BytesDecoded; got != want {
		t.Errorf("decoded bytes counted: %d, want %d", got, want)
	}
}

// Every byte of a large body comes out in order, through reads of any size, then io.EOF;
// both the bytes received and the bytes decoded are counted.
func TestGunzipBodyLargeBody(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	body := make([]byte, 1<<20+12345)
	for i := range body {
		body[i] = byte('a' + rnd.Intn(8))
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(body)
	_ = zw.Close()
	g, rec := newTestBody(io.NopCloser(bytes.NewReader(zipped.Bytes())))
	var out bytes.Buffer
	buf := make([]byte, 7777)
	for {
		n, err := g.Read(buf[:1+rnd.Intn(len(buf)-1)])
		out.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out.Bytes(), body) {
		t.Fatalf("got %d bytes, not the body's %d", out.Len(), len(body))
	}
	c := rec.get("pods")
	if c.BytesDecoded != int64(len(body)) || c.BytesReceived != int64(zipped.Len()) {
		t.Errorf("counted %d received, %d decoded; want %d, %d", c.BytesReceived, c.BytesDecoded, zipped.Len(), len(body))
	}
}

// A corrupt stream's error reaches the reader.
func TestGunzipBodyError(t *testing.T) {
	g, _ := newTestBody(io.NopCloser(bytes.NewReader([]byte("not gzip at all"))))
	if _, err := io.ReadAll(g); err == nil {
		t.Fatal("no error from a body that is not gzip")
	}
}

// Close ends a Read waiting for the stream.
func TestGunzipBodyCloseEndsReads(t *testing.T) {
	pr, pw := io.Pipe()
	g, _ := newTestBody(pr)
	zw := gzip.NewWriter(pw)
	go func() {
		_, _ = zw.Write([]byte("first"))
		_ = zw.Flush()
	}()
	readN(t, g, len("first"))
	read := make(chan error, 1)
	go func() {
		_, err := g.Read(make([]byte, 10))
		read <- err
	}()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-read:
		if err == nil {
			t.Error("a Read returned no error after Close")
		}
	case <-time.After(waitLimit):
		t.Fatal("Close did not end a waiting Read")
	}
}
