package watch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Run starts one informer per resource, sends what they receive to out, and returns when ctx is
// done and every informer has stopped. It closes out before returning.
func Run(ctx context.Context, cfg Config, out chan<- Event) error {
	defer close(out)
	if cfg.REST != nil {
		cfg.typed = newTypedClients(cfg.REST)
	}
	info := describe(cfg)
	select {
	case out <- Event{Type: Informer, Time: time.Now(), Lifecycle: LifecycleInfo{Info: &info}}:
	case <-ctx.Done():
		return nil
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var informers []*resourceInformer
	sink := out
	var c *causality
	if cfg.Owned != nil || cfg.Events != nil {
		c = newCausality(ctx, cfg, out)
		sink = c.in
		defer c.stop() // before out closes
	}
	for _, res := range cfg.Resources {
		ri, err := newResourceInformer(cfg, res, sink)
		if err != nil {
			return err
		}
		informers = append(informers, ri)
		if c != nil {
			c.rootInformers[res.Kind] = ri
		}
	}
	if cfg.Events != nil {
		ri, err := eventsInformer(cfg, sink)
		if err != nil {
			return err
		}
		informers = append(informers, ri)
	}
	f := &forbiddance{ctx: ctx, informers: informers, cancel: cancel}
	for _, ri := range informers {
		ri.forbidden = func(err *ForbiddenError) { f.add(ri, err) }
	}
	for _, ri := range informers {
		ictx := ctx
		if cfg.SkipForbidden {
			ictx = ri.skipForbidden(ctx)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ri.run(ictx)
		}()
	}
	wg.Wait()
	return f.wait()
}

// namespace is the namespace this informer lists in ("" for all or cluster-scoped).
func (ri *resourceInformer) namespace() string {
	if ri.res.Namespaced {
		return ri.cfg.Namespace
	}
	return ""
}

// resourceInformer is client-go's informer for one resource, assembled from its parts
// (Reflector, RealFIFO, indexer) so that the delta types stay visible: a shared informer folds
// them into OnAdd/OnUpdate/OnDelete and drops unchanged relist deliveries (docs/fields.md).
type resourceInformer struct {
	// prepare is Config.Prepare's reader for this resource's Added lines (nil: none), and
	// prepareReads what it reads of their objects (nil: all but managedFields), as
	// prepareCut resolves it once (readCut).
	prepare      ObjectReader
	prepareReads *Reads
	cutOnce      sync.Once
	prepareCut   *readCut
	// readObjs holds objects prepared decodes into, each zeroed and reused: Read keeps nothing
	// of the object it is given, so a list's objects need not each be a new one (10,000 pods
	// were 10 MB of them, garbage as soon as read).
	readObjs sync.Pool
	// listPrep prepares the initial streaming list's lines as it is received (listprep.go).
	prepMu   sync.Mutex
	listPrep *listPrep
	cfg      Config
	res      discovery.Resource
	out      chan<- Event
	tap      *tap
	indexer  cache.Indexer
	fifo     *cache.RealFIFO
	wg       sync.WaitGroup
	start    time.Time
	synced   bool
	// hasSynced mirrors synced for other goroutines (the tap).
	hasSynced atomic.Bool
	// answered is set once the server answered a list or watch of this informer, yes or no.
	answered atomic.Bool
	// fellBack: a streaming list did not end in time (--sync-timeout) and LIST+WATCH took over.
	fellBack atomic.Bool
	// forbidden ends the run: the initial list was refused.
	forbidden func(*ForbiddenError)
	queue     *workQueue
	// notQueued: its objects' events enqueue nothing themselves (an owned resource's, whose
	// owner causality enqueues; Events').
	notQueued bool
	// shadow is fed every event, predicates or not (with --predicate only).
	shadow *workQueue
	ctx    context.Context // the run's context, for the delta processor
	// example is an empty object of the type the lister returns: a compactObject, a
	// PartialObjectMetadata (--metadata-only), or unstructured (the dynamic client without a
	// REST configuration).
	example runtime.Object
}

func newResourceInformer(cfg Config, res discovery.Resource, out chan<- Event) (*resourceInformer, error) {
	ri := &resourceInformer{cfg: cfg, res: res, out: out, forbidden: func(*ForbiddenError) {}}
	if cfg.TypedObjects && cfg.Prepare != nil {
		ri.setPreparer(cfg.Prepare.PrepareAdded(res))
	}
	wq, err := newWorkQueue(res.String(), cfg.Queue)
	if err != nil {
		return nil, err
	}
	ri.queue = wq
	if len(cfg.Predicates) > 0 && cfg.PredicateStats != nil {
		if ri.shadow, err = newWorkQueue(res.String()+" (unfiltered)", cfg.Queue); err != nil {
			return nil, err
		}
	}
	ns := ""
	if res.Namespaced {
		ns = cfg.Namespace
	}
	var inner lister
	switch {
	case cfg.Metadata != nil:
		ml := metadataLister{r: cfg.Metadata.Resource(res.GVR()).Namespace(ns), gvk: res.GVK()}
		ri.example, inner = ml.example(), ml
	case cfg.REST != nil:
		if cfg.typed == nil {
			cfg.typed = newTypedClients(cfg.REST)
		}
		var err error
		if Protobuf(res, cfg.Wire) {
			inner, err = newTypedLister(cfg.typed, res, ns)
		} else {
			inner, err = newCompactLister(cfg.typed, res, ns)
		}
		if err != nil {
			return nil, err
		}
		ri.example = &compactObject{}
	default: // no REST configuration (the fake clients of tests): the dynamic client
		inner = dynamicLister{r: cfg.Client.Resource(res.GVR()).Namespace(ns)}
	}
	if ri.example == nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(res.GVK())
		ri.example = u
	}
	ri.tap = &tap{ri: ri, inner: inner}
	ri.indexer = cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	ri.fifo = newFIFO(res, cfg.DropManagedFields)
	cfg.Stats.Register(res.String())
	return ri, nil
}

