package watch

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
)

// process is the informer's delta processor: it keeps the indexer exactly as client-go's
// processDeltas does and emits one event for each handler call a shared informer would make,
// labelled with the delta that caused it.
func (ri *resourceInformer) process(obj interface{}, isInInitialList bool) error {
	deltas, ok := obj.(cache.Deltas)
	if !ok {
		return fmt.Errorf("unexpected %T from the queue", obj)
	}
	for _, d := range deltas {
		switch d.Type {
		case cache.ReplacedAll:
			info, ok := d.Object.(cache.ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("ReplacedAll delta holds %T", d.Object)
			}
			if err := ri.replaceAll(info, isInInitialList); err != nil {
				return err
			}
		case cache.SyncAll:
			ri.resyncAll()
		case cache.Bookmark:
			if info, ok := d.Object.(cache.BookmarkInfo); ok {
				ri.indexer.Bookmark(info.ResourceVersion)
			}
		case cache.Deleted:
			if err := ri.deleted(d.Object, false); err != nil {
				return err
			}
		case cache.Added, cache.Updated, cache.Replaced, cache.Sync:
			if err := ri.upsert(d.Object, Delta(d.Type), isInInitialList); err != nil {
				return err
			}
		}
	}
	return nil
}

// The indexer keeps objects as the lister returned them: compact (compact.go: the encoded bytes
// and a few metadata fields, a fraction of an unstructured map), or PartialObjectMetadata with
// --metadata-only. Events carry unstructured objects, decoded here for the line that needs them
// and kept by nothing after it.

func (ri *resourceInformer) upsert(obj interface{}, delta Delta, initial bool) error {
	if _, ok := obj.(runtime.Object); !ok {
		return fmt.Errorf("unexpected object %T", obj)
	}
	old, exists, err := ri.indexer.Get(obj)
	if err != nil {
		return err
	}
	if exists {
		if err := ri.indexer.Update(obj); err != nil {
			return err
		}
		ri.emitUpdated(delta, obj, old, initial)
		return nil
	}
	if err := ri.indexer.Add(obj); err != nil {
		return err
	}
	ri.emitAdded(delta, obj, initial)
	return nil
}

func (ri *resourceInformer) deleted(obj interface{}, tombstone bool) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		tombstone = true
		if err := ri.indexer.Delete(d); err != nil {
			return err
		}
		u, t := ri.typedMap(d.Obj)
		if u == nil {
			// Never drop a delete: name it from its key.
			ns, name, _ := cache.SplitMetaNamespaceKey(d.Key)
			u = &unstructured.Unstructured{Object: map[string]interface{}{}}
			u.SetNamespace(ns)
			u.SetName(name)
		}
		ri.emitObjectTyped(Deleted, DeltaDeleted, u, nil, t, nil, false, tombstone)
		return nil
	}
	if err := ri.indexer.Delete(obj); err != nil {
		return err
	}
	u, t := ri.typedMap(obj)
	ri.emitObjectTyped(Deleted, DeltaDeleted, u, nil, t, nil, false, tombstone)
	return nil
}

// typedMap is toUnstructured of a cached object, with the object's Go type beside it when the
// run hands built-ins on typed (typedOf): the map is converted from that Go type, one decode of
// the bytes for both.
func (ri *resourceInformer) typedMap(o interface{}) (*unstructured.Unstructured, runtime.Object) {
	if t := ri.typedOf(o); t != nil {
		return toUnstructured(t), t
	}
	return toUnstructured(o), nil
}

// emitUpdated emits an Updated event of cur, whose cached version was old: both as maps (the
// diff and the attribution read them), with their Go types beside when the run hands them on.
func (ri *resourceInformer) emitUpdated(delta Delta, cur, old interface{}, initial bool) {
	u, t := ri.typedMap(cur)
	ou, ot := ri.typedMap(old)
	ri.emitObjectTyped(Updated, delta, u, ou, t, ot, initial, false)
}

