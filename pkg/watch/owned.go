package watch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// causality sits between the informers and the run's output when --owned or --events is on. It
// keeps the owner tree, starts an informer for an owned resource when the first object that may
// own its objects appears, turns Events into KubeEvent lines, and lets through only the lines of
// objects in a watched tree (and the Events about them).
type causality struct {
	ctx  context.Context
	cfg  Config
	in   chan Event
	out  chan<- Event
	tree *ownerTree
	// roots are the watched resources, by resource name.
	roots map[string]bool
	owned map[string]bool
	// selector is the label selector owned informers list with, from the one named root's
	// spec.selector ("" until it is seen, or when there is none).
	selectors map[string]string
	// listedKube are the KubeEvent lines of the Events informer's initial list, held until it
	// and the watched resources' initial lists are in (syncedRes); kubeReleased once they went.
	listedKube   []Event
	syncedRes    map[string]bool
	kubeReleased bool

	// rootInformers are the watched resources' informers, by kind: an owned object's events
	// enqueue the root of its owner chain in its queue. Set before the informers run.
	rootInformers map[string]*resourceInformer

	mu      sync.Mutex // guards started and closed against stop
	started map[schema.GroupVersionResource]bool
	closed  bool
	wg      sync.WaitGroup
	done    chan struct{}
}

func newCausality(ctx context.Context, cfg Config, out chan<- Event) *causality {
	c := &causality{ctx: ctx, cfg: cfg, in: make(chan Event, 1024), out: out, roots: map[string]bool{}, owned: map[string]bool{},
		selectors: map[string]string{}, started: map[schema.GroupVersionResource]bool{}, done: make(chan struct{}),
		rootInformers: map[string]*resourceInformer{}}
	var kinds []schema.GroupKind
	for _, r := range cfg.Resources {
		c.roots[r.String()] = true
		kinds = append(kinds, r.GVK().GroupKind())
	}
	if cfg.Owned != nil {
		for _, r := range cfg.Owned.Resources {
			c.owned[r.String()] = true
			kinds = append(kinds, r.GVK().GroupKind())
		}
	}
	c.tree = newOwnerTree(kinds)
	go c.loop()
	return c
}

// loop hands on the informers' lines until stop closes in.
func (c *causality) loop() {
	defer close(c.done)
	send := func(evs []Event) {
		for _, e := range evs {
			select {
			case c.out <- e:
			case <-c.ctx.Done():
			}
		}
	}
	for ev := range c.in {
		send(c.handle(ev))
	}
	send(c.initialKube()) // an initial list of Events cut short: what came of it
}

// synced counts the initial lists in of the Events and the watched resources (res's Synced), and
// reports whether the Events' initial list can go: all of them are in.
func (c *causality) synced(res string) bool {
	if c.syncedRes == nil {
		c.syncedRes = map[string]bool{}
	}
	c.syncedRes[res] = true
	if c.kubeReleased || !c.syncedRes[c.cfg.Events.String()] {
		return false
	}
	for r := range c.roots {
		if !c.syncedRes[r] {
			return false
		}
	}
	return true
}

// initialKube hands on the Events of the initial list, in the order they happened (by
// EventTime, then resourceVersion).
func (c *causality) initialKube() []Event {
	c.kubeReleased = true
	held := c.listedKube
	c.listedKube = nil
	slices.SortStableFunc(held, func(a, b Event) int {
		if c := a.Kube.EventTime.Compare(b.Kube.EventTime); c != 0 {
			return c
		}
		// Within one second (the controllers' Events have no finer time): the order they
		// were written in.
		return compareRV(a.ResourceVersion, b.ResourceVersion)
	})
	var out []Event
	for _, kev := range held {
		out = append(out, c.tree.observeKube(kev)...)
	}
	return out
}

// stop waits for the owned informers, then for the lines they sent. The watched informers must
// have stopped.
func (c *causality) stop() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
	close(c.in)
	<-c.done
}