// newFIFO is the delta queue client-go v0.36+ informers use by default.
func newFIFO(res discovery.Resource, dropManagedFields bool) *cache.RealFIFO {
	var transform cache.TransformFunc
	if dropManagedFields {
		transform = dropManagedFieldsTransform
	}
	return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		Transformer:           transform,
		Name:                  "kubectl-informer " + res.String(),
		KeyFunction:           cache.MetaNamespaceKeyFunc,
		AtomicEvents:          true,
		UnlockWhileProcessing: clientfeatures.FeatureGates().Enabled(clientfeatures.UnlockWhileProcessingFIFO),
		EmitDeltaTypeBookmark: true,
	})
}

func (ri *resourceInformer) tweak(opts *metav1.ListOptions) {
	opts.LabelSelector = ri.cfg.LabelSelector
	opts.FieldSelector = ri.cfg.FieldSelector
}

func (ri *resourceInformer) run(ctx context.Context) {
	ri.start = time.Now()
	ri.ctx = ctx
	ri.queue.run(ctx, &ri.wg, func(ev Event) { ri.emit(ctx, ev) })
	if ri.shadow != nil {
		ri.shadow.run(ctx, &ri.wg, func(Event) { ri.cfg.PredicateStats.Unfiltered.Add(1) })
	}
	defer ri.wg.Wait()
	// The preparer of a list that never completed stops with the informer (listprep.go).
	defer ri.takePrepared()
	if !ri.cfg.useWatchList() || ri.cfg.SyncTimeout <= 0 {
		ri.runController(ctx, ri.cfg.ListMode == ListModeList)
		return
	}
	// A server or proxy that never sends the initial-events-end bookmark leaves a streaming list
	// hanging forever with nothing said (HasSynced stays false): bound it and fall back.
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stalled atomic.Bool
	first := ri.tap
	timer := time.AfterFunc(ri.cfg.SyncTimeout, func() {
		if !ri.hasSynced.Load() && first.streamingStarted() {
			stalled.Store(true)
			cancel()
		}
	})
	ri.runController(streamCtx, false)
	timer.Stop()
	if !stalled.Load() || ctx.Err() != nil {
		return
	}
	ri.emit(ctx, Event{
		Type: Error,
		Lifecycle: LifecycleInfo{Reason: "SyncTimeout", Message: fmt.Sprintf(
			"the streaming list did not end within %s (no initial-events-end bookmark; the server or a proxy in between does not finish streaming lists): falling back to LIST+WATCH",
			ri.cfg.SyncTimeout)},
	})
	ri.fellBack.Store(true)
	ri.reset()
	ri.runController(ctx, true)
}

