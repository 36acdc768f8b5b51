package printer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// screen is a terminal: the progress line and the output write to it in turn.
type screen struct{ bytes.Buffer }

// WriteOut erases the progress line before it writes, prints the Dropped line first, and
// flushes only when asked.
func TestWriteOutClearsThenWritesThenFlushes(t *testing.T) {
	var s screen
	l := NewProgressLine(&s, 80)
	p := New(&s, Options{Output: "json"})
	p.ClearsFirst(l)
	l.Update([]apistats.Progress{{Resource: "pods", Objects: 3, Pages: 1}})
	ev := &watch.Event{Type: watch.Synced, Time: time.Unix(0, 0)}
	dropped := &watch.Event{Type: watch.Dropped, Time: time.Unix(0, 0), Lifecycle: watch.LifecycleInfo{Items: 2}}
	if err := p.WriteOut(dropped, ev, Prepared{}, false); err != nil {
		t.Fatal(err)
	}
	shown := s.String()
	if !strings.HasSuffix(shown, eraseLine) {
		t.Fatalf("the progress line not erased first (or the line not held until a flush): %q", shown)
	}
	if err := p.WriteOut(nil, &watch.Event{}, Prepared{}, true); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimPrefix(s.String(), shown)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"type":"Dropped"`) || !strings.Contains(lines[1], `"type":"Synced"`) {
		t.Errorf("flushed %q, want the Dropped line then the Synced line", out)
	}
}
