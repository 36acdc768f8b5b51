package pipeline

import (
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Chain joins two sources into one: a line first holds is offered to then when first hands it
// back (the audit log names who wrote it, then controllers' logs which reconcile), so a line
// waits for both in turn and keeps its object's order. Either may be nil (a nil interface);
// the result is nil when both are.
func Chain(first, then Joined) Joined {
	switch {
	case first == nil:
		return then
	case then == nil:
		return first
	}
	c := &chain{first: first, then: then, ready: make(chan struct{}, 1), done: make(chan struct{})}
	go c.forward()
	return c
}

type chain struct {
	first, then Joined
	ready       chan struct{}
	done        chan struct{}
	stopOnce    sync.Once
}

// forward says Ready when either source does, until Stop.
func (c *chain) forward() {
	for {
		select {
		case <-c.done:
			return
		case <-c.first.Ready():
		case <-c.then.Ready():
		}
		select {
		case c.ready <- struct{}{}:
		default:
		}
	}
}

func (c *chain) Hold(ev watch.Event, now time.Time) bool {
	return c.first.Hold(ev, now) || c.then.Hold(ev, now)
}

func (c *chain) Ready() <-chan struct{} { return c.ready }

// Take hands on what first released, but what then holds, and what then released.
func (c *chain) Take() (held, own []watch.Event) {
	h1, o1 := c.first.Take()
	now := time.Now()
	for _, ev := range h1 {
		if !c.then.Hold(ev, now) {
			held = append(held, ev)
		}
	}
	h2, o2 := c.then.Take()
	return append(held, h2...), append(o1, o2...)
}

func (c *chain) Drain() []watch.Event {
	var out []watch.Event
	now := time.Now()
	for _, ev := range c.first.Drain() {
		if !c.then.Hold(ev, now) {
			out = append(out, ev)
		}
	}
	return append(out, c.then.Drain()...)
}

func (c *chain) Stop() []watch.Event {
	c.stopOnce.Do(func() { close(c.done) })
	return append(c.first.Stop(), c.then.Stop()...)
}
