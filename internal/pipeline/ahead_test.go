package pipeline

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

var aheadPods = discovery.Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}

// aheadEvents is a list's lines: typed pods (one with HTML and Unicode in a label), an untyped
// one, lifecycle lines between them.
func aheadEvents(n int) []watch.Event {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	evs := []watch.Event{{Type: watch.List, Time: t0, Resource: aheadPods, Lifecycle: watch.LifecycleInfo{Items: n}}}
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(100 + i),
				Labels: map[string]string{"app": "<web> & ü", "n": fmt.Sprint(i)}},
			Spec:   corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "c", Image: "img:1"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		ev := watch.Event{
			Type:            watch.Added,
			Time:            at,
			Resource:        aheadPods,
			Namespace:       "ns",
			Name:            pod.Name,
			ResourceVersion: pod.ResourceVersion,
			Obj: watch.ObjectInfo{
				InitialList: true,
				Delta:       watch.DeltaReplaced,
				Typed:       pod,
			},
		}
		if i%7 == 3 { // a line converted already: nothing to prepare
			ev.Obj.Object, ev.Obj.Typed = ev.Materialize(), nil
		}
		evs = append(evs, ev)
		if i%50 == 49 {
			evs = append(evs, watch.Event{Type: watch.Bookmark, Time: at, Resource: aheadPods, ResourceVersion: fmt.Sprint(100 + i)})
		}
	}
	return append(evs, watch.Event{Type: watch.Synced, Time: t0.Add(time.Hour), Resource: aheadPods, Lifecycle: watch.LifecycleInfo{Items: n}})
}

// The lines prepared ahead on several workers come out in the outbox's order, byte for byte
// what the printer writes alone.
func TestDrainAheadSameBytesInOrder(t *testing.T) {
	evs := aheadEvents(500)
	want := printedAll(t, printer.Options{Output: "json"}, evs)
	for _, workers := range []int{1, 2, 4} {
		var got bytes.Buffer
		p := printer.New(&got, printer.Options{Output: "json"})
		if !p.Prepares() {
			t.Fatal("a JSON printer prepares nothing")
		}
		outbox := NewOutbox(16, false, nil)
		go func() {
			for _, ev := range evs {
				outbox.Put(ev)
			}
			outbox.Close()
		}()
		if err := drainAhead(outbox, p, workers, func() { t.Error("cancelled") }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d workers: the lines differ from the printer's own (%d bytes against %d)", workers, got.Len(), len(want))
		}
	}
}

// slowPrinter prepares with random delays (so workers finish out of order) and writes only
// when released: it records the order of the lines written and what was prepared ahead.
type slowPrinter struct {
	release   chan struct{} // one receive per line written; nil: not held back
	mu        sync.Mutex
	written   []int
	prepared  atomic.Int64
	preparing atomic.Int64
	maxBusy   atomic.Int64
}

func (s *slowPrinter) Prepare(ev *watch.Event) printer.Prepared {
	n := s.preparing.Add(1)
	for {
		m := s.maxBusy.Load()
		if n <= m || s.maxBusy.CompareAndSwap(m, n) {
			break
		}
	}
	if rand.IntN(3) == 0 {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
	s.preparing.Add(-1)
	s.prepared.Add(1)
	return printer.Prepared{}
}

func (s *slowPrinter) PrintPrepared(ev *watch.Event, _ printer.Prepared) error {
	if s.release != nil {
		<-s.release
	}
	s.mu.Lock()
	s.written = append(s.written, ev.Lifecycle.Items)
	s.mu.Unlock()
	return nil
}

func (s *slowPrinter) WriteOut(dropped, ev *watch.Event, pr printer.Prepared, _ bool) error {
	if dropped != nil {
		if err := s.PrintPrepared(dropped, printer.Prepared{}); err != nil {
			return err
		}
	}
	if ev.Type == "" {
		return nil
	}
	return s.PrintPrepared(ev, pr)
}

func (s *slowPrinter) Flush() error { return nil }

func (s *slowPrinter) writtenCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.written)
}

func typedLine(i int) watch.Event {
	return watch.Event{Type: watch.Added, Lifecycle: watch.LifecycleInfo{Items: i}, Obj: watch.ObjectInfo{Typed: &corev1.Pod{}}}
}

// Workers finishing in any order, the writer still writes the outbox's order.
func TestDrainAheadKeepsOrder(t *testing.T) {
	const n = 3000
	s := &slowPrinter{}
	outbox := NewOutbox(100, false, nil)
	go func() {
		for i := range n {
			ev := typedLine(i)
			if i%5 == 0 {
				ev = watch.Event{Type: watch.Bookmark, Lifecycle: watch.LifecycleInfo{Items: i}}
			}
			outbox.Put(ev)
		}
		outbox.Close()
	}()
	if err := drainAhead(outbox, s, 4, func() {}); err != nil {
		t.Fatal(err)
	}
	if len(s.written) != n {
		t.Fatalf("%d lines written, want %d", len(s.written), n)
	}
	for i, got := range s.written {
		if got != i {
			t.Fatalf("line %d written as number %d: order lost", i, got)
		}
	}
	if s.maxBusy.Load() < 2 {
		t.Logf("the workers never overlapped (a busy machine); order checked all the same")
	}
}

// A writer that does not write takes at most aheadWindow lines (and two in hand) out of the
// outbox: what waits stays in the bounded outbox, and the informers wait for it as before.
func TestDrainAheadBoundedUnderSlowWriter(t *testing.T) {
	const n, buffer = 1000, 300
	s := &slowPrinter{release: make(chan struct{})}
	outbox := NewOutbox(buffer, false, nil)
	put := atomic.Int64{}
	go func() {
		for i := range n {
			outbox.Put(typedLine(i))
			put.Add(1)
		}
		outbox.Close()
	}()
	done := make(chan error, 1)
	go func() { done <- drainAhead(outbox, s, 4, func() {}) }()
	// Stuck writer: the outbox fills to its bound, the stage holds its window.
	for (outbox.Len() < buffer || put.Load() < buffer+aheadWindow+2) && put.Load() < n {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // room for a stage that would take more
	if taken := int(put.Load()) - outbox.Len(); taken > aheadWindow+2 {
		t.Fatalf("%d lines out of the outbox with none written, want at most %d", taken, aheadWindow+2)
	}
	if got := s.prepared.Load(); got > aheadWindow+2 {
		t.Fatalf("%d lines prepared with none written, want at most %d", got, aheadWindow+2)
	}
	if put.Load() == n {
		t.Fatal("every Put returned with none written: the outbox did not hold the informers back")
	}
	close(s.release) // the writer goes on
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.writtenCount() != n {
		t.Fatalf("%d lines written, want %d", s.writtenCount(), n)
	}
	for i, got := range s.written {
		if got != i {
			t.Fatalf("line %d written as number %d", i, got)
		}
	}
}

// After a write error the stage drains without writing (nothing waits on it) and says so once.
func TestDrainAheadWriteErrorCancelsAndDrains(t *testing.T) {
	var buf failingWriter
	p := printer.New(&buf, printer.Options{Output: "json", FlushEach: true})
	outbox := NewOutbox(8, false, nil)
	go func() {
		for _, ev := range aheadEvents(100) {
			outbox.Put(ev)
		}
		outbox.Close()
	}()
	var cancels atomic.Int64
	if err := drainAhead(outbox, p, 2, func() { cancels.Add(1) }); err == nil {
		t.Fatal("no error from a writer that fails")
	}
	if cancels.Load() != 1 {
		t.Fatalf("cancel called %d times, want once", cancels.Load())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("stdout closed") }
