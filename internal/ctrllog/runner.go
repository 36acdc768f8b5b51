package ctrllog

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// idle is how long a reconcile whose end the log does not say (no "Reconcile successful" below
// verbosity 5) stays open after its last line.
const idle = time.Second

// Config says which logs a Runner reads and how it joins them.
type Config struct {
	// Sources are files to follow; "-" is Stdin.
	Sources []string
	Stdin   io.Reader
	Join    JoinConfig
	// Notice is told, once each, of a file not there yet and of a source that failed.
	Notice func(string)
}

// Runner follows controllers' logs and joins their reconciles to the watch: the event loop
// calls Observe with every event, takes the ControllerReconcile events when Ready says there
// are some, and Stop at the end. Safe for concurrent use; a nil Runner does nothing.
type Runner struct {
	mu     sync.Mutex
	join   *Join
	recs   []*Reconstructor
	locks  []*sync.Mutex
	out    []watch.Event
	ready  chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start starts following cfg.Sources; nil when there are none.
func Start(ctx context.Context, cfg Config) *Runner {
	if len(cfg.Sources) == 0 {
		return nil
	}
	if cfg.Join.Hold == 0 {
		cfg.Join.Hold = DefaultHold
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Runner{join: NewJoin(cfg.Join), ready: make(chan struct{}, 1), cancel: cancel}
	notice := cfg.Notice
	if notice == nil {
		notice = func(string) {}
	}
	for _, src := range cfg.Sources {
		rc, mu := NewReconstructor(src), &sync.Mutex{}
		r.recs, r.locks = append(r.recs, rc), append(r.locks, mu)
		line := func(b []byte, now time.Time) {
			mu.Lock()
			done := rc.Feed(b, now)
			mu.Unlock()
			r.add(done)
		}
		if src == "-" {
			// A read of standard input cannot be interrupted: Stop does not wait for it.
			go func() {
				if err := ReadStream(ctx, cfg.Stdin, line); err != nil {
					notice(fmt.Sprintf("--controller-logs -: %v", err))
				}
			}()
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := Follow(ctx, src, line, notice); err != nil {
				notice(fmt.Sprintf("--controller-logs %s: %v", src, err))
			}
		}()
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.tick(ctx)
	}()
	return r
}

// tick closes reconciles whose log went quiet and moves those whose hold is over to out.
func (r *Runner) tick(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for i, rc := range r.recs {
				r.locks[i].Lock()
				done := rc.Due(now, idle)
				r.locks[i].Unlock()
				r.add(done)
			}
			r.mu.Lock()
			evs := r.join.Due(now)
			r.out = append(r.out, evs...)
			r.mu.Unlock()
			if len(evs) > 0 {
				select {
				case r.ready <- struct{}{}:
				default:
				}
			}
		}
	}
}

func (r *Runner) add(rs []Reconcile) {
	if len(rs) == 0 {
		return
	}
	r.mu.Lock()
	for _, x := range rs {
		r.join.Add(x)
	}
	r.mu.Unlock()
}

// Observe notes a watch event (every one, after the analysis step).
func (r *Runner) Observe(ev *watch.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.join.Observe(ev)
	r.mu.Unlock()
}

// Ready says that Take has events.
func (r *Runner) Ready() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.ready
}

// Take returns the ControllerReconcile events ready so far.
func (r *Runner) Take() []watch.Event {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.out
	r.out = nil
	return out
}

// Stop stops reading and returns every reconcile still held, joined.
func (r *Runner) Stop() []watch.Event {
	if r == nil {
		return nil
	}
	r.cancel()
	r.wg.Wait()
	for i, rc := range r.recs {
		r.locks[i].Lock()
		done := rc.Flush()
		r.locks[i].Unlock()
		r.add(done)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(r.out, r.join.Flush()...)
	r.out = nil
	return out
}

// Stats are the counts of each source, in the order of Config.Sources.
func (r *Runner) Stats() []Stats {
	if r == nil {
		return nil
	}
	out := make([]Stats, len(r.recs))
	for i, rc := range r.recs {
		r.locks[i].Lock()
		out[i] = rc.Stats
		out[i].ByFormat = map[Format]int{}
		for k, v := range rc.Stats.ByFormat {
			out[i].ByFormat[k] = v
		}
		r.locks[i].Unlock()
	}
	return out
}
