package watch

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Config is everything the informers need; pkg/cmd builds it from flags.
type Config struct {
	Client dynamic.Interface
	// Metadata, when set, serves every resource through the metadata client instead
	// (--metadata-only): objects hold apiVersion, kind and metadata only.
	Metadata      metadata.Interface
	Resources     []discovery.Resource
	Namespace     string // "" for all namespaces (and for cluster-scoped resources)
	LabelSelector string
	FieldSelector string
	Resync        time.Duration
	Queue         QueueConfig
	// SyncTimeout bounds a streaming list (WatchList): when its initial-events-end bookmark has
	// not arrived by then, the resource falls back to LIST+WATCH. 0 waits forever.
	SyncTimeout time.Duration
	// DropManagedFields removes metadata.managedFields before objects are queued and cached, as
	// memory-conscious controllers do with SetTransform: less memory, no manager attribution.
	DropManagedFields bool
}

// Run starts one informer per resource, sends what they receive to out, and returns when ctx is
// done and every informer has stopped. It closes out before returning.
func Run(ctx context.Context, cfg Config, out chan<- Event) error {
	defer close(out)
	info := Describe(cfg)
	select {
	case out <- Event{Type: Informer, Time: time.Now(), Info: &info}:
	case <-ctx.Done():
		return nil
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var fatalOnce sync.Once
	var fatal error
	fail := func(err error) {
		fatalOnce.Do(func() {
			fatal = err
			cancel()
		})
	}
	var informers []*resourceInformer
	for _, res := range cfg.Resources {
		ri, err := newResourceInformer(cfg, res, out)
		if err != nil {
			return err
		}
		ri.fail = fail
		informers = append(informers, ri)
	}
	for _, ri := range informers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ri.run(ctx)
		}()
	}
	wg.Wait()
	return fatal
}

// ForbiddenError is a list or watch the user may not make, before the informer ever synced.
type ForbiddenError struct {
	Resource  string
	Namespace string // "" for all namespaces or cluster-scoped
	Verb      string // list or watch ("" when only the reflector's error handler saw it)
	Message   string // the server's words
}

func (e *ForbiddenError) Error() string {
	verb := e.Verb
	if verb == "" {
		verb = "list"
	}
	var scope, check string
	if e.Namespace != "" {
		scope = fmt.Sprintf(" in namespace %q", e.Namespace)
		check = fmt.Sprintf("kubectl auth can-i list %s -n %s && kubectl auth can-i watch %s -n %s", e.Resource, e.Namespace, e.Resource, e.Namespace)
	} else {
		check = "kubectl auth can-i list " + e.Resource + " --all-namespaces && kubectl auth can-i watch " + e.Resource + " --all-namespaces"
	}
	return fmt.Sprintf("cannot %s %s%s: %s (check with: %s)", verb, e.Resource, scope, e.Message, check)
}

// namespace is the namespace this informer lists in ("" for all or cluster-scoped).
func (ri *resourceInformer) namespace() string {
	if ri.res.Namespaced {
		return ri.cfg.Namespace
	}
	return ""
}

// Describe reports the machinery Run will use for cfg.
func Describe(cfg Config) InformerInfo {
	gates := clientfeatures.FeatureGates()
	return InformerInfo{
		ClientGoVersion:       clientGoVersion(),
		Queue:                 "RealFIFO",
		AtomicEvents:          true,
		UnlockWhileProcessing: gates.Enabled(clientfeatures.UnlockWhileProcessingFIFO),
		WatchList:             gates.Enabled(clientfeatures.WatchListClient),
		ResyncPeriod:          cfg.Resync,
		Namespace:             cfg.Namespace,
		LabelSelector:         cfg.LabelSelector,
		FieldSelector:         cfg.FieldSelector,
		Resources:             cfg.Resources,
		MetadataOnly:          cfg.Metadata != nil,
		DropManagedFields:     cfg.DropManagedFields,
	}
}

func clientGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/client-go" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// resourceInformer is client-go's informer for one resource, assembled from its parts
// (Reflector, RealFIFO, indexer) so that the delta types stay visible: a shared informer folds
// them into OnAdd/OnUpdate/OnDelete and drops unchanged relist deliveries (docs/fields.md).
type resourceInformer struct {
	cfg     Config
	res     discovery.Resource
	out     chan<- Event
	tap     *tap
	indexer cache.Indexer
	fifo    *cache.RealFIFO
	wg      sync.WaitGroup
	start   time.Time
	synced  bool
	// hasSynced mirrors synced for other goroutines (the tap).
	hasSynced atomic.Bool
	// fail stops the run with a fatal error.
	fail  func(error)
	queue *workQueue
	ctx   context.Context // the run's context, for the delta processor
}

func newResourceInformer(cfg Config, res discovery.Resource, out chan<- Event) (*resourceInformer, error) {
	ri := &resourceInformer{cfg: cfg, res: res, out: out, fail: func(error) {}}
	wq, err := newWorkQueue(res.String(), cfg.Queue)
	if err != nil {
		return nil, err
	}
	ri.queue = wq
	ns := ""
	if res.Namespaced {
		ns = cfg.Namespace
	}
	var inner lister = cfg.Client.Resource(res.GVR()).Namespace(ns)
	if cfg.Metadata != nil {
		inner = metadataLister{r: cfg.Metadata.Resource(res.GVR()).Namespace(ns), gvk: res.GVK()}
	}
	ri.tap = &tap{ri: ri, inner: inner}
	ri.indexer = cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{})
	ri.fifo = newFIFO(res, cfg.DropManagedFields)
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
	defer ri.wg.Wait()
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) || ri.cfg.SyncTimeout <= 0 {
		ri.runController(ctx, false)
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
	ri.emit(ctx, Event{Type: Error, Reason: "SyncTimeout", Message: fmt.Sprintf(
		"the streaming list did not end within %s (no initial-events-end bookmark; the server or a proxy in between does not finish streaming lists): falling back to LIST+WATCH",
		ri.cfg.SyncTimeout)})
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
	example := &unstructured.Unstructured{}
	example.SetGroupVersionKind(ri.res.GVK())
	tap := ri.tap
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			ri.tweak(&opts)
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
		ObjectType:                   example,
		ObjectDescription:            ri.res.String(),
		FullResyncPeriod:             ri.cfg.Resync,
		Process:                      ri.process,
		WatchErrorHandlerWithContext: ri.onWatchError,
	})
	ctrl.RunWithContext(ctx)
}

// onWatchError hears what ListAndWatch returned; the tap has usually reported it already.
func (ri *resourceInformer) onWatchError(ctx context.Context, _ *cache.Reflector, err error) {
	ri.tap.recordError(ctx, "", err)
}

// emit sends an event unless the run is over.
func (ri *resourceInformer) emit(ctx context.Context, ev Event) {
	if ctx.Err() != nil {
		return
	}
	ev.Resource = ri.res
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	select {
	case ri.out <- ev:
	case <-ctx.Done():
	}
}

// dropManagedFieldsTransform is the informer transform behind --drop-managed-fields.
func dropManagedFieldsTransform(obj interface{}) (interface{}, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if md, ok := u.Object["metadata"].(map[string]interface{}); ok {
			delete(md, "managedFields")
		}
	}
	return obj, nil
}
