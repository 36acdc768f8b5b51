package audit

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/ctrllog"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// MaxLine bounds one audit line: ctrllog.Follow hands a longer one in pieces of this size (an
// event of a large object at RequestResponse level), and every piece of it is skipped.
const MaxLine = 1 << 20

// maxNotices bounds what a run says of lines it skips; later ones are only counted.
const maxNotices = 5

// LineReader turns a followed file's lines into audit events: a line over MaxLine and a line
// that is no audit event are skipped, each said once on Notice (up to maxNotices, the rest
// counted). Not safe for concurrent use.
type LineReader struct {
	Source string
	Notice func(string)
	// Event gets each audit event read.
	Event func(*Event)
	// WritesOnly skips, before decoding them, the lines whose verb is get, list or watch (the
	// join reads only writes).
	WritesOnly bool
	// Skipped counts the lines skipped.
	Skipped int
	said    int
	inLong  bool
	line    int
}

// Line reads one line (or piece of a long line) as ctrllog.Follow hands it.
func (r *LineReader) Line(b []byte, _ time.Time) {
	if len(b) >= MaxLine {
		if !r.inLong {
			r.line++
			r.skip(fmt.Sprintf("line %d is longer than %d KiB (the bound on one audit line): skipped", r.line, MaxLine>>10))
		}
		r.inLong = true
		return
	}
	if r.inLong {
		r.inLong = false // the long line's last piece
		return
	}
	r.line++
	if len(b) == 0 || (len(b) == 1 && b[0] == '\r') {
		return
	}
	if r.WritesOnly && isRead(firstVerb(b)) {
		return
	}
	ev, err := Parse(b)
	if err != nil {
		r.skip(fmt.Sprintf("line %d is not an audit event: %v", r.line, errText(err)))
		return
	}
	r.Event(&ev)
}

// verbKey starts an event's verb. The API server writes an event's fields in a fixed order, its
// verb before the user, the object reference and the bodies, so the first one is the request's
// (a string value cannot hold it: its quotes would be escaped).
var verbKey = []byte(`"verb":"`)

// firstVerb is the first verb of a line, "" when it has none.
func firstVerb(b []byte) string {
	i := bytes.Index(b, verbKey)
	if i < 0 {
		return ""
	}
	b = b[i+len(verbKey):]
	j := bytes.IndexByte(b, '"')
	if j < 0 {
		return ""
	}
	return string(b[:j])
}

// errText is a decode error without the bytes of the line (json's errors quote none; the
// message is bounded anyway).
func errText(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func (r *LineReader) skip(msg string) {
	r.Skipped++
	r.said++
	switch {
	case r.said < maxNotices:
		r.Notice(r.Source + ": " + msg)
	case r.said == maxNotices:
		r.Notice(r.Source + ": " + msg + " (further skipped lines are not said)")
	}
}

// Follow reads the audit log at path as `tail -F` does (ctrllog.Follow: across rotation and
// truncation, waiting for a file not there yet) and hands each event to event until ctx ends.
func Follow(ctx context.Context, path string, event func(*Event), notice func(string)) error {
	return follow(ctx, path, event, notice, false)
}

func follow(ctx context.Context, path string, event func(*Event), notice func(string), writesOnly bool) error {
	r := &LineReader{Source: "--audit-log " + path, Notice: notice, Event: event, WritesOnly: writesOnly}
	return ctrllog.Follow(ctx, path, r.Line, notice)
}

// Config says which audit log a Runner reads and how long a line waits for its write.
type Config struct {
	// Path is the audit log file to follow; Webhook a listener of the audit webhook backend.
	// Either or both.
	Path    string
	Webhook *Webhook
	// Wait is how long a line waits for its request (DefaultWait; 0: only what was read
	// already); Window is DefaultWindow when 0.
	Wait, Window time.Duration
	// Notice says something on stderr (a line skipped, the file not there yet, a failure).
	Notice func(string)
	// WritesOnly: only writes are read (the join); reads are skipped undecoded.
	WritesOnly bool
}

// Runner follows an audit log and joins it to a watch's object lines: a pipeline.Joined source
// holding each object line a write made until the audit event of that write is read (up to
// Config.Wait), then handing it back with Event.Obj.Audit set. Safe for concurrent use; a nil Runner
// does nothing.
type Runner struct {
	mu      sync.Mutex
	j       *Joiner
	out     []watch.Event
	ready   chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	drained bool
}

// Start starts following cfg.Path and serving cfg.Webhook; nil without either.
func Start(ctx context.Context, cfg Config) *Runner {
	if cfg.Path == "" && cfg.Webhook == nil {
		return nil
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Notice == nil {
		cfg.Notice = func(string) {}
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Runner{j: NewJoiner(cfg.Wait, cfg.Window), ready: make(chan struct{}, 1), cancel: cancel}
	cfg.WritesOnly = true
	Read(ctx, &r.wg, cfg, r.add)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.tick(ctx)
	}()
	return r
}

// add notes an audit event and hands back the lines it matches.
func (r *Runner) add(e *Event) {
	r.mu.Lock()
	n := 0
	if r.j.Add(e) {
		due := r.j.Due(time.Now(), false)
		r.out, n = append(r.out, due...), len(due)
	}
	r.mu.Unlock()
	if n > 0 {
		r.signal()
	}
}

// tick releases the lines whose wait is over.
func (r *Runner) tick(ctx context.Context) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.mu.Lock()
			due := r.j.Due(now, false)
			r.out = append(r.out, due...)
			r.mu.Unlock()
			if len(due) > 0 {
				r.signal()
			}
		}
	}
}

func (r *Runner) signal() {
	select {
	case r.ready <- struct{}{}:
	default:
	}
}

// Hold takes an object line a write made before its analysis; it comes back through Take.
func (r *Runner) Hold(ev watch.Event, now time.Time) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	held := r.j.Hold(ev, now)
	due := r.j.Ready() // matched at once: its audit event was read already
	r.out = append(r.out, due...)
	r.mu.Unlock()
	if len(due) > 0 {
		r.signal()
	}
	return held
}

// Ready says that Take has lines.
func (r *Runner) Ready() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.ready
}

// Take returns the held lines handed back so far; the audit log makes no lines of its own.
func (r *Runner) Take() (held, own []watch.Event) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	held, r.out = r.out, nil
	return held, nil
}

// Drain stops reading the log (what the file holds by now is read) and returns every line still
// held, matched by all it said.
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
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append(r.out, r.j.Due(time.Now(), true)...)
	r.out = nil
	return out
}

// Stop drains; nothing is left after.
func (r *Runner) Stop() []watch.Event {
	if r == nil {
		return nil
	}
	return r.Drain()
}

// Read follows cfg.Path and serves cfg.Webhook, each on a goroutine of wg, handing every event
// to event (safe for concurrent use) until ctx ends.
func Read(ctx context.Context, wg *sync.WaitGroup, cfg Config, event func(*Event)) {
	if cfg.Path != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := follow(ctx, cfg.Path, event, cfg.Notice, cfg.WritesOnly); err != nil {
				cfg.Notice(fmt.Sprintf("--audit-log %s: %v", cfg.Path, err))
			}
		}()
	}
	if cfg.Webhook != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cfg.Webhook.Serve(ctx, event, cfg.Notice, cfg.WritesOnly); err != nil {
				cfg.Notice(fmt.Sprintf("--audit-webhook-listen %s: %v", cfg.Webhook.Addr, err))
			}
		}()
	}
}
