package ctrllog

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"
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
	// Notice is told, once each, of a file not there yet, of a source that failed, and of a
	// log that shows no reconcile (Reconstructor.Silent).
	Notice func(string)
	// Keys are the keys --controller-log-keys names; nil: found by themselves.
	Keys *Keys
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
	// x holds the updates no managedFields entry explains until the logs may name their writer.
	x         *Explainer
	explained []watch.Event
	drained   bool
	// srcMu guards recs, locks and bySource (a Feed opens logs while the run goes on).
	srcMu    sync.Mutex
	recs     []*Reconstructor
	locks    []*sync.Mutex
	bySource map[string]func([]byte, time.Time)
	out      []watch.Event
	// room is closed by Take: a reader waiting for out to shrink goes on.
	room   chan struct{}
	ready  chan struct{}
	keys   *Keys
	notice func(string)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	behind *behind
	// waits counts the times a reader waited for room in out.
	waits atomic.Int64
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
	r := &Runner{join: NewJoin(cfg.Join), x: NewExplainer(cfg.Join.Skew, cfg.Join.Hold), ready: make(chan struct{}, 1), cancel: cancel,
		bySource: map[string]func([]byte, time.Time){}, ctx: ctx, room: make(chan struct{}), behind: &behind{}}
	notice := cfg.Notice
	if notice == nil {
		notice = func(string) {}
	}
	r.keys, r.notice = cfg.Keys, notice
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
		lag := r.behind.file(src)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := follow(ctx, src, line, notice, lag); err != nil {
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
	rc.Keys = r.keys
	r.recs, r.locks = append(r.recs, rc), append(r.locks, mu)
	return func(b []byte, now time.Time) {
		mu.Lock()
		done := rc.Feed(b, now)
		mu.Unlock()
		r.add(done)
		r.waitRoom()
	}
}

// maxOut bounds the lines waiting for the pipeline to take them: a reader with more waiting
// stops reading (it falls behind its log, and the Error line LogBehind says so) until the
// pipeline takes them, or the run ends.
const maxOut = 4096

// waitRoom waits, while the run goes on, for out to hold fewer than maxOut lines.
func (r *Runner) waitRoom() {
	for {
		r.mu.Lock()
		n, room := len(r.out), r.room
		r.mu.Unlock()
		if n < maxOut {
			return
		}
		r.waits.Add(1)
		r.signal()
		select {
		case <-r.ctx.Done():
			return
		case <-room:
		}
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
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if n%10 == 0 {
				r.checkBehind(now)
			}
			recs, locks := r.sources()
			for i, rc := range recs {
				locks[i].Lock()
				done := rc.Due(now, idle)
				silent := rc.Silent(now)
				locks[i].Unlock()
				if silent != "" {
					r.notice(silent)
				}
				r.add(done)
			}
			var open []span
			if r.holding() {
				open = r.openSpans() // only a held update is explained by the reconciles running
			}
			r.mu.Lock()
			expl := r.x.Due(now, open, false)
			r.explained = append(r.explained, expl...)
			evs := r.join.DueExcept(now, func(rc *Reconcile) bool {
				return r.x.Holds(rc.Object.Namespace, rc.Object.Name, startOf(rc).Add(r.join.cfg.Skew), now)
			})
			r.out = append(r.out, evs...)
			r.mu.Unlock()
			if len(evs)+len(expl) > 0 {
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
	n := len(r.out)
	for i := range rs {
		r.out = append(r.out, r.join.Add(rs[i])...)
		r.x.Ended(&rs[i], r.join.kindOf(rs[i].Object))
	}
	early := len(r.out) > n
	r.mu.Unlock()
	if early {
		r.signal()
	}
}

// checkBehind says, once a second, when the reading fell behind its logs (an Error line,
// LogBehind) and when it caught up again (Recovered).
func (r *Runner) checkBehind(now time.Time) {
	r.mu.Lock()
	early := r.join.Early
	r.mu.Unlock()
	if ev, ok := r.behind.check(now, early, r.join.cfg.MaxPending); ok {
		r.event(ev)
	}
}

// holding reports whether the explainer holds lines.
func (r *Runner) holding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.x.held) > 0
}

// openSpans are the reconciles still running by the logs read so far. One whose start was logged
// ("Reconciling", verbosity 5) will log its end: it runs until then. One whose start was not
// logged may have ended with its last line: it spans its lines only.
func (r *Runner) openSpans() []span {
	var recs []Reconcile
	srcs, locks := r.sources()
	for i, rc := range srcs {
		locks[i].Lock()
		rc.Open(func(rec *Reconcile) { recs = append(recs, *rec) })
		locks[i].Unlock()
	}
	if len(recs) == 0 {
		return nil
	}
	out := make([]span, len(recs))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range recs {
		out[i] = spanOf(&recs[i], r.join.kindOf(recs[i].Object))
		out[i].open = recs[i].DurationKnown
	}
	return out
}

// Hold takes an informer line before the pipeline analyzes it, and reports whether it is held
// (an update no managedFields entry explains, or a later line of such an object): it comes back
// through Take, its writer named when a log shows one of the object's reconciles running then.
func (r *Runner) Hold(ev watch.Event, now time.Time) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.x.Hold(ev, now)
}

// Observe notes a watch event (every one, after the analysis step).
func (r *Runner) Observe(ev *watch.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.join.Observe(ev)
	r.x.Observed(ev)
	r.mu.Unlock()
}

// Ready says that Take has events.
func (r *Runner) Ready() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.ready
}

// Take returns the lines ready so far: the informer lines Hold took (to analyze, first), and the
// ControllerReconcile, Error and Recovered lines.
func (r *Runner) Take() (held, own []watch.Event) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	held, own = r.explained, r.out
	r.explained, r.out = nil, nil
	close(r.room)
	r.room = make(chan struct{})
	return held, own
}

// Drain stops reading the logs and returns every informer line still held, explained by all
// the logs said; the pipeline analyzes them before Stop joins the last reconciles.
func (r *Runner) Drain() []watch.Event {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	drained := r.drained
	r.drained = true
	r.mu.Unlock()
	if !drained {
		r.cancel()
		r.wg.Wait()
		recs, locks := r.sources()
		for i, rc := range recs {
			locks[i].Lock()
			done := rc.Flush()
			locks[i].Unlock()
			r.add(done)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(r.explained, r.x.Due(time.Now(), nil, true)...)
	r.explained = nil
	return out
}

// Stop returns every reconcile still held, joined (after Drain; it drains when Drain was not
// called, and then the held informer lines come first, unanalyzed).
func (r *Runner) Stop() []watch.Event {
	if r == nil {
		return nil
	}
	held := r.Drain()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(held, r.out...)
	out = append(out, r.join.Flush()...)
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
		out[i].NoObjectBy = maps.Clone(rc.Stats.NoObjectBy)
		locks[i].Unlock()
	}
	return out
}
