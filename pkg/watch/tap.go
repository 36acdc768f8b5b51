package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
)

// initialEventsEndAnnotation marks the bookmark that ends a streaming list.
const initialEventsEndAnnotation = metav1.InitialEventsAnnotationKey

// listInfo is what the tap learned about one complete list (paged LIST or streaming WATCH),
// handed to the delta processor when the list's objects reach it.
type listInfo struct {
	initial   bool
	fromRV    string
	reason    string
	rv        string
	items     int
	streaming bool // a streaming list (WATCH with sendInitialEvents)
	fellBack  bool // a LIST after a streaming list was tried and failed
}

// tap sits between the reflector and the API client (the lister). It sees every LIST, WATCH, watch event
// and stream end, emits lifecycle events for them, and remembers what the delta processor needs
// to label a relist (why the watch was lost, and from which resourceVersion).
type tap struct {
	ri    *resourceInformer
	inner lister

	mu          sync.Mutex
	lastRV      string
	lastReason  string
	lastErrMsg  string
	listsDone   int
	pageStart   time.Time
	pageItems   int
	pageFromRV  string
	pageReason  string
	pendingList []listInfo
	failing     int      // list/watch errors since the last success
	failedVerbs []string // the verbs of those errors, first failed first
	streaming   bool     // a streaming list (WATCH with sendInitialEvents) was opened
	// streamTried: a streaming list was asked for (opened or not); a LIST after it is a fallback.
	streamTried bool
	pages       int       // pages of the list running now
	failedAt    time.Time // when the last attempt failed (zero after a success)
	apfShown    bool      // the APF classification was put on a List or Watch line
}

// key is the resource's name in the API accounting.
func (t *tap) key() string { return t.ri.res.String() }

// backoff returns how long ago the previous attempt failed (0 after a success): what the
// reflector waited before this attempt.
func (t *tap) backoff(start time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failedAt.IsZero() {
		return 0
	}
	return start.Sub(t.failedAt)
}

// apf returns the APF classification for the first List or Watch line, once.
func (t *tap) apf(ctx context.Context) *apistats.APF {
	t.mu.Lock()
	shown := t.apfShown
	t.mu.Unlock()
	if shown {
		return nil
	}
	a, ok := t.ri.cfg.Stats.APFOf(ctx, t.key())
	if !ok {
		return nil
	}
	t.mu.Lock()
	t.apfShown = true
	t.mu.Unlock()
	return &a
}

// streamingStarted reports whether a streaming list was opened.
func (t *tap) streamingStarted() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.streaming
}

// succeeded notes a list or watch call that worked, and says so after a failure streak.
func (t *tap) succeeded(ctx context.Context, verb string, backoff time.Duration) {
	t.ri.answered.Store(true)
	t.mu.Lock()
	n, failed := t.failing, t.failedVerbs
	t.failing, t.failedVerbs = 0, nil
	t.lastErrMsg = ""
	t.failedAt = time.Time{}
	t.mu.Unlock()
	if n > 0 {
		t.ri.emit(ctx, Event{Type: Recovered, Lifecycle: LifecycleInfo{Verb: verb, Backoff: backoff, Message: recoveredMessage(verb, n, failed)}})
	}
}

// recoveredMessage says which call works after n failed ones of the failed verbs: "again" only
// when the calls that failed were of that verb (a list that works after a failed watch was
// never broken).
func recoveredMessage(verb string, n int, failed []string) string {
	attempts := "attempts"
	if n == 1 {
		attempts = "attempt"
	}
	if len(failed) == 1 && failed[0] == verb {
		return fmt.Sprintf("%s works again after %d failed %s", verb, n, attempts)
	}
	return fmt.Sprintf("%s works, after %d failed %s of %s", verb, n, attempts, strings.Join(failed, " and "))
}

func (t *tap) beginList() (fromRV, reason string, initial bool) {
	return t.lastRV, t.lastReason, t.listsDone == 0
}

// finishList records a complete list and returns its info.
func (t *tap) finishList(rv string, items int, fromRV, reason string, streaming bool) listInfo {
	li := listInfo{initial: t.listsDone == 0, fromRV: fromRV, reason: reason, rv: rv, items: items,
		streaming: streaming, fellBack: !streaming && (t.streamTried || t.ri.fellBack.Load())}
	t.listsDone++
	t.lastRV = rv
	t.pendingList = append(t.pendingList, li)
	return li
}

// popList hands the oldest complete list to the delta processor.
func (t *tap) popList() (listInfo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pendingList) == 0 {
		return listInfo{}, false
	}
	li := t.pendingList[0]
	t.pendingList = t.pendingList[1:]
	return li, true
}

