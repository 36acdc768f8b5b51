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
	// Feeds are logs read otherwise (a workload's pods through the API server).
	Feeds []Feed
	Join  JoinConfig
	// Notice is told, once each, of a file not there yet and of a source that failed.
	Notice func(string)
}

// A Feed reads logs that are not files (the pods of a workload, through the API server) until
// ctx ends: it opens each log it reads with Sink.Open, hands that log's lines, in their order,
// to the function Open returns, and says its failures as Error lines through Sink.Event.
type Feed interface {
	Run(ctx context.Context, sink Sink)
}

// Sink is what a Feed hands its logs to. Its functions are safe for concurrent use.
type Sink struct {
	// Open returns where the lines of the log named source go (line, and when it was read):
	// a log opened again (a stream reconnected) goes on where it was.
	Open func(source string) func(line []byte, read time.Time)
	// Event passes an Error or Recovered line on, as soon as it can.
	Event func(watch.Event)
	// Notice says something on stderr.
	Notice func(string)
}

// Runner follows controllers' logs and joins their reconciles to the watch: the event loop
// calls Observe with every event, takes the ControllerReconcile events when Ready says there
// are some, and Stop at the end. Safe for concurrent use; a nil Runner does nothing.
type Runner struct {
	mu   sync.Mutex
	join *Join
	// srcMu guards recs, locks and bySource (a Feed opens logs while the run goes on).
	srcMu    sync.Mutex
	recs     []*Reconstructor
	locks    []*sync.Mutex
	bySource map[string]func([]byte, time.Time)
	out      []watch.Event
	ready    chan struct{}
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// Start starts following cfg.Sources and cfg.Feeds; nil when there are none.
func Start(ctx context.Context, cfg Config) *Runner {
	if len(cfg.Sources) == 0 && len(cfg.Feeds) == 0 {
		return nil
	}
	if cfg.Join.Hold == 0 {
		cfg.Join.Hold = DefaultHold
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Runner{join: NewJoin(cfg.Join), ready: make(chan struct{}, 1), cancel: cancel, bySource: map[string]func([]byte, time.Time){}}
	notice := cfg.Notice
	if notice == nil {
		notice = func(string) {}
	}
	for _, src := range cfg.Sources {
		line := r.newSource(src)
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
	sink := Sink{Open: r.open, Event: r.event, Notice: notice}
	for _, f := range cfg.Feeds {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			f.Run(ctx, sink)
		}()
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.tick(ctx)
	}()
	return r
}

// open returns the line function of the log named source, made on its first use: one
// Reconstructor per log, kept across reopenings.
func (r *Runner) open(source string) func([]byte, time.Time) {
	r.srcMu.Lock()
	defer r.srcMu.Unlock()
	line, ok := r.bySource[source]
	if !ok {
		line = r.addSource(source)
		r.bySource[source] = line
	}
	return line
}

// newSource adds a Reconstructor for the log named source and returns its line function.
func (r *Runner) newSource(source string) func([]byte, time.Time) {
	r.srcMu.Lock()
	defer r.srcMu.Unlock()
	return r.addSource(source)
}

// addSource is newSource with srcMu held.
func (r *Runner) addSource(source string) func([]byte, time.Time) {
	rc, mu := NewReconstructor(source), &sync.Mutex{}
	r.recs, r.locks = append(r.recs, rc), append(r.locks, mu)
	return func(b []byte, now time.Time) {
		mu.Lock()
		done := rc.Feed(b, now)
		mu.Unlock()
		r.add(done)
	}
}

// sources returns the reconstructors so far, with their locks.
func (r *Runner) sources() ([]*Reconstructor, []*sync.Mutex) {
	r.srcMu.Lock()
	defer r.srcMu.Unlock()
	return r.recs, r.locks
}

// event passes a Feed's Error or Recovered line on at once.
func (r *Runner) event(ev watch.Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	r.mu.Lock()
	r.out = append(r.out, ev)
	r.mu.Unlock()
	r.signal()
}

func (r *Runner) signal() {
	select {
	case r.ready <- struct{}{}:
	default:
	}
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
			recs, locks := r.sources()
			for i, rc := range recs {
				locks[i].Lock()
				done := rc.Due(now, idle)
				locks[i].Unlock()
				r.add(done)
			}
			r.mu.Lock()
			evs := r.join.Due(now)
			r.out = append(r.out, evs...)
			r.mu.Unlock()
			if len(evs) > 0 {
				r.signal()
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
	recs, locks := r.sources()
	for i, rc := range recs {
		locks[i].Lock()
		done := rc.Flush()
		locks[i].Unlock()
		r.add(done)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(r.out, r.join.Flush()...)
	r.out = nil
	return out
}

// Stats are the counts of each log, in the order of Config.Sources and then of the logs the
// Feeds opened.
func (r *Runner) Stats() []Stats {
	if r == nil {
		return nil
	}
	recs, locks := r.sources()
	out := make([]Stats, len(recs))
	for i, rc := range recs {
		locks[i].Lock()
		out[i] = rc.Stats
		out[i].ByFormat = map[Format]int{}
		for k, v := range rc.Stats.ByFormat {
			out[i].ByFormat[k] = v
		}
		locks[i].Unlock()
	}
	return out
}
