package printer

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := NewProgressLine(&b, 60)
	p.Clear() // nothing shown: nothing to erase
	if b.Len() != 0 {
		t.Fatalf("Clear with nothing shown wrote %q", b.String())
	}
	p.Update([]apistats.Progress{{Resource: "pods", Objects: 1200, Pages: 3, Bytes: 2 << 20, Elapsed: 1520 * time.Millisecond}})
	want := "\r\x1b[Klisting pods: 1200 objects, 3 pages, 2.0 MiB, 1.5s"
	if got := b.String(); got != want {
		t.Errorf("Update wrote %q, want %q", got, want)
	}
	b.Reset()
	narrow := NewProgressLine(&b, 20) // a wrapped line could not be rewritten: cut
	narrow.Update([]apistats.Progress{{Resource: "pods", Streaming: true, Objects: 7}})
	if got := b.String(); got != "\r\x1b[Kstreaming list of p" {
		t.Errorf("narrow terminal: %q", got)
	}
	b.Reset()
	p.Update(nil) // no list runs: the line goes
	if b.String() != "\r\x1b[K" {
		t.Errorf("Update(nil) wrote %q", b.String())
	}
	b.Reset()
	p.Clear()
	if b.Len() != 0 {
		t.Errorf("second Clear wrote %q", b.String())
	}
	var nilLine *ProgressLine // no terminal: no line
	nilLine.Update([]apistats.Progress{{Resource: "pods"}})
	nilLine.Clear()
}