// reset gives the informer a fresh queue, cache and tap for a new start.
func (ri *resourceInformer) reset() {
	inner := ri.tap.inner
	ri.tap = &tap{ri: ri, inner: inner}
	ri.indexer = cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	ri.fifo = newFIFO(ri.res, ri.cfg.DropManagedFields)
}

// listWatchNoStreaming is a ListerWatcher the reflector will not use streaming lists with.
type listWatchNoStreaming struct{ *cache.ListWatch }

func (listWatchNoStreaming) IsWatchListSemanticsUnSupported() bool { return true }

func (ri *resourceInformer) runController(ctx context.Context, noStreaming bool) {
	tap := ri.tap
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			ri.tweak(&opts)
			// At resourceVersion 0 the watch cache answers a LIST whole, whatever its limit: with
			// a page size asked for, the first list is a consistent read (resourceVersion ""),
			// which the server pages, as kubectl get --chunk-size does.
			if ri.cfg.PageSize > 0 && opts.ResourceVersion == "0" && opts.Continue == "" {
				opts.ResourceVersion = ""
			}
			return tap.list(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			ri.tweak(&opts)
			return tap.watch(ctx, opts)
		},
	}
	var lwi cache.ListerWatcher = lw
	if noStreaming {
		lwi = listWatchNoStreaming{lw}
	}
	ctrl := cache.New(&cache.Config{
		Queue:                        ri.fifo,
		ListerWatcher:                lwi,
		ObjectType:                   ri.example,
		ObjectDescription:            ri.res.String(),
		WatchListPageSize:            ri.cfg.PageSize,
		FullResyncPeriod:             ri.cfg.Resync,
		Process:                      ri.process,
		WatchErrorHandlerWithContext: ri.onWatchError,
	})
	ctrl.RunWithContext(ctx)
}

// onWatchError hears what ListAndWatch returned; the tap has usually reported it already.
func (ri *resourceInformer) onWatchError(ctx context.Context, _ *cache.Reflector, err error) {
	ri.tap.recordError(ctx, "", err, 0)
}

// emit sends an event unless the run is over.
func (ri *resourceInformer) emit(ctx context.Context, ev Event) { ri.emitPtr(ctx, &ev) }

// emitPtr is emit of *ev (changed: its resource and time set), for the lines of a list, which
// are not copied once more on their way into the channel.
func (ri *resourceInformer) emitPtr(ctx context.Context, ev *Event) {
	if ctx.Err() != nil {
		return
	}
	ev.Resource = ri.res
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	// Room in the channel (the common case) takes a plain send; only a full one waits with
	// the context beside it.
	select {
	case ri.out <- *ev:
		return
	default:
	}
	select {
	case ri.out <- *ev:
	case <-ctx.Done():
	}
}

// setPreparer sets what the informer reads of its added objects for their lines, and what it
// decodes of them for that.
func (ri *resourceInformer) setPreparer(p Preparer) {
	ri.prepare, ri.prepareReads = p.Reader, p.Reads
	ri.cutOnce, ri.prepareCut = sync.Once{}, nil
}

// readCut is what of its objects the informer decodes for Config.Prepare's reader,
// resolved against the Go type of the first object it reads (nil: all but managedFields).
func (ri *resourceInformer) readCut(gvk schema.GroupVersionKind) *readCut {
	ri.cutOnce.Do(func() {
		if obj, err := scheme.Scheme.New(gvk); err == nil {
			ri.prepareCut = newReadCut(obj, ri.prepareReads)
		}
	})
	return ri.prepareCut
}

// dropManagedFieldsTransform is the informer transform behind --drop-managed-fields, for
// compact, unstructured and typed objects alike.
func dropManagedFieldsTransform(obj interface{}) (interface{}, error) {
	switch o := obj.(type) {
	case *compactObject:
		o.dropManagedFields()
	case *unstructured.Unstructured:
		if md, ok := o.Object["metadata"].(map[string]interface{}); ok {
			delete(md, "managedFields")
		}
	case metav1.Object:
		o.SetManagedFields(nil)
	}
	return obj, nil
}