func (t *tap) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	stats := t.ri.cfg.Stats
	start := time.Now()
	t.mu.Lock()
	if opts.Continue == "" {
		t.pageStart, t.pageItems, t.pages = start, 0, 0
		t.pageFromRV, t.pageReason, _ = t.beginList()
		stats.ListBegin(t.key(), false)
	}
	t.mu.Unlock()

	obj, err := t.inner.List(apistats.WithResource(ctx, t.key(), apistats.VerbList), opts)
	if err != nil {
		stats.ListAbort(t.key())
		t.recordError(ctx, "list", err, t.backoff(start))
		return nil, err
	}
	t.succeeded(ctx, "list", t.backoff(start))
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, err
	}
	n := meta.LenList(obj)
	stats.ListPage(t.key(), n)
	t.mu.Lock()
	t.pageItems += n
	t.pages++
	if lm.GetContinue() != "" {
		t.mu.Unlock()
		return obj, nil
	}
	initial := t.listsDone == 0
	li := t.finishList(lm.GetResourceVersion(), t.pageItems, t.pageFromRV, t.pageReason, false)
	d := time.Since(t.pageStart)
	pages := t.pages
	t.mu.Unlock()
	stats.ListEnd(t.key())
	t.ri.emit(ctx, Event{Type: List, ResourceVersion: li.rv, Lifecycle: LifecycleInfo{Items: li.items, Duration: d, Initial: initial, Pages: pages}, Stats: StatsInfo{APF: t.apf(ctx)}})
	return obj, nil
}

func (t *tap) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	streaming := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	start := time.Now()
	stats := t.ri.cfg.Stats
	if streaming {
		t.mu.Lock()
		t.streamTried = true
		t.mu.Unlock()
		stats.ListBegin(t.key(), true)
	}
	w, err := t.inner.Watch(apistats.WithResource(ctx, t.key(), apistats.VerbWatch), opts)
	if err != nil {
		if streaming {
			stats.ListAbort(t.key())
		}
		t.recordError(ctx, "watch", err, t.backoff(start))
		return nil, err
	}
	t.succeeded(ctx, "watch", t.backoff(start))
	var timeout int64
	if opts.TimeoutSeconds != nil {
		timeout = *opts.TimeoutSeconds
	}
	tw := &tapWatcher{
		tap: t, inner: w, out: make(chan watch.Event), stopped: make(chan struct{}),
		start: start, timeout: timeout, streaming: streaming,
	}
	if streaming {
		t.mu.Lock()
		t.streaming = true
		tw.fromRV, tw.reason, _ = t.beginList()
		t.mu.Unlock()
	}
	t.ri.emit(ctx, Event{Type: Watch, ResourceVersion: opts.ResourceVersion, Lifecycle: LifecycleInfo{SendInitialEvents: streaming, TimeoutSeconds: timeout}, Stats: StatsInfo{APF: t.apf(ctx)}})
	t.ri.wg.Add(1)
	go tw.run(ctx)
	return tw, nil
}

// recordError emits an Error event for a failed call or stream, unless the same error was just
// reported (the reflector hands the error it got from the tap to its error handler as well).
func (t *tap) recordError(ctx context.Context, verb string, err error, backoff time.Duration) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return
	}
	msg := err.Error()
	reason := errorReason(err)
	t.mu.Lock()
	dup := msg == t.lastErrMsg
	t.lastErrMsg = msg
	t.lastReason = reason + ": " + msg
	if verb == "list" || verb == "watch" {
		t.failing++
		t.failedAt = time.Now()
		if !slices.Contains(t.failedVerbs, verb) {
			t.failedVerbs = append(t.failedVerbs, verb)
		}
	}
	t.mu.Unlock()
	if verb == "list" || verb == "watch" {
		t.ri.answered.Store(true)
	}
	// A debugging tool must not retry a forbidden initial list forever in silence the way a
	// reflector does: without permission there is nothing to show. Nor one the server refused
	// as a bad request (a --field-selector field it does not support): the user's error, which
	// no retry mends.
	if (apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)) && !t.ri.hasSynced.Load() {
		t.ri.forbidden(&ForbiddenError{Resource: t.ri.res.String(), Namespace: t.ri.namespace(), Verb: verb, Message: msg,
			BadRequest: apierrors.IsBadRequest(err)})
	}
	if dup {
		return
	}
	t.ri.emit(ctx, Event{Type: Error, Lifecycle: LifecycleInfo{Verb: verb, Reason: reason, Message: msg, Backoff: backoff}})
}

// errorReason names an error the way the API does (Forbidden, Expired, Timeout, ...), or by its
// network cause when the request never reached the server.
func errorReason(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	switch {
	case utilnet.IsConnectionRefused(err):
		return "ConnectionRefused"
	case utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return "ConnectionLost"
	case utilnet.IsTimeout(err):
		return "Timeout"
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return fmt.Sprintf("HTTP%d", se.ErrStatus.Code)
	}
	return "Unknown"
}

