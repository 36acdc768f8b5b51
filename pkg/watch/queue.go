package watch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// QueueConfig describes the controller-style workqueue behind the informer and the simulated
// workers that drain it.
type QueueConfig struct {
	Workers       int           // simulated workers (>= 1)
	ReconcileTime time.Duration // simulated work per key
	FailRate      float64       // fraction of reconciles that fail (0..1)
	RateLimiter   string        // one of RateLimiters
	// Rand returns a number in [0,1); nil uses math/rand. Tests set it.
	Rand func() float64
}

// RateLimiters are the --rate-limiter choices, named after client-go's constructors.
var RateLimiters = []string{"default", "exponential", "bucket", "fast-slow"}

// QueueFigures are the queue's standard metrics at one moment.
type QueueFigures struct {
	Depth   int64 `json:"depth"`
	Adds    int64 `json:"adds"`
	Retries int64 `json:"retries"`
}

// newRateLimiter returns client-go's rate limiter for a --rate-limiter name.
func newRateLimiter(name string) (workqueue.TypedRateLimiter[string], error) {
	switch name {
	case "", "default":
		// max(per-item exponential 5ms..1000s, overall token bucket 10 qps / burst 100)
		return workqueue.DefaultTypedControllerRateLimiter[string](), nil
	case "exponential":
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second), nil
	case "bucket":
		return &workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)}, nil
	case "fast-slow":
		return workqueue.NewTypedItemFastSlowRateLimiter[string](5*time.Millisecond, 10*time.Second, 5), nil
	}
	return nil, fmt.Errorf("unknown rate limiter %q", name)
}

// queueMetrics records the standard workqueue metrics for one named queue; it is the queue's
// MetricsProvider, so the figures are exactly what a controller's /metrics would export.
type queueMetrics struct {
	depth, adds, retries      atomic.Int64
	latencyCount, workCount   atomic.Int64
	unfinished, longestRunner atomic.Uint64 // float64 bits
}

type gauge struct{ v *atomic.Int64 }

func (g gauge) Inc() { g.v.Add(1) }
func (g gauge) Dec() { g.v.Add(-1) }

type counter struct{ v *atomic.Int64 }

func (c counter) Inc() { c.v.Add(1) }

type histogram struct{ count *atomic.Int64 }

func (h histogram) Observe(float64) { h.count.Add(1) }

type settable struct{ v *atomic.Uint64 }

func (s settable) Set(f float64) { s.v.Store(math.Float64bits(f)) }

func (m *queueMetrics) NewDepthMetric(string) workqueue.GaugeMetric     { return gauge{&m.depth} }
func (m *queueMetrics) NewAddsMetric(string) workqueue.CounterMetric    { return counter{&m.adds} }
func (m *queueMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return counter{&m.retries} }
func (m *queueMetrics) NewLatencyMetric(string) workqueue.HistogramMetric {
	return histogram{&m.latencyCount}
}
func (m *queueMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return histogram{&m.workCount}
}
func (m *queueMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return settable{&m.unfinished}
}
func (m *queueMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return settable{&m.longestRunner}
}

// workQueue is a controller's queue: handlers add namespace/name keys, keys coalesce while they
// wait, workers reconcile them and failures come back rate-limited.
type workQueue struct {
	cfg     QueueConfig
	q       workqueue.TypedRateLimitingInterface[string]
	metrics *queueMetrics

	mu      sync.Mutex
	waiting map[string]*pending // what each key waits with, since a worker last took it
	rnd     func() float64
}

// pending is what a queued key waits with: when it was first added, the events that added it
// (they coalesce into one reconcile), and whether a failed reconcile put it back.
type pending struct {
	since    time.Time
	count    int
	triggers []Trigger
	requeue  bool
	// first holds the first trigger: most keys wait with one, kept with no allocation of its own.
	first [1]Trigger
}