// replaceAll handles a complete list (initial or relist) the way processReplacedAllInfo does:
// objects gone from the list become tombstone deletes, the rest adds or updates, deletes first.
func (ri *resourceInformer) replaceAll(info cache.ReplacedAllInfo, initial bool) error {
	li, _ := ri.tap.popList()
	// Objects as cached (compact): decoded one at a time when emitted.
	changes := make([]listChange, 0, len(info.Objects))
	// Into an empty cache (the first list) every object is an add and none is gone: no keys
	// to look up. Only this goroutine writes the cache: its keys are the same below.
	cached := ri.indexer.ListKeys()
	empty := len(cached) == 0
	var listed map[string]struct{}
	if !empty {
		listed = make(map[string]struct{}, len(info.Objects))
	}
	var counts RelistCounts
	for _, o := range info.Objects {
		if _, ok := o.(runtime.Object); !ok {
			return fmt.Errorf("unexpected object %T in list", o)
		}
		if empty {
			counts.Added++
			changes = append(changes, listChange{cur: o})
			continue
		}
		key, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			return err
		}
		listed[key] = struct{}{}
		old, exists, _ := ri.indexer.GetByKey(key)
		switch {
		case !exists:
			old = nil
			counts.Added++
		case resourceVersionOf(old) == resourceVersionOf(o):
			counts.Unchanged++
		default:
			counts.Updated++
		}
		changes = append(changes, listChange{old: old, cur: o})
	}
	var gone []interface{}
	for _, key := range cached {
		if _, ok := listed[key]; ok {
			continue
		}
		if o, exists, _ := ri.indexer.GetByKey(key); exists {
			gone = append(gone, o)
		}
	}
	counts.Deleted = len(gone)
	if err := ri.indexer.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	if !initial {
		ri.emit(ri.ctx, Event{
			Type: Relist,
			Lifecycle: LifecycleInfo{
				Reason:              li.reason,
				FromResourceVersion: li.fromRV,
				Counts:              counts,
			},
			ResourceVersion: info.ResourceVersion,
		})
	}
	for _, g := range gone {
		ri.emitObject(Deleted, DeltaDeleted, toUnstructured(g), nil, false, true)
	}
	ri.emitListed(changes, counts.Added, initial)
	if initial && !ri.synced {
		ri.emitSynced(info, li)
	}
	return nil
}

// emitSynced marks the informer synced and says so: the initial list is in the cache.
func (ri *resourceInformer) emitSynced(info cache.ReplacedAllInfo, li listInfo) {
	ri.synced = true
	ri.hasSynced.Store(true)
	synced := Event{
		Type: Synced,
		Lifecycle: LifecycleInfo{
			Items:    len(info.Objects),
			Duration: time.Since(ri.start),
			ListMode: ListModeList,
			FellBack: li.fellBack,
		},
		ResourceVersion: info.ResourceVersion,
	}
	if li.streaming {
		synced.Lifecycle.ListMode = ListModeWatchList
	}
	if ri.cfg.Name != "" && len(info.Objects) == 0 {
		synced.Lifecycle.NotFound = &ObjectKey{Namespace: ri.namespace(), Name: ri.cfg.Name}
	}
	ri.emit(ri.ctx, synced)
}

// listChange is a listed object (cur) and its cached version (old: nil when new).
type listChange struct{ old, cur interface{} }

// emitListed emits the lines of a list's objects, in the list's order: updates for those the
// cache had, adds for the others (added of them).
func (ri *resourceInformer) emitListed(changes []listChange, added int, initial bool) {
	// A large list's added objects are decoded on the other core while the lines go out.
	var ahead *typedAhead
	received := ri.takePrepared() // read as the list was received
	if ri.cfg.TypedObjects && added >= aheadMin {
		objs := make([]interface{}, len(changes))
		for i, c := range changes {
			if co, _ := c.cur.(*compactObject); received.of(co) != nil {
				continue
			}
			if c.old == nil {
				objs[i] = c.cur
			}
		}
		ahead = ri.decodeAhead(objs)
		defer ahead.stop()
	}
	prepared := 0
	defer func() {
		if prepared > 0 {
			klog.V(4).Infof("%s: %d lines of a list prepared as their objects were decoded (their state read without managedFields)", ri.res, prepared)
		}
	}()
	for _, c := range changes {
		var a aheadObject
		co, _ := c.cur.(*compactObject)
		if c.old == nil {
			a.prepared = received.of(co)
		}
		switch {
		case ahead != nil:
			if next := ahead.next(); a.prepared == nil {
				a = next
			}
		case c.old == nil && a.prepared == nil:
			a = ri.decodeOne(c.cur)
		}
		if co != nil {
			co.packReceived() // one the list's preparer did not reach, now read
		}
		if c.old != nil {
			ri.emitUpdated(DeltaReplaced, c.cur, c.old, initial)
			continue
		}
		if co != nil && a.prepared != nil {
			ri.emitPrepared(DeltaReplaced, co, a.prepared, initial)
			prepared++
			continue
		}
		ri.emitAddedTyped(DeltaReplaced, c.cur, a.typed, initial)
	}
}

