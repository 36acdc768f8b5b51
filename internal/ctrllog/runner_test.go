package ctrllog

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// feedFunc is a Feed.
type feedFunc func(ctx context.Context, s Sink)

func (f feedFunc) Run(ctx context.Context, s Sink) { f(ctx, s) }

// A Feed's logs go through the same reconstruction as a file's: a log opened again (a stream
// reconnected) goes on with the reconcile it was in, and its Error lines come out at once.
func TestRunnerFeed(t *testing.T) {
	const start = `{"level":"Level(-5)","ts":"2026-11-25T03:27:20.1Z","msg":"Reconciling","controller":"widget","controllerKind":"Widget","Widget":{"name":"shop","namespace":"demo"},"namespace":"demo","name":"shop","reconcileID":"r1"}`
	const end = `{"level":"Level(-5)","ts":"2026-11-25T03:27:20.2Z","msg":"Reconcile successful","controller":"widget","controllerKind":"Widget","Widget":{"name":"shop","namespace":"demo"},"namespace":"demo","name":"shop","reconcileID":"r1"}`
	fed := make(chan struct{})
	feed := feedFunc(func(ctx context.Context, s Sink) {
		s.Open("demo/pod/mgr-1/manager")([]byte(start), time.Now())
		s.Event(watch.Event{Type: watch.Error, Lifecycle: watch.LifecycleInfo{Verb: "logs", Reason: "PodLogFailed", Message: "stream broke"}})
		s.Open("demo/pod/mgr-1/manager")([]byte(end), time.Now())
		close(fed)
		<-ctx.Done()
	})
	r := Start(context.Background(), Config{Feeds: []Feed{feed}, Join: JoinConfig{Resources: []discovery.Resource{widgets}, Hold: time.Hour}})
	<-fed
	select {
	case <-r.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("the Error line was not ready")
	}
	if held, evs := r.Take(); len(held) != 0 || len(evs) != 1 || evs[0].Type != watch.Error || evs[0].Time.IsZero() {
		t.Fatalf("taken %v, want the Error line, timed", evs)
	}
	evs := r.Stop()
	if len(evs) != 1 || evs[0].Reconcile == nil {
		t.Fatalf("at Stop %v, want one ControllerReconcile", evs)
	}
	rc := evs[0].Reconcile
	if rc.ReconcileID != "r1" || rc.Result != ResultOK || rc.Source != "demo/pod/mgr-1/manager" || rc.Lines != 2 {
		t.Errorf("reconcile %+v: want r1 ok from the pod's log, of 2 lines", rc)
	}
	if st := r.Stats(); len(st) != 1 || st[0].Lines != 2 {
		t.Errorf("stats %+v, want one log of 2 lines", st)
	}
}

// The reading says when it falls behind its logs, and by how much (HOSTILE-CASES-2 F2: a log
// growing at 100,000 lines a second fell behind silently): an Error line (LogBehind) when a
// followed file stays more than behindBytes from its end for three checks, or the join takes
// reconciles before their hold is over; a Recovered line once it caught up. Once each.
func TestBehindSaysSo(t *testing.T) {
	b := &behind{}
	lag := b.file("flood.log")
	check := func(early int) (watch.Event, bool) { return b.check(t0, early, MaxPending) }
	lag.Store(behindBytes + 1)
	for i := range 2 {
		if ev, ok := check(0); ok {
			t.Fatalf("check %d: %v, want nothing before three checks behind", i, ev)
		}
	}
	ev, ok := check(0)
	if !ok || ev.Type != watch.Error || ev.Lifecycle.Reason != ReasonLogBehind || !strings.Contains(ev.Lifecycle.Message, "flood.log is read 8.0 MiB from its end") {
		t.Fatalf("third check behind: %v %+v, want an Error line LogBehind naming the file and how far", ok, ev)
	}
	if ev, ok := check(5); ok {
		t.Fatalf("still behind: %+v, want nothing more", ev)
	}
	lag.Store(0)
	if ev, ok := check(7); ok {
		t.Fatalf("reconciles still joined early: %+v, want nothing", ev)
	}
	ev, ok = check(7)
	if !ok || ev.Type != watch.Recovered || !strings.Contains(ev.Lifecycle.Message, "7 reconciles joined early") {
		t.Fatalf("caught up: %v %+v, want a Recovered line counting the reconciles joined early", ok, ev)
	}
	// The join alone falling behind (standard input, pods' logs: no file to measure).
	ev, ok = check(9)
	if !ok || ev.Lifecycle.Reason != ReasonLogBehind || !strings.Contains(ev.Lifecycle.Message, "9 reconciles were joined before their hold was over") {
		t.Fatalf("reconciles joined early: %v %+v, want an Error line LogBehind counting them", ok, ev)
	}
}

// A log that never stops (a controller in a hot loop) is read within bounds: past MaxPending
// held reconciles the first are joined early, the reader waits while maxOut lines wait for the
// pipeline, and the run's end (Stop) ends the reading and returns at most what the bounds hold
// (HOSTILE-CASES-2 F2: unbounded, and joined quadratically at the end, it kept a run going for
// minutes past --timeout). MaxPending is 1,000 here (131,072 by default).
func TestRunnerBoundsAnEndlessLog(t *testing.T) {
	const maxPending = 1000
	var fed atomic.Int64
	feed := feedFunc(func(ctx context.Context, s Sink) {
		line := s.Open("hot.log")
		for i := 0; ctx.Err() == nil; i++ {
			l := fmt.Sprintf(`{"level":"info","ts":%q,"msg":"Reconcile successful","controller":"hot","controllerKind":"Widget","namespace":"demo","name":"w-%d","reconcileID":"r%d"}`,
				time.Now().UTC().Format(time.RFC3339Nano), i%100, i)
			line([]byte(l), time.Now())
			fed.Add(1)
		}
	})
	r := Start(context.Background(), Config{Feeds: []Feed{feed}, Join: JoinConfig{Resources: []discovery.Resource{widgets}, Hold: time.Hour, MaxPending: maxPending}})
	// The reader waits for the pipeline: nothing is taken here.
	deadline := time.Now().Add(time.Minute)
	for r.waits.Load() == 0 {
		if n := fed.Load(); n > maxPending+maxOut+1 {
			t.Fatalf("%d lines read with nothing taken and the reader never waited, want it to wait past %d", n, maxPending+maxOut)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reader did not wait within a minute, after %d lines", fed.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := fed.Load(); n > maxPending+maxOut+1 {
		t.Errorf("%d lines read with nothing taken, want the reader to wait past %d", n, maxPending+maxOut)
	}
	evs := r.Stop()
	_, taken := r.Take()
	if n := len(evs) + len(taken); n > maxPending+2*maxOut {
		t.Errorf("%d lines at Stop, more than the %d held and %d waiting for the pipeline", n, maxPending, maxOut)
	}
}
