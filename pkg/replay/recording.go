package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Recording is a recorded event stream, read into memory.
type Recording struct {
	// Header is the recording's first header; nil for plain `-o json` output.
	Header *recording.Header
	// Events are every event of the recording, in order.
	Events []watch.Event

	mu  sync.Mutex
	lws []*ListerWatcher
}

// Open reads the recording at path. Any damaged line is an error naming it; lines of a type
// this build does not know are skipped, as are unknown fields.
func Open(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// Read reads a recording from r, as Open does.
func Read(r io.Reader) (*Recording, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	rec := &Recording{}
	for {
		line, err := rd.Next()
		var unknown *recording.UnknownTypeError
		switch {
		case errors.Is(err, io.EOF):
			return rec, nil
		case errors.As(err, &unknown):
			continue
		case err != nil:
			return nil, err
		}
		if line.Header != nil {
			if rec.Header == nil {
				rec.Header = line.Header
			}
			continue
		}
		rec.Events = append(rec.Events, line.Event)
	}
}

// FromEvents makes a recording of events, for tests that build their traffic in code.
func FromEvents(events []watch.Event) *Recording {
	return &Recording{Events: events}
}

// Resources returns the recording's resources: the header's, else those the events name, in the
// order they first appear.
func (r *Recording) Resources() []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	seen := map[schema.GroupVersionResource]bool{}
	add := func(gvr schema.GroupVersionResource) {
		if gvr.Resource != "" && !seen[gvr] {
			seen[gvr] = true
			out = append(out, gvr)
		}
	}
	if r.Header != nil {
		for _, res := range r.Header.ResourceList() {
			add(res.GVR())
		}
	}
	for i := range r.Events {
		ev := &r.Events[i]
		if ev.Type == watch.Informer && ev.Lifecycle.Info != nil {
			for _, res := range append(append([]discovery.Resource{}, ev.Lifecycle.Info.Resources...), ev.Lifecycle.Info.OwnedResources...) {
				add(res.GVR())
			}
			continue
		}
		if ev.Type.IsObject() {
			add(ev.Resource.GVR())
		}
	}
	return out
}

// HandlerCalls returns the object events of gvr that a ResourceEventHandler of a shared informer
// without a resync period receives when fed the recording, in order: every recorded Added,
// Updated and Deleted but the periodic resyncs (Sync deltas), which the recording's informer
// made itself. A test can wait for this many calls.
//
// A relist's unchanged redeliveries (Updated, delta Replaced, same resourceVersion) are
// included: client-go starts every handler as "due for resync" and, without a resync period,
// never re-evaluates it, so such handlers do receive them. Tombstones arrive as
// cache.DeletedFinalStateUnknown; when one relist removed several objects, their order is the
// one client-go finds them in (map order).
func (r *Recording) HandlerCalls(gvr schema.GroupVersionResource) []watch.Event {
	var out []watch.Event
	for _, ev := range r.Events {
		if !ev.Type.IsObject() || ev.Resource.GVR() != gvr || ev.Obj.Delta == watch.DeltaSync {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// ListerWatcher returns a ListerWatcher serving gvr's recorded traffic to one informer (see
// ListerWatcher). A resource the recording does not hold is served as empty.
func (r *Recording) ListerWatcher(gvr schema.GroupVersionResource) *ListerWatcher {
	segs, end := buildScript(r.Events, gvr)
	lw := newListerWatcher(gvr, segs, end)
	r.mu.Lock()
	r.lws = append(r.lws, lw)
	r.mu.Unlock()
	return lw
}

// Done returns a channel closed once every ListerWatcher made by r so far has delivered its
// whole recording (see ListerWatcher.Done).
func (r *Recording) Done() <-chan struct{} {
	r.mu.Lock()
	lws := append([]*ListerWatcher(nil), r.lws...)
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, lw := range lws {
			<-lw.Done()
		}
		close(done)
	}()
	return done
}