// resyncAll is a periodic resync: every cached object is handed to the handler again, unchanged.
func (ri *resourceInformer) resyncAll() {
	objs := ri.indexer.List()
	ri.emit(ri.ctx, Event{Type: Resync, Lifecycle: LifecycleInfo{Items: len(objs)}})
	for _, o := range objs {
		u, t := ri.typedMap(o)
		ri.emitObjectTyped(Updated, DeltaSync, u, u, t, t, false, false)
	}
}

func (ri *resourceInformer) emitObject(t Type, delta Delta, cur, old *unstructured.Unstructured, initial, tombstone bool) {
	ri.emitObjectTyped(t, delta, cur, old, nil, nil, initial, tombstone)
}

// emitObjectTyped is emitObject with the objects' Go types beside their maps (nil: none).
func (ri *resourceInformer) emitObjectTyped(t Type, delta Delta, cur, old *unstructured.Unstructured, curTyped, oldTyped runtime.Object, initial, tombstone bool) {
	ev := Event{
		Type: t,
		Obj: ObjectInfo{
			Delta:       delta,
			InitialList: initial && t == Added,
			Tombstone:   tombstone,
			Object:      cur,
			OldObject:   old,
			Typed:       curTyped,
			OldTyped:    oldTyped,
		},
		Namespace:       cur.GetNamespace(),
		Name:            cur.GetName(),
		ResourceVersion: cur.GetResourceVersion(),
	}
	if old != nil {
		ev.Obj.OldResourceVersion = old.GetResourceVersion()
	}
	// Who made an update, once for every output (and for the trigger it becomes).
	if ev.IsChange() {
		a := diff.Attribute(old.Object, cur.Object, nil)
		ev.Obj.Attribution = &a
	}
	ri.emitEvent(&ev, cur)
}

// emitEvent stamps an object event, enqueues its key and emits it; obj is its object, for the key.
func (ri *resourceInformer) emitEvent(ev *Event, obj interface{}) {
	ev.Time = time.Now()
	// Enqueue the key as a controller's handler does, tombstones included, unless a
	// predicate drops the event first.
	// The object's events of an owned resource or of Events enqueue nothing here: --owned's
	// causality step enqueues an owned object's owner; an Event enqueues nothing.
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		if ev.Obj.Filtered = Filter(ri.cfg.Predicates, ev); !ri.notQueued {
			ev.Obj.Queue = ri.enqueue(key, triggerOf(ev), ev.Obj.Filtered)
		}
	}
	ri.emitPtr(ri.ctx, ev)
}

// enqueue adds key to the informer's queue for the event tr, as a controller's handler does
// (to the shadow queue too, with --predicate), unless a predicate filtered the event; it
// returns the queue's figures after, or nil when filtered.
func (ri *resourceInformer) enqueue(key string, tr Trigger, filtered string) *QueueFigures {
	if ri.shadow != nil {
		ri.shadow.add(key, tr)
	}
	if filtered != "" {
		return nil
	}
	return ri.queue.add(key, tr)
}

// triggerOf is the trigger an object event makes: its type, delta, resourceVersion and who
// made it.
func triggerOf(ev *Event) Trigger {
	tr := Trigger{Type: ev.Type, Delta: ev.Obj.Delta, ResourceVersion: ev.ResourceVersion, Time: ev.Time}
	if ev.Obj.Attribution != nil {
		tr.Attribution = ev.Obj.Attribution.Rule
		for _, m := range ev.Obj.Attribution.Managers {
			if !slices.Contains(tr.Managers, m.Manager) {
				tr.Managers = append(tr.Managers, m.Manager)
			}
		}
	}
	return tr
}
