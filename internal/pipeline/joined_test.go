package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// fakeJoined holds the lines whose name has its prefix and hands them back on Take and Drain,
// marked with its name.
type fakeJoined struct {
	name, prefix string
	held         []watch.Event
	ready        chan struct{}
}

func newFake(name, prefix string) *fakeJoined {
	return &fakeJoined{name: name, prefix: prefix, ready: make(chan struct{}, 1)}
}

func (f *fakeJoined) Hold(ev watch.Event, _ time.Time) bool {
	if !strings.HasPrefix(ev.Name, f.prefix) || strings.Contains(ev.Lifecycle.Reason, f.name) {
		return false
	}
	f.held = append(f.held, ev)
	select {
	case f.ready <- struct{}{}:
	default:
	}
	return true
}
func (f *fakeJoined) Ready() <-chan struct{} { return f.ready }
func (f *fakeJoined) Take() (held, own []watch.Event) {
	for _, ev := range f.held {
		ev.Lifecycle.Reason += f.name
		held = append(held, ev)
	}
	f.held = nil
	return held, []watch.Event{{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Reason: f.name}}}
}
func (f *fakeJoined) Drain() []watch.Event { h, _ := f.Take(); return h }
func (f *fakeJoined) Stop() []watch.Event  { return nil }

// A line the audit log holds and hands back is offered to the controllers' logs next, so it
// waits for both; each source's own lines pass on.
func TestChain(t *testing.T) {
	if Chain(nil, nil) != nil {
		t.Fatal("Chain(nil, nil) is not nil")
	}
	first, then := newFake("audit", "x"), newFake("logs", "xy")
	if Chain(first, nil) != Joined(first) || Chain(nil, then) != Joined(then) {
		t.Fatal("Chain with one source is not that source")
	}
	c := Chain(first, then)
	defer c.Stop()
	now := time.Now()
	for _, name := range []string{"xa", "xyb", "other"} {
		held := c.Hold(watch.Event{Type: watch.Added, Name: name}, now)
		if held != (name != "other") {
			t.Errorf("%s held: %v", name, held)
		}
	}
	select {
	case <-c.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	held, own := c.Take()
	if len(held) != 2 || held[0].Name != "xa" || held[0].Lifecycle.Reason != "audit" || held[1].Name != "xyb" || held[1].Lifecycle.Reason != "auditlogs" {
		t.Errorf("held: %+v, want xa from the audit log, then xyb through both", held)
	}
	if len(own) != 2 {
		t.Errorf("own lines %+v, want one of each source", own)
	}
	c.Hold(watch.Event{Type: watch.Added, Name: "xyc"}, now)
	if d := c.Drain(); len(d) != 1 || d[0].Lifecycle.Reason != "auditlogs" {
		t.Errorf("drained %+v, want xyc through both", d)
	}
}
