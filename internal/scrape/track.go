package scrape

import (
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// SteadyEvery is how often a queue whose figures only move steadily (requeue timers: adds and
// reconciles at an unchanged rate, no change of depth, no failure) gets a line.
const SteadyEvery = time.Minute

// Tracker follows one endpoint's queues from scrape to scrape: it computes rates between
// scrapes and folds repeats, so that a quiet controller does not print the same line every
// interval, nor a controller whose requeue timers move its counters steadily more than one a
// minute. Not safe for concurrent use.
type Tracker struct {
	prev map[queueKey]tracked
	at   time.Time
}

type tracked struct {
	scraped watch.QueueSample // at the previous scrape
	shown   watch.QueueSample // at the queue's last line
	shownAt time.Time
	// addsRate is the adds per second from the line before the last to the last (-1: not known,
	// the last line was the first).
	addsRate float64
	folded   int // scrapes since the last line that found the queue unchanged
	steady   int // scrapes since the last line that found it moved only steadily
}

// NewTracker returns a Tracker that has seen nothing yet.
func NewTracker() *Tracker { return &Tracker{prev: map[queueKey]tracked{}} }

// Next takes the queues of a scrape made at now and returns those worth a line: every queue the
// first time it is seen, then only queues whose figures changed since their last line. Each
// returned sample carries its rates since the previous scrape (HasRates) and how many scrapes
// were folded since its last line (Folded).
func (t *Tracker) Next(now time.Time, queues []watch.QueueSample) []watch.QueueSample {
	dt := now.Sub(t.at).Seconds()
	seen := make(map[queueKey]bool, len(queues))
	var out []watch.QueueSample
	for _, q := range queues {
		k := queueKey{controller: q.Controller, name: q.Name}
		seen[k] = true
		p, ok := t.prev[k]
		if !ok {
			t.prev[k] = tracked{scraped: q, shown: q, shownAt: now, addsRate: -1}
			out = append(out, q)
			continue
		}
		if dt > 0 {
			setRates(&q, p.scraped, dt)
		}
		p.scraped = q
		if sameFigures(q, p.shown) {
			p.folded++
			t.prev[k] = p
			continue
		}
		rate := -1.0 // adds per second since the last line
		if since := now.Sub(p.shownAt).Seconds(); since > 0 && q.Adds >= p.shown.Adds {
			rate = (q.Adds - p.shown.Adds) / since
		}
		if !meaningful(q, p.shown, rate, p.addsRate) && now.Sub(p.shownAt) < SteadyEvery {
			p.steady++
			t.prev[k] = p
			continue
		}
		q.Folded, q.Steady = p.folded, p.steady
		p.shown, p.shownAt, p.addsRate, p.folded, p.steady = q, now, rate, 0, 0
		t.prev[k] = p
		out = append(out, q)
	}
	// A queue that left the page (a controller restarted without it) starts over if it returns.
	for k := range t.prev {
		if !seen[k] {
			delete(t.prev, k)
		}
	}
	t.at = now
	return out
}

// setRates sets q's per-second rates from prev, dt seconds earlier. A counter that went down
// (the process restarted) has no rate.
func setRates(q *watch.QueueSample, prev watch.QueueSample, dt float64) {
	rate := func(cur, old float64) (float64, bool) {
		if cur < old {
			return 0, false
		}
		return (cur - old) / dt, true
	}
	var ok [4]bool
	q.AddsPerSecond, ok[0] = rate(q.Adds, prev.Adds)
	q.RetriesPerSecond, ok[1] = rate(q.Retries, prev.Retries)
	q.ReconcilesPerSecond, ok[2] = rate(q.Reconciles.Total(), prev.Reconciles.Total())
	q.ReconcileErrorsPerSecond, ok[3] = rate(q.ReconcileErrors, prev.ReconcileErrors)
	q.HasRates = ok[0] && ok[1] && ok[2] && ok[3]
	if !q.HasRates {
		q.AddsPerSecond, q.RetriesPerSecond, q.ReconcilesPerSecond, q.ReconcileErrorsPerSecond = 0, 0, 0, 0
	}
}

// meaningful reports whether q, seen since the line of shown, is worth a line before a minute
// is over: its depth changed, a failure was counted (retries, errors, panics), the
// concurrency changed, or its adds started, stopped, or changed their rate (rate, since the
// last line) by more than half against the rate of the last line (was; -1 when not known).
func meaningful(q, shown watch.QueueSample, rate, was float64) bool {
	if q.Depth != shown.Depth || q.Retries != shown.Retries || q.ReconcileErrors != shown.ReconcileErrors ||
		q.TerminalReconcileErrors != shown.TerminalReconcileErrors || q.ReconcilePanics != shown.ReconcilePanics ||
		q.Reconciles.Error != shown.Reconciles.Error || q.MaxConcurrentReconciles != shown.MaxConcurrentReconciles {
		return true
	}
	switch {
	case rate < 0 || was < 0:
		return true
	case was == 0 || rate == 0:
		return (was == 0) != (rate == 0)
	}
	return rate > 2*was || rate < was/2
}

// sameFigures reports whether nothing a line shows changed: counters, depth, workers and the
// time of work in flight (quantiles move only when counters do).
func sameFigures(a, b watch.QueueSample) bool {
	return a.Depth == b.Depth && a.Adds == b.Adds && a.Retries == b.Retries &&
		a.UnfinishedSeconds == b.UnfinishedSeconds && a.LongestRunningSeconds == b.LongestRunningSeconds &&
		a.Reconciles == b.Reconciles && a.ReconcileErrors == b.ReconcileErrors &&
		a.TerminalReconcileErrors == b.TerminalReconcileErrors && a.ReconcilePanics == b.ReconcilePanics &&
		a.ActiveWorkers == b.ActiveWorkers && a.MaxConcurrentReconciles == b.MaxConcurrentReconciles
}
