package pipeline

import (
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Live is what feeds a live run's pipeline: the informers' lines (ordered by Reorder), other
// sources' lines, the API accounting, and the clocks of the stages.
type Live struct {
	// Informers delivers the informers' lines; closed when they end, which ends the run.
	Informers <-chan watch.Event
	// Reorder puts lines of several streams back in the server's order; nil or Window 0: the
	// lines pass as they come, without it.
	Reorder *watch.Reorder
	// Lines are other sources' lines (the scrapers', later controllers' logs): no analysis.
	Lines <-chan watch.Event
	// Stats is the API accounting: its notices become Throttled lines, and every APIInterval
	// (0: only at the end) its figures become ApiStats lines, of the Accounted resources.
	Stats       *apistats.Recorder
	Accounted   []discovery.Resource
	APIInterval time.Duration
	// StdoutGone reports that the reader went away: no final figures then.
	StdoutGone func() bool
	// Progress shows the lists under way on a terminal's stderr; nil: not a terminal.
	Progress *printer.ProgressLine
	// Joined is a source whose lines are joined to the run's (controllers' logs: it sees every
	// line through Config.Observe); nil: none.
	Joined Joined
}

// Joined hands its lines when Ready says it has some, and those it still holds at Stop, once
// the informers ended. It may also hold informer lines before their analysis (Hold: controllers'
// logs name the writer of an update no managedFields entry explains) and hand them back through
// Take and Drain, to be analyzed then.
type Joined interface {
	Hold(ev watch.Event, now time.Time) bool
	Ready() <-chan struct{}
	Take() (held, own []watch.Event)
	Drain() []watch.Event
	Stop() []watch.Event
}

// foldTick bounds how late a live run emits a Folded line after its interval (wall clock).
const foldTick = 100 * time.Millisecond

// Run is a live run's loop: every line of every source goes through the stages until the
// informers' channel closes; then what the stages hold is passed on, the API accounting's
// last notices and, unless stdout went away, its final figures.
func (p *Pipeline) Run(l Live) {
	api := newAPILines(l.Stats, l.Accounted)
	tk := newTickers(l, p)
	defer tk.stop()
	informers := l.Informers
	for informers != nil {
		select {
		case <-tk.fold:
			p.FoldDue(time.Now())
		case n := <-l.Stats.Notices():
			p.Handle(api.throttled(n))
		case <-tk.api:
			for _, ev := range api.figures(false) {
				p.Handle(ev)
			}
		case <-tk.progress:
			l.Progress.Update(l.Stats.Progress())
		case ev, ok := <-informers:
			if !p.informed(l, ev, ok) {
				informers = nil
				continue
			}
			// The lines already waiting (a list's) are taken without a select each.
		batch:
			for range informedBatch {
				select {
				case ev, ok := <-informers:
					if !p.informed(l, ev, ok) {
						informers = nil
						break batch
					}
				default:
					break batch
				}
			}
		case <-tk.order:
			p.processAll(l.Joined, l.Reorder.Due(time.Now()))
		case <-tk.hot:
			p.Ended(time.Now())
		case ev := <-l.Lines:
			p.Handle(ev)
		case <-joinedReady(l.Joined):
			held, own := l.Joined.Take()
			p.processAll(nil, held)
			for _, ev := range own {
				p.Handle(ev)
			}
		}
	}
	if l.Joined != nil {
		p.processAll(nil, l.Joined.Drain())
		for _, ev := range l.Joined.Stop() {
			p.Handle(ev)
		}
	}
	l.Progress.Clear()
	p.Close(time.Now()) // deleted objects, windows passed
	for drained := false; !drained; {
		select {
		case n := <-l.Stats.Notices():
			p.Handle(api.throttled(n))
		default:
			drained = true
		}
	}
	if l.StdoutGone == nil || !l.StdoutGone() {
		for _, ev := range api.figures(true) {
			p.Handle(ev)
		}
	}
}

// informedBatch is how many informer lines Run takes at most before it looks at its other
// sources again.
const informedBatch = 256

// informed passes a line of the informers (ok: the channel is open) through the ordering and
// the stages; at the channel's close, what the ordering holds. False once closed.
// Without a window (one resource) the ordering is not asked: each line passes as it comes.
func (p *Pipeline) informed(l Live, ev watch.Event, ok bool) bool {
	reorders := l.Reorder != nil && l.Reorder.Window > 0
	switch {
	case !ok && reorders:
		p.processAll(l.Joined, l.Reorder.Flush())
	case !ok:
	case reorders:
		p.processAll(l.Joined, l.Reorder.Push(ev, time.Now()))
	default:
		// In place, in a slot the pipeline keeps: the line is not moved to the heap.
		p.one[0] = ev
		p.processAll(l.Joined, p.one[:])
		p.one[0] = watch.Event{}
	}
	return ok
}

// joinedReady is j's Ready; nil (never ready) without one.
func joinedReady(j Joined) <-chan struct{} {
	if j == nil {
		return nil
	}
	return j.Ready()
}

// processAll analyzes the informers' lines, but those j holds (nil: none).
func (p *Pipeline) processAll(j Joined, evs []watch.Event) {
	now := time.Now()
	for i := range evs {
		if j != nil && j.Hold(evs[i], now) {
			continue
		}
		p.Process(&evs[i])
	}
}

// tickers are the live run's clocks; a nil channel never fires.
type tickers struct {
	order, hot, fold, api, progress <-chan time.Time
	all                             []*time.Ticker
}

func newTickers(l Live, p *Pipeline) *tickers {
	t := &tickers{}
	every := func(d time.Duration) <-chan time.Time {
		tk := time.NewTicker(d)
		t.all = append(t.all, tk)
		return tk.C
	}
	if l.Reorder != nil && l.Reorder.Window > 0 {
		t.order = every(max(l.Reorder.Window/4, 10*time.Millisecond))
	}
	// A hot loop ends when a whole window passes without an update: looked for every second.
	if p.step.Detects() {
		t.hot = every(time.Second)
	}
	// A Folded line is due when its interval is over, also when no later update closes it.
	if p.folder != nil {
		t.fold = every(foldTick)
	}
	if l.APIInterval > 0 {
		t.api = every(l.APIInterval)
	}
	if l.Progress != nil {
		t.progress = every(250 * time.Millisecond)
	}
	return t
}

func (t *tickers) stop() {
	for _, tk := range t.all {
		tk.Stop()
	}
}

// apiLines turns the API accounting's figures and notices into lines.
type apiLines struct {
	stats     *apistats.Recorder
	resources map[string]discovery.Resource
}

func newAPILines(stats *apistats.Recorder, resources []discovery.Resource) *apiLines {
	m := map[string]discovery.Resource{}
	for _, r := range resources {
		m[r.String()] = r
	}
	return &apiLines{stats: stats, resources: m}
}

// figures returns an ApiStats line per resource.
func (a *apiLines) figures(final bool) []watch.Event {
	var evs []watch.Event
	now := time.Now()
	for _, s := range a.stats.Snapshots() {
		s := s
		evs = append(evs, watch.Event{Type: watch.ApiStats, Time: now, Resource: a.resources[s.Resource], Stats: watch.StatsInfo{API: &s, Final: final}})
	}
	return evs
}

// throttled turns a notice into a Throttled line.
func (a *apiLines) throttled(n apistats.Notice) watch.Event {
	ev := watch.Event{
		Type:     watch.Throttled,
		Time:     n.Time,
		Resource: a.resources[n.Resource],
		Lifecycle: watch.LifecycleInfo{
			Verb:     n.Verb,
			Reason:   string(n.Kind),
			Duration: n.Delay,
		},
		Stats: watch.StatsInfo{RetryAfter: n.RetryAfter},
	}
	if n.APF.FlowSchemaUID != "" || n.APF.PriorityLevelUID != "" {
		apf := n.APF
		ev.Stats.APF = &apf
	}
	return ev
}
