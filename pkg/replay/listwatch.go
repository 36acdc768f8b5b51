package replay

import (
	"context"
	"errors"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ListerWatcher serves one resource's recorded traffic to one informer's reflector, in order:
//
//   - the first List returns the recorded initial list, with its resourceVersion;
//   - Watch then sends the recorded watch deltas as ADDED, MODIFIED and DELETED events carrying
//     the recorded objects and resourceVersions;
//   - where the recording has a relist, the watch ends with a 410 Expired ERROR event, as a
//     server's does when the resourceVersion is too old; the reflector lists again (after its
//     usual backoff, about a second) and the next List returns the list the recording's relist
//     received. Objects missing from it reach handlers as cache.DeletedFinalStateUnknown
//     tombstones, exactly as client-go makes them;
//   - after the last event the watch stays open and quiet, as a server with nothing to say.
//     Later Lists return the final list again.
//
// Periodic resyncs are not wire traffic and are not served: an informer with a resync period
// makes its own. List and watch options (selectors, namespace) are ignored: the recording is
// what it is. Streaming lists (WatchList) are declined, so the reflector uses LIST and WATCH.
// Use one ListerWatcher per informer.
type ListerWatcher struct {
	gvr      schema.GroupVersionResource
	gvk      schema.GroupVersionKind
	segments []segment
	end      segment // the cache after the last event

	mu     sync.Mutex
	listed int // segments served by List so far; the watch serves segments[listed-1]
	sent   int // events of that segment delivered

	done     chan struct{}
	doneOnce sync.Once
}

var (
	_ cache.ListerWatcher            = &ListerWatcher{}
	_ cache.ListerWatcherWithContext = &ListerWatcher{}
)

func newListerWatcher(gvr schema.GroupVersionResource, segs []segment, end segment) *ListerWatcher {
	lw := &ListerWatcher{gvr: gvr, segments: segs, end: end, done: make(chan struct{})}
	for _, s := range segs {
		for _, o := range s.list {
			lw.gvk = o.GroupVersionKind()
		}
		for _, e := range s.events {
			lw.gvk = e.Object.GetObjectKind().GroupVersionKind()
		}
		if !lw.gvk.Empty() {
			break
		}
	}
	return lw
}

// Done is closed once the reflector has received everything: the last list, and the last
// watch event of the recording. Its handlers may still be running; Recording.HandlerCalls says
// how many calls to wait for.
func (lw *ListerWatcher) Done() <-chan struct{} { return lw.done }

// Relists returns how many relists the recording holds for this resource: each costs the
// reflector's backoff (about a second) when replayed.
func (lw *ListerWatcher) Relists() int { return len(lw.segments) - 1 }

// IsWatchListSemanticsUnSupported tells client-go's reflector not to use streaming lists
// (WatchList) with this ListerWatcher, so it lists and watches.
func (lw *ListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

// List returns the next recorded list.
func (lw *ListerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), options)
}

// Watch starts a watch that sends the recorded events after the last list.
func (lw *ListerWatcher) Watch(options metav1.ListOptions) (watchapi.Interface, error) {
	return lw.WatchWithContext(context.Background(), options)
}

// ListWithContext returns the next recorded list; after the last one, the cache as the
// recording leaves it.
func (lw *ListerWatcher) ListWithContext(_ context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	var seg segment
	switch {
	case lw.listed < len(lw.segments):
		lw.listed++
		lw.sent = 0
		seg = lw.segments[lw.listed-1]
	default: // listed again after the end: the final state, and no events to follow
		seg = lw.end
		lw.sent = len(lw.segments[lw.listed-1].events)
	}
	lw.mu.Unlock()

	list := &unstructured.UnstructuredList{Object: map[string]any{}}
	if !lw.gvk.Empty() {
		list.SetAPIVersion(lw.gvk.GroupVersion().String())
		list.SetKind(lw.gvk.Kind + "List")
	}
	list.SetResourceVersion(seg.rv)
	for _, o := range seg.list {
		list.Items = append(list.Items, *o.DeepCopy())
	}
	return list, nil
}

// WatchWithContext starts a watch that sends the recorded events after the last list.
func (lw *ListerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watchapi.Interface, error) {
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return nil, errors.New("replay: streaming lists (WatchList) are not supported; list first")
	}
	lw.mu.Lock()
	if lw.listed == 0 { // a watch without a list: start after the initial list
		lw.listed = 1
	}
	lw.mu.Unlock()
	w := &watcher{result: make(chan watchapi.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go lw.serve(ctx, w)
	return w, nil
}

// serve sends the current segment's events from where the last watch left off; then either a
// 410 (a relist follows) or, at the end of the recording, a bookmark whose receipt tells that
// the reflector has taken in the last event.
func (lw *ListerWatcher) serve(ctx context.Context, w *watcher) {
	defer close(w.done)
	defer close(w.result)
	send := func(ev watchapi.Event) bool {
		select {
		case w.result <- ev:
			return true
		case <-w.stop:
		case <-ctx.Done():
		}
		return false
	}
	for {
		lw.mu.Lock()
		idx, i := lw.listed-1, lw.sent
		seg := lw.segments[idx]
		last := idx == len(lw.segments)-1
		lw.mu.Unlock()
		if i < len(seg.events) {
			ev := seg.events[i]
			ev.Object = ev.Object.DeepCopyObject()
			if !send(ev) {
				return
			}
			lw.mu.Lock()
			if lw.listed-1 == idx && lw.sent == i {
				lw.sent++
			}
			lw.mu.Unlock()
			continue
		}
		if !last {
			status := &metav1.Status{
				TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status:   metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
				Message: "replay: the recording relists here (too old resource version)",
			}
			send(watchapi.Event{Type: watchapi.Error, Object: status})
		} else {
			rv := seg.rv
			if n := len(seg.events); n > 0 {
				if o, ok := seg.events[n-1].Object.(*unstructured.Unstructured); ok {
					rv = o.GetResourceVersion()
				}
			}
			bookmark := &unstructured.Unstructured{Object: map[string]any{}}
			if !lw.gvk.Empty() {
				bookmark.SetGroupVersionKind(lw.gvk)
			}
			bookmark.SetResourceVersion(rv)
			if !send(watchapi.Event{Type: watchapi.Bookmark, Object: bookmark}) {
				return
			}
			lw.doneOnce.Do(func() { close(lw.done) })
		}
		select {
		case <-w.stop:
		case <-ctx.Done():
		}
		return
	}
}

// watcher is one watch: events on result until Stop.
type watcher struct {
	result   chan watchapi.Event
	stop     chan struct{}
	done     chan struct{} // serve has returned: what it sent is counted
	stopOnce sync.Once
}

// Stop ends the watch and returns once its goroutine has counted every event it delivered, so
// that the next watch resumes right after the last event received, never repeating it.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

func (w *watcher) ResultChan() <-chan watchapi.Event { return w.result }
