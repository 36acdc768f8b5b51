package watch

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Config is everything the informers need; internal/cmd builds it from flags.
type Config struct {
	Client dynamic.Interface
	// Metadata, when set, serves every resource through the metadata client instead
	// (--metadata-only): objects hold apiVersion, kind and metadata only.
	Metadata      metadata.Interface
	Resources     []discovery.Resource
	Namespace     string // "" for all namespaces (and for cluster-scoped resources)
	LabelSelector string
	FieldSelector string
	// Name is the one object asked for (watch NAME; FieldSelector selects it): when the initial
	// list does not have it, the Synced event says so (NotFound).
	Name   string
	Resync time.Duration
	Queue  QueueConfig
	// SyncTimeout bounds a streaming list (WatchList): when its initial-events-end bookmark has
	// not arrived by then, the resource falls back to LIST+WATCH. 0 waits forever.
	SyncTimeout time.Duration
	// DropManagedFields removes metadata.managedFields before objects are queued and cached, as
	// memory-conscious controllers do with SetTransform: less memory, no manager attribution.
	DropManagedFields bool
	// TypedObjects hands the Added events of resources served in protobuf on typed: Event.Obj.Typed
	// set, Event.Obj.Object nil until Event.Materialize converts it; Updated and Deleted events
	// carry their Go types (Typed, OldTyped) beside their maps. Only for consumers that read
	// such events through Materialize or from Typed (pkg/printer, the pipeline); off, every event
	// carries its unstructured object, as before.
	TypedObjects bool
	// Prepare, when set with TypedObjects, says for a resource what its Added lines need of
	// their objects: a Preparer without Reader when they need the objects, else one whose Reader
	// reads what they need (pkg/printer's PrepareAdded: the state a human line shows) from an
	// object decoded without its managedFields (and without what Preparer.Reads leaves out,
	// when it is set). A list's added objects are then decoded that way (as an
	// initial streaming list is received, listprep.go; ahead of their lines, in a large list)
	// and handed to it, and each line carries what it returned (Event.Obj.Prepared) instead of the
	// object, which TypedObject and Materialize decode in full from the cache if a consumer
	// needs it after all.
	Prepare AddedReader
	// Predicates keep events out of the simulated workqueue as a controller's predicates
	// would (--predicate); PredicateStats, when set, gets what a shadow queue fed every event
	// reconciled, to say what the predicates saved.
	Predicates     []Predicate
	PredicateStats *PredicateStats
	// InFlight, when set, is told of every live watch event the taps receive, for a Reorder
	// that waits for the plugin's own backlog (see Reorder.InFlight).
	InFlight *InFlight
	// Owned, with --owned, is the tree of resources below Resources: their objects are shown
	// when their ownerReferences lead to a watched object, with the owner chain.
	Owned *discovery.Owned
	// Events, with --events, is the Event resource (events.k8s.io/v1): Events regarding the
	// shown objects become KubeEvent lines.
	Events *discovery.Resource
	// Stats accounts for the API requests (pkg/apistats); nil counts nothing.
	Stats *apistats.Recorder
	// ListMode is how the informers list: ListModeAuto (client-go's default, as a controller
	// built with this client-go would), ListModeWatchList (streaming lists, falling back to
	// LIST+WATCH when the server refuses) or ListModeList (paginated LIST, then WATCH).
	ListMode string
	// PageSize is the LIST page size (limit) the reflector asks for; 0 leaves client-go's
	// default (500 for a list from etcd; a list from the watch cache at resourceVersion 0 is
	// not paginated).
	PageSize int64
	// QPS and Burst are the client's rate limiter, for the Informer line only.
	QPS   float32
	Burst int
	// REST, when set, is the client configuration the built-in resources are listed and
	// watched with in protobuf (Wire auto); without it, or with Wire json, everything goes
	// through Client in JSON.
	REST *rest.Config
	// Wire is --wire: WireAuto (protobuf for the kinds client-go's scheme knows) or WireJSON.
	Wire string
	// SkipForbidden: a resource whose initial list or watch is forbidden does not end the run
	// (kubectl informer top): its informer stops after one Error event with Reason "Forbidden"
	// whose Message is the ForbiddenError, and the others go on.
	SkipForbidden bool

	typed *typedClients // the protobuf clients of this run, shared by its informers
}

// List modes (--list-mode).
const (
	ListModeAuto      = "auto"
	ListModeWatchList = "watchlist"
	ListModeList      = "list"
)

// ListModes are the values of --list-mode.
var ListModes = []string{ListModeAuto, ListModeWatchList, ListModeList}

// useWatchList reports whether the informers start with a streaming list.
func (cfg *Config) useWatchList() bool {
	switch cfg.ListMode {
	case ListModeList:
		return false
	case ListModeWatchList:
		return true
	}
	return clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
}

// EnableWatchList turns client-go's WatchListClient feature on for this process, for
// --list-mode watchlist: the reflector reads the gate itself.
func EnableWatchList() error {
	g, ok := clientfeatures.FeatureGates().(interface {
		Set(clientfeatures.Feature, bool) error
	})
	if !ok {
		return fmt.Errorf("client-go's feature gates cannot be set: --list-mode %s is not available", ListModeWatchList)
	}
	return g.Set(clientfeatures.WatchListClient, true)
}

// PredicateStats counts the reconciles a shadow workqueue ran: the same simulated workers fed
// every event, as if no --predicate were given.
type PredicateStats struct {
	Unfiltered atomic.Int64
}

// describe reports the machinery Run will use for cfg.
func describe(cfg Config) InformerInfo {
	gates := clientfeatures.FeatureGates()
	info := InformerInfo{
		ClientGoVersion:       clientGoVersion(),
		Queue:                 "RealFIFO",
		AtomicEvents:          true,
		UnlockWhileProcessing: gates.Enabled(clientfeatures.UnlockWhileProcessingFIFO),
		WatchList:             cfg.useWatchList(),
		ListMode:              listModeOf(cfg.ListMode),
		PageSize:              cfg.PageSize,
		QPS:                   cfg.QPS,
		Burst:                 cfg.Burst,
		ResyncPeriod:          cfg.Resync,
		Namespace:             cfg.Namespace,
		LabelSelector:         cfg.LabelSelector,
		FieldSelector:         cfg.FieldSelector,
		Resources:             cfg.Resources,
		MetadataOnly:          cfg.Metadata != nil,
		DropManagedFields:     cfg.DropManagedFields,
		Events:                cfg.Events != nil,
	}
	if cfg.Owned != nil {
		info.OwnedResources = cfg.Owned.Resources
	}
	info.Wires = map[string]string{}
	for _, r := range append(append([]discovery.Resource{}, info.Resources...), info.OwnedResources...) {
		info.Wires[r.String()] = cfg.wireOf(r)
	}
	if cfg.Events != nil {
		info.Wires[cfg.Events.String()] = cfg.wireOf(*cfg.Events)
	}
	return info
}

func listModeOf(m string) string {
	if m == "" {
		return ListModeAuto
	}
	return m
}

func clientGoVersion() string { return ModuleVersion("k8s.io/client-go") }

// ModuleVersion is the version of module path in the binary's build info (a replacement's when
// it is replaced), or "unknown".
func ModuleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}
