package replay

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// segment is one complete list and the watch events that followed it, up to the next relist.
type segment struct {
	rv     string
	list   []*unstructured.Unstructured
	events []watchapi.Event
}

// objects is the informer's cache as the recording tells it, in delivery order.
type objects struct {
	keys []string
	objs map[string]*unstructured.Unstructured
}

func newObjects() *objects { return &objects{objs: map[string]*unstructured.Unstructured{}} }

func (o *objects) set(key string, u *unstructured.Unstructured) {
	if _, ok := o.objs[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.objs[key] = u
}

func (o *objects) remove(key string) {
	if _, ok := o.objs[key]; !ok {
		return
	}
	delete(o.objs, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *objects) list() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(o.keys))
	for _, k := range o.keys {
		out = append(out, o.objs[k])
	}
	return out
}

// buildScript turns gvr's recorded events into what a server would have sent the reflector:
// a list, watch events, and at each relist a new list.
//
//   - The initial list is the objects delivered with delta Replaced before the first watch
//     delta; its resourceVersion the Synced line's (else the List's or the initial-events-end
//     Bookmark's).
//   - Watch deltas (Added, Updated, Deleted) become ADDED, MODIFIED and DELETED events.
//   - A Relist line starts a new list: the cache as it was, less the tombstones that follow,
//     with the Replaced deliveries that follow; its resourceVersion the Relist's. Replaced
//     deliveries or tombstones after watch deltas without a Relist line (a filtered recording)
//     start one too.
//   - Periodic resyncs (Sync deltas) are not wire traffic: skipped.
//
// It also returns the cache after the last event, for Lists after the end.
func buildScript(events []watch.Event, gvr schema.GroupVersionResource) ([]segment, segment) {
	sb := &scriptBuilder{state: newObjects()}
	sb.start("")
	for i := range events {
		ev := &events[i]
		if ev.Resource.GVR() != gvr {
			continue
		}
		switch ev.Type {
		case watch.List:
			sb.listRV = ev.ResourceVersion
		case watch.Bookmark:
			if ev.Lifecycle.InitialEventsEnd {
				sb.listRV = ev.ResourceVersion
			}
		case watch.Synced:
			if sb.listing != nil && len(sb.segs) == 1 {
				sb.cur().rv = ev.ResourceVersion
			}
			sb.finish()
		case watch.Relist:
			sb.finish()
			sb.start(ev.ResourceVersion)
		case watch.Added, watch.Updated, watch.Deleted:
			sb.object(ev)
		}
	}
	sb.finish()
	cur := sb.cur()
	end := segment{rv: cur.rv, list: sb.state.list()}
	if n := len(cur.events); n > 0 {
		end.rv = cur.events[n-1].Object.(*unstructured.Unstructured).GetResourceVersion()
	}
	return sb.segs, end
}

// scriptBuilder is buildScript's state as it goes through the events.
type scriptBuilder struct {
	segs       []segment
	state      *objects // the cache after the events so far
	listing    *objects // the list being assembled; nil while watching
	tombstoned map[string]bool
	listRV     string // the last List or initial-events-end Bookmark
}

func (sb *scriptBuilder) cur() *segment { return &sb.segs[len(sb.segs)-1] }

func (sb *scriptBuilder) start(rv string) {
	sb.segs = append(sb.segs, segment{rv: rv})
	sb.listing, sb.tombstoned = newObjects(), map[string]bool{}
}

// finish ends the listing phase: the list is what was delivered, in order, then the cached
// objects the recording did not redeliver (unchanged ones it left out).
func (sb *scriptBuilder) finish() {
	if sb.listing == nil {
		return
	}
	for _, k := range sb.state.keys {
		if _, ok := sb.listing.objs[k]; !ok && !sb.tombstoned[k] {
			sb.listing.set(k, sb.state.objs[k])
		}
	}
	sb.state = sb.listing
	seg := sb.cur()
	seg.list = sb.listing.list()
	if seg.rv == "" {
		seg.rv = sb.listRV
	}
	if seg.rv == "" {
		seg.rv = maxRV(seg.list)
	}
	sb.listing = nil
}

// object takes an object event: a list delivery (Replaced, or a tombstone) goes into the list
// being assembled, a watch delta becomes a watch event.
func (sb *scriptBuilder) object(ev *watch.Event) {
	obj := wireObject(ev)
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	switch {
	case ev.Obj.Delta == watch.DeltaSync:
		return
	case ev.Obj.Delta == watch.DeltaReplaced || ev.Obj.Tombstone:
		if sb.listing == nil {
			sb.start("")
		}
		if ev.Obj.Tombstone {
			sb.listing.remove(key)
			sb.tombstoned[key] = true
		} else {
			sb.listing.set(key, obj)
		}
		return
	}
	sb.finish()
	typ := watchapi.Added
	switch ev.Obj.Delta {
	case watch.DeltaUpdated:
		typ = watchapi.Modified
	case watch.DeltaDeleted:
		typ = watchapi.Deleted
	}
	if ev.Obj.Delta == "" { // a hand-written line: go by its type
		typ = map[watch.Type]watchapi.EventType{watch.Added: watchapi.Added, watch.Updated: watchapi.Modified, watch.Deleted: watchapi.Deleted}[ev.Type]
	}
	if typ == watchapi.Deleted {
		sb.state.remove(key)
	} else {
		sb.state.set(key, obj)
	}
	sb.cur().events = append(sb.cur().events, watchapi.Event{Type: typ, Object: obj})
}

// wireObject is the object an event line carries, as the server sent it: with its kind and the
// line's resourceVersion, name and namespace (filled in when a hand-written line leaves them out).
func wireObject(ev *watch.Event) *unstructured.Unstructured {
	var u *unstructured.Unstructured
	if ev.Obj.Object != nil {
		u = ev.Obj.Object.DeepCopy()
	} else {
		u = &unstructured.Unstructured{Object: map[string]any{}}
	}
	if u.GetAPIVersion() == "" && ev.Resource.Version != "" {
		u.SetAPIVersion(schema.GroupVersion{Group: ev.Resource.Group, Version: ev.Resource.Version}.String())
	}
	if u.GetKind() == "" && ev.Resource.Kind != "" {
		u.SetKind(ev.Resource.Kind)
	}
	if u.GetName() == "" {
		u.SetName(ev.Name)
	}
	if u.GetNamespace() == "" && ev.Namespace != "" {
		u.SetNamespace(ev.Namespace)
	}
	if ev.ResourceVersion != "" {
		u.SetResourceVersion(ev.ResourceVersion)
	}
	return u
}

// maxRV is the largest numeric resourceVersion among objs, or "" (a list without a recorded
// resourceVersion).
func maxRV(objs []*unstructured.Unstructured) string {
	var best uint64
	var out string
	for _, o := range objs {
		if n, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64); err == nil && n >= best {
			best, out = n, o.GetResourceVersion()
		}
	}
	return out
}