func (c *causality) handle(ev Event) []Event {
	c.cfg.InFlight.passed(&ev)
	// The owner index and the Events read objects' maps.
	ev.Materialize()
	isEvents := c.cfg.Events != nil && ev.Resource.GVR() == c.cfg.Events.GVR()
	if !ev.Type.IsObject() {
		if ev.Type == Synced && c.cfg.Events != nil && (isEvents || c.roots[ev.Resource.String()]) && c.synced(ev.Resource.String()) {
			return append(c.initialKube(), ev)
		}
		return []Event{ev}
	}
	if isEvents {
		kev, ok := kubeEventOf(ev)
		if !ok {
			return nil
		}
		if kev.Obj.InitialList && !c.kubeReleased {
			// The Events already there come in the list's order (by name, not time): held
			// until the list is in, and the watched objects they regard too, then handed on in
			// the order they happened.
			c.listedKube = append(c.listedKube, kev)
			return nil
		}
		return c.tree.observeKube(kev)
	}
	res := ev.Resource.String()
	if !c.roots[res] && !c.owned[res] {
		return []Event{ev}
	}
	out := c.tree.observe(ev, c.roots[res])
	for i := range out {
		if !out[i].Type.IsObject() {
			continue
		}
		c.enqueueOwner(&out[i])
		if c.cfg.Owned != nil && out[i].Type != Deleted {
			c.startOwned(&out[i])
		}
	}
	return out
}

// enqueueOwner puts the key of the watched root that owns ev's object in that root's queue, as a
// controller's EnqueueRequestForOwner or sample-controller's handleObject does for the objects
// it owns; the trigger names the owned object. A watched object's own line was enqueued by its
// informer already; one filtered by a predicate feeds only the shadow queue.
func (c *causality) enqueueOwner(ev *Event) {
	if c.roots[ev.Resource.String()] || len(ev.Obj.Owners) == 0 {
		return
	}
	root := ev.Obj.Owners[0]
	ri := c.rootInformers[root.Kind]
	if ri == nil {
		return
	}
	key := root.Name
	if ri.res.Namespaced {
		key = ev.Namespace + "/" + root.Name
	}
	tr := triggerOf(ev)
	tr.Resource, tr.Key = ev.Resource.String(), ev.Name
	if ev.Namespace != "" {
		tr.Key = ev.Namespace + "/" + ev.Name
	}
	ev.Obj.Queue = ri.enqueue(key, tr, ev.Obj.Filtered)
}

// startOwned starts the informers of the resources ev's object may own, once each.
func (c *causality) startOwned(ev *Event) {
	if c.roots[ev.Resource.String()] && c.cfg.Name != "" && ev.Obj.Object != nil && len(c.cfg.Resources) == 1 {
		c.learnSelectors(ev.Obj.Object)
	}
	for _, child := range c.cfg.Owned.ChildrenOf(ev.Resource.GVK().GroupKind()) {
		if c.roots[child.String()] {
			continue // watched already: its informer's lines are this tree's (never a second informer)
		}
		c.mu.Lock()
		if c.closed || c.started[child.GVR()] || c.ctx.Err() != nil {
			c.mu.Unlock()
			continue
		}
		c.started[child.GVR()] = true
		cfg := c.cfg
		cfg.Resources = []discovery.Resource{child}
		cfg.LabelSelector = c.selectors[child.String()]
		cfg.FieldSelector, cfg.Name = "", ""
		ri, err := ownedInformer(cfg, child, c.in)
		if err != nil { // the queue's configuration was checked by the watched informers
			c.mu.Unlock()
			continue
		}
		c.wg.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.wg.Done()
			ri.run(c.ctx)
		}()
	}
}

// ownedInformer is the informer of an owned resource: its objects' events enqueue nothing
// themselves; causality enqueues the watched root that owns one (enqueueOwner), and an object
// of no watched tree (--owned-resources lists the whole namespace) enqueues nothing at all.
func ownedInformer(cfg Config, res discovery.Resource, out chan<- Event) (*resourceInformer, error) {
	ri, err := newResourceInformer(cfg, res, out)
	if err != nil {
		return nil, err
	}
	ri.notQueued = true // its owner is enqueued, not itself
	return ri, nil
}

// learnSelectors takes the label selector the owned objects of one named root must carry:
// a workload's spec.selector (its ReplicaSets, pods and revisions carry its pod template's
// labels) or a Service's name label on its EndpointSlices. With --metadata-only there is no
// spec: the owned informers then list the whole namespace.
func (c *causality) learnSelectors(root *unstructured.Unstructured) {
	if len(c.selectors) > 0 {
		return
	}
	if root.GetKind() == "Service" {
		c.selectors["endpointslices.discovery.k8s.io"] = labels.Set{"kubernetes.io/service-name": root.GetName()}.String()
		return
	}
	m, found, _ := unstructured.NestedMap(root.Object, "spec", "selector")
	if !found {
		return
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return
	}
	for _, r := range []string{"replicasets.apps", "pods", "controllerrevisions.apps"} {
		c.selectors[r] = sel.String()
	}
}