// tapWatcher forwards a watch stream to the reflector, looking at every event on the way.
type tapWatcher struct {
	tap       *tap
	inner     watch.Interface
	out       chan watch.Event
	stopped   chan struct{}
	stopOnce  sync.Once
	start     time.Time
	timeout   int64
	streaming bool // this watch is a streaming list until its initial-events-end bookmark
	fromRV    string
	reason    string
	items     int
	closeWhy  string
}

func (tw *tapWatcher) Stop() {
	tw.stopOnce.Do(func() { close(tw.stopped) })
	tw.inner.Stop()
}

func (tw *tapWatcher) ResultChan() <-chan watch.Event { return tw.out }

func (tw *tapWatcher) run(ctx context.Context) {
	defer tw.tap.ri.wg.Done()
	defer close(tw.out)
	defer func() {
		if tw.streaming { // the stream ended before its list did
			tw.tap.ri.cfg.Stats.ListAbort(tw.tap.key())
		}
	}()
	in, mapEvent := tw.events()
	for {
		select {
		case <-tw.stopped:
			return
		case ev, ok := <-in:
			if !ok {
				tw.closed(ctx)
				return
			}
			if mapEvent != nil {
				if ev, ok = mapEvent(ev); !ok {
					continue
				}
			}
			tw.observe(ctx, ev)
			select {
			case tw.out <- ev:
			case <-tw.stopped:
				tw.tap.ri.cfg.InFlight.forget(tw.tap.ri.res.String(), ev)
				return
			}
		}
	}
}

// events returns the inner watch's events, and the mapping to apply to each when the inner
// watch leaves it to its reader (eventMapper).
func (tw *tapWatcher) events() (<-chan watch.Event, func(watch.Event) (watch.Event, bool)) {
	if m, ok := tw.inner.(eventMapper); ok {
		return m.unmapped(), m.mapEvent
	}
	return tw.inner.ResultChan(), nil
}

func (tw *tapWatcher) observe(ctx context.Context, ev watch.Event) {
	t := tw.tap
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		t.ri.cfg.Stats.WatchObject(t.key(), false)
		if m, err := meta.Accessor(ev.Object); err == nil {
			t.mu.Lock()
			t.lastRV = m.GetResourceVersion()
			t.mu.Unlock()
			if rv, ok := parseRV(m.GetResourceVersion()); ok && !tw.streaming {
				t.ri.cfg.InFlight.received(t.ri.res.String(), rv, time.Now())
			}
		}
		if tw.streaming {
			tw.items++
		}
		if c, ok := ev.Object.(*compactObject); ok {
			// An object of an initial streaming list goes to the list's preparer, which packs
			// it once read (nothing unpacks it to read it); any other is packed here.
			if !tw.streaming || ev.Type != watch.Added || !t.ri.prepareReceived(c) {
				c.packReceived()
			}
		}
	case watch.Bookmark:
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			return
		}
		rv := m.GetResourceVersion()
		end := m.GetAnnotations()[initialEventsEndAnnotation] == "true"
		t.ri.cfg.Stats.WatchObject(t.key(), true)
		t.mu.Lock()
		t.lastRV = rv
		finished := end && tw.streaming
		if finished {
			tw.streaming = false
			t.finishList(rv, tw.items, tw.fromRV, tw.reason, true)
		}
		t.mu.Unlock()
		if finished {
			t.ri.cfg.Stats.ListEnd(t.key())
		}
		t.ri.emit(ctx, Event{Type: Bookmark, ResourceVersion: rv, Lifecycle: LifecycleInfo{InitialEventsEnd: end}})
	case watch.Error:
		err := apierrors.FromObject(ev.Object)
		tw.closeWhy = describeStreamError(err)
		t.recordError(ctx, "watch", err, 0)
	}
}

func describeStreamError(err error) string {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return "410 Gone: " + err.Error()
	}
	return err.Error()
}

// closed reports the end of a stream the reflector did not stop itself.
func (tw *tapWatcher) closed(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	lived := time.Since(tw.start)
	why := tw.closeWhy
	switch {
	case why != "":
	case tw.timeout > 0 && lived >= time.Duration(tw.timeout)*time.Second-time.Second:
		why = fmt.Sprintf("server timeout: the watch ended after %ds as requested", tw.timeout)
	default:
		why = fmt.Sprintf("connection lost or closed by the server after %s", lived.Round(time.Millisecond))
	}
	t := tw.tap
	t.mu.Lock()
	t.lastReason = why
	rv := t.lastRV
	t.mu.Unlock()
	t.ri.emit(ctx, Event{Type: WatchClosed, Lifecycle: LifecycleInfo{Reason: why}, ResourceVersion: rv})
}
