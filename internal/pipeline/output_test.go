package pipeline

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
)

// In human output, the lines that wait for a slow writer hold no decoded objects: Output reads
// a typed line's state as the line goes in and drops the object (printer.Lighten). What comes
// out is byte for byte what the printer writes of the lines as they were.
func TestOutputLightensWaitingLines(t *testing.T) {
	opts := printer.Options{Diff: "inline", Timestamps: "none"}
	evs := aheadEvents(300)
	var want bytes.Buffer
	wp := printer.New(&want, opts)
	typed := 0
	for i := range evs {
		if evs[i].Typed != nil {
			typed++
		}
		ev := evs[i]
		if err := wp.Print(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := wp.Flush(); err != nil {
		t.Fatal(err)
	}

	// The writer's first flush blocks (nobody reads the pipe yet): every later line waits.
	pr, pw := io.Pipe()
	outbox := NewOutbox(len(evs), true, nil)
	out := StartOutput(outbox, printer.New(pw, opts), func() { t.Error("cancelled") }, func() {})
	first := evs[0]
	if err := out.Emit(&first); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); outbox.Len() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the writer never took the first line")
		}
	}
	for i := 1; i < len(evs); i++ {
		ev := evs[i]
		if err := out.Emit(&ev); err != nil {
			t.Fatal(err)
		}
		if evs[i].Typed != nil && ev.Typed != nil {
			t.Fatalf("line %d: a typed pod's line kept its object on its way into the outbox", i)
		}
	}
	if n := outbox.Len(); n != len(evs)-1 {
		t.Fatalf("%d lines wait for the blocked writer, want %d", n, len(evs)-1)
	}
	outbox.mu.Lock()
	for _, s := range outbox.buf[outbox.head:] {
		if s.ev.Typed != nil {
			t.Errorf("a waiting %s line of %s holds its decoded object", s.ev.Type, s.ev.Name)
		}
	}
	outbox.mu.Unlock()

	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- b
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := out.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("the lines written differ from the printer's own (%d bytes against %d; %d typed lines)", len(b), want.Len(), typed)
	}
}