// kubeEventOf turns an Event object's line into a KubeEvent line. Deletes (an Event's time to
// live ran out), resyncs and a relist's unchanged redeliveries say nothing new: not shown.
func kubeEventOf(ev Event) (Event, bool) {
	if ev.Type == Deleted || ev.Obj.Object == nil || ev.Obj.Delta == DeltaSync ||
		(ev.Type == Updated && ev.Obj.OldResourceVersion == ev.ResourceVersion) {
		return Event{}, false
	}
	o := ev.Obj.Object.Object
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(o, path...); return s }
	info := &KubeEventInfo{
		Reason: str("reason"), Note: str("note"), EventType: str("type"),
		ReportingController: str("reportingController"), ReportingInstance: str("reportingInstance"), Action: str("action"),
		Regarding: Regarding{APIVersion: str("regarding", "apiVersion"), Kind: str("regarding", "kind"),
			Namespace: str("regarding", "namespace"), Name: str("regarding", "name"), UID: str("regarding", "uid"),
			FieldPath: str("regarding", "fieldPath")},
		Count: 1,
	}
	if n, ok, _ := unstructured.NestedInt64(o, "series", "count"); ok {
		info.Count = n
	} else if n, ok, _ := unstructured.NestedInt64(o, "deprecatedCount"); ok && n > 0 {
		info.Count = n
	}
	for _, path := range [][]string{{"series", "lastObservedTime"}, {"eventTime"}, {"deprecatedLastTimestamp"},
		{"deprecatedFirstTimestamp"}, {"metadata", "creationTimestamp"}} {
		if t, err := time.Parse(time.RFC3339Nano, str(path...)); err == nil {
			info.EventTime = t
			break
		}
	}
	return Event{
		Type:            KubeEvent,
		Time:            ev.Time,
		Resource:        ev.Resource,
		Namespace:       ev.Namespace,
		Name:            ev.Name,
		ResourceVersion: ev.ResourceVersion,
		Obj: ObjectInfo{
			OldResourceVersion: ev.Obj.OldResourceVersion,
			InitialList:        ev.Obj.InitialList,
			Delta:              ev.Obj.Delta,
		},
		Kube: info,
	}, true
}

// eventsFieldSelector is the narrowest field selector the Events informer may list with: the
// watched kind (and name) when one resource is watched and nothing it owns; nothing otherwise
// (a field selector cannot say "any of these").
func eventsFieldSelector(cfg Config) string {
	if cfg.Owned != nil || len(cfg.Resources) != 1 {
		return ""
	}
	// Terms in a fixed order (a fields.Set is a map: its selector's order varies).
	sel := fields.OneTermEqualSelector("regarding.kind", cfg.Resources[0].Kind)
	if cfg.Name != "" {
		sel = fields.AndSelectors(sel, fields.OneTermEqualSelector("regarding.name", cfg.Name))
	}
	return sel.String()
}

// eventsInformer is the informer of Events: full objects (a PartialObjectMetadata has no reason
// or note), without managedFields, with the narrowest field selector and no label selector. An
// Event enqueues nothing in the simulated queue.
func eventsInformer(cfg Config, out chan<- Event) (*resourceInformer, error) {
	ecfg := cfg
	ecfg.Metadata = nil
	ecfg.DropManagedFields = true
	ecfg.Resources = []discovery.Resource{*cfg.Events}
	ecfg.LabelSelector, ecfg.Name = "", ""
	ecfg.FieldSelector = eventsFieldSelector(cfg)
	ri, err := newResourceInformer(ecfg, *cfg.Events, out)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	ri.notQueued = true // a controller enqueues nothing for an Event
	return ri, nil
}

// compareRV orders two resourceVersions as the numbers they are on one API server; ones that
// are not numbers (never from a real server) as strings.
func compareRV(a, b string) int {
	an, errA := strconv.ParseUint(a, 10, 64)
	bn, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return cmp.Compare(an, bn)
}