// newPending is what a key waits with from since.
func newPending(since time.Time) *pending {
	p := &pending{since: since}
	p.triggers = p.first[:0]
	return p
}

// note keeps t among p's triggers: the first two, then the newest, up to MaxTriggers.
func (p *pending) note(t Trigger) {
	p.count++
	if len(p.triggers) == MaxTriggers {
		p.triggers = append(p.triggers[:2], p.triggers[3:]...)
	}
	p.triggers = append(p.triggers, t)
}

func newWorkQueue(name string, cfg QueueConfig) (*workQueue, error) {
	limiter, err := newRateLimiter(cfg.RateLimiter)
	if err != nil {
		return nil, err
	}
	m := &queueMetrics{}
	wq := &workQueue{
		cfg:     cfg,
		metrics: m,
		waiting: map[string]*pending{},
		rnd:     cfg.Rand,
		q: workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[string]{
			Name:            name,
			MetricsProvider: m,
		}),
	}
	if wq.rnd == nil {
		wq.rnd = rand.Float64
	}
	return wq, nil
}

// add enqueues key for the event t as an event handler would, and returns the figures right
// after.
func (wq *workQueue) add(key string, t Trigger) *QueueFigures {
	wq.mu.Lock()
	wq.pendingLocked(key, t.Time).note(t)
	wq.q.Add(key)
	wq.mu.Unlock()
	return wq.figures()
}

// pendingLocked returns what key waits with, starting it at now if it was not waiting.
func (wq *workQueue) pendingLocked(key string, now time.Time) *pending {
	p, ok := wq.waiting[key]
	if !ok {
		p = newPending(now)
		wq.waiting[key] = p
	}
	return p
}

func (wq *workQueue) figures() *QueueFigures {
	return &QueueFigures{Depth: wq.metrics.depth.Load(), Adds: wq.metrics.adds.Load(), Retries: wq.metrics.retries.Load()}
}

// run starts the workers; they stop when the queue shuts down.
func (wq *workQueue) run(ctx context.Context, wg *sync.WaitGroup, emit func(Event)) {
	workers := max(wq.cfg.Workers, 1)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wq.processNext(ctx, emit) {
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		wq.q.ShutDown()
	}()
}

func (wq *workQueue) processNext(ctx context.Context, emit func(Event)) bool {
	key, shutdown := wq.q.Get()
	if shutdown {
		return false
	}
	got := time.Now()
	wq.mu.Lock()
	p := wq.waiting[key]
	delete(wq.waiting, key)
	wq.mu.Unlock()
	if p == nil {
		p = newPending(got)
	}
	wait := got.Sub(p.since)
	if wq.cfg.ReconcileTime > 0 {
		t := time.NewTimer(wq.cfg.ReconcileTime)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	requeues := wq.q.NumRequeues(key)
	failed := wq.cfg.FailRate > 0 && wq.rnd() < wq.cfg.FailRate
	if failed {
		wq.mu.Lock()
		// The retry's wait counts from the failure, so it includes the backoff.
		wq.pendingLocked(key, time.Now()).requeue = true
		wq.q.AddRateLimited(key)
		wq.mu.Unlock()
	} else {
		wq.q.Forget(key)
	}
	work := time.Since(got)
	wq.q.Done(key)
	triggers := p.triggers
	if len(triggers) == 0 { // none: nil, as a key that waited with no trigger always had
		triggers = nil
	}
	ev := Event{
		Type: Reconciled,
		Key:  key,
		Queued: QueuedInfo{
			Wait:         wait,
			Work:         work,
			Requeues:     requeues,
			Failed:       failed,
			TriggerCount: p.count,
			Triggers:     triggers,
			Requeue:      p.requeue,
		},
		Obj: ObjectInfo{Queue: wq.figures()},
	}
	if p.requeue {
		ev.Queued.RequeueReason = "its previous reconcile failed (simulated by --fail-rate) and the key was requeued rate-limited"
	}
	emit(ev)
	return true
}
