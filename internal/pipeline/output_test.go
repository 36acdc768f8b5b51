package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// outputEvents is aheadEvents with updates among them that carry their objects' Go types beside
// their maps (as the informer hands them on): a pod going from Pending to Running.
func outputEvents(n int) []watch.Event {
	evs := aheadEvents(n)
	t0 := evs[0].Time
	for i := range 20 {
		old := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(1000 + i)},
			Spec:       corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodPending}}
		cur := old.DeepCopy()
		cur.ResourceVersion, cur.Status.Phase = fmt.Sprint(2000+i), corev1.PodRunning
		oldEv := watch.Event{Obj: watch.ObjectInfo{Typed: old}}
		ev := watch.Event{
			Type:            watch.Updated,
			Time:            t0.Add(time.Hour + time.Duration(i)*time.Millisecond),
			Resource:        aheadPods,
			Namespace:       "ns",
			Name:            cur.Name,
			ResourceVersion: cur.ResourceVersion,
			Obj: watch.ObjectInfo{
				OldResourceVersion: old.ResourceVersion,
				Delta:              watch.DeltaUpdated,
				Typed:              cur,
				OldTyped:           old,
				OldObject:          oldEv.Materialize(),
			},
		}
		ev.Obj.Object = (&watch.Event{Obj: watch.ObjectInfo{Typed: cur}}).Materialize()
		evs = append(evs, ev)
	}
	return evs
}

// The lines that wait for a slow writer hold no decoded objects they do not need: Output reads
// a typed line's state as the line goes in and drops its objects (printer.Lighten): an update's
// in every output (its maps are what is rendered), an Added line's in human output (in -o json
// its Go type is what is encoded, ahead). What comes out is byte for byte what the printer
// writes of the lines as they were.
func TestOutputLightensWaitingLines(t *testing.T) {
	for _, opts := range []printer.Options{{Diff: "inline", Timestamps: "none"}, {Output: "json"}} {
		name := string(opts.Output)
		if name == "" {
			name = "human"
		}
		t.Run(name, func(t *testing.T) {
			evs := outputEvents(300)
			want := printedAll(t, opts, evs)

			// The writer's first flush blocks (nobody reads the pipe yet): the later lines wait.
			pr, pw := io.Pipe()
			outbox := NewOutbox(len(evs), opts.Output == "", nil)
			out := StartOutput(outbox, printer.New(pw, opts), func() { t.Error("cancelled") })
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
			}
			// -o json's feeder takes a window of lines out ahead of the writer; the rest wait.
			if n := outbox.Len(); n < len(evs)-1-2*aheadWindow {
				t.Fatalf("%d lines wait for the blocked writer, want at least %d", n, len(evs)-1-2*aheadWindow)
			}
			updates, added := 0, 0
			outbox.mu.Lock()
			for _, s := range outbox.buf[outbox.head:] {
				switch {
				case s.hole:
				case s.ev.Type == watch.Updated:
					updates++
					if s.ev.Obj.Typed != nil || s.ev.Obj.OldTyped != nil {
						t.Errorf("a waiting update of %s holds its decoded objects", s.ev.Name)
					}
				case s.ev.Type == watch.Added && s.ev.Obj.Object == nil:
					added++
					if held := s.ev.Obj.Typed != nil; held != (opts.Output == "json") {
						t.Errorf("a waiting Added line of %s holds its decoded object: %v", s.ev.Name, held)
					}
				}
			}
			outbox.mu.Unlock()
			if updates == 0 || added == 0 {
				t.Fatalf("%d updates and %d typed Added lines wait: the test shows nothing", updates, added)
			}

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
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("the lines written differ from the printer's own (%d bytes against %d)", len(b), len(want))
			}
		})
	}
}

// A line the informer prepared (watch.Config.Prepare with printer.PrepareAdded: its state read
// as its object was decoded, no object on the line) is written with that state: byte for byte
// the line of the object itself.
func TestOutputPrintsPreparedLines(t *testing.T) {
	opts := printer.Options{Diff: "inline", Timestamps: "none"}
	evs := outputEvents(100)
	want := printedAll(t, opts, evs)
	prepare := printer.New(io.Discard, opts).PrepareAdded(aheadPods)
	if prepare.Reader == nil {
		t.Fatal("human output prepares no pod line")
	}
	prepared := 0
	for i := range evs {
		if ev := &evs[i]; ev.Type == watch.Added && ev.Obj.Typed != nil {
			ev.Obj.Prepared, ev.Obj.Typed = prepare.Reader.ReadObject(ev.Obj.Typed), nil
			prepared++
		}
	}
	if prepared == 0 {
		t.Fatal("no line prepared: the test shows nothing")
	}
	var b bytes.Buffer
	out := StartOutput(NewOutbox(len(evs), true, nil), printer.New(&b, opts), func() { t.Error("cancelled") })
	for i := range evs {
		ev := evs[i]
		if err := out.Emit(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("prepared lines written differ from the printer's own:\n%s\nwant:\n%s", b.Bytes(), want)
	}
}

// printedAll is what a printer of opts writes of evs, one after the other, on its own.
func printedAll(t *testing.T, opts printer.Options, evs []watch.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	p := printer.New(&b, opts)
	for i := range evs {
		ev := evs[i]
		if err := p.Print(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
