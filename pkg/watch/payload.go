package watch

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-informer/kubectl-informer/pkg/apistats"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
)

// ObjectInfo is the payload of an object line (Added, Updated, Deleted; a KubeEvent line uses
// Delta, InitialList and Owners as an object line does; a Reconciled line uses Queue).
type ObjectInfo struct {
	Delta              Delta `json:"delta"`
	InitialList        bool  `json:"initialList"`
	OldResourceVersion string
	Tombstone          bool
	Object             *unstructured.Unstructured
	OldObject          *unstructured.Unstructured
	// Typed is the object as its built-in Go type, on the object events of a resource served in
	// protobuf when Config.TypedObjects is set. On Added events Object is nil then, and
	// Materialize converts Typed when a consumer needs the map; on Updated and Deleted events
	// Object is set too (converted from Typed: the same object), and Typed is there for what
	// reads the Go type faster than the map (an object's state). Shared, never modified.
	Typed runtime.Object
	// OldTyped is OldObject as its Go type, beside it, when Typed is set on an Updated event.
	OldTyped runtime.Object
	// Prepared is what Config.Prepare read of an Added line's object when it did: such a line
	// carries no decoded object (Typed and Object nil), and TypedObject and Materialize decode
	// its cached one when a consumer needs it after all. TakePrepared takes it off the line.
	Prepared Prepared
	// Cached is a prepared line's object as the informer caches it (never modified: the cache
	// replaces objects), which TypedObject and Materialize decode; nil on other lines.
	Cached runtime.Object
	// Queue holds the workqueue's figures right after this event was enqueued (object
	// events) or after the key was Done (Reconciled). Nil on an event a predicate filtered.
	Queue *QueueFigures `json:"queue"`
	// Attribution says who made an update that changed the object (IsChange), computed once
	// for every output: by the informer, or by the analysis step for replayed updates; nil on
	// other events.
	Attribution *diff.Attribution
	// Filtered names the --predicate that kept this event out of the workqueue.
	Filtered string
	// Owners is the owner chain of an object of an owned resource (--owned), from the watched
	// root down to the object's own owner; on a KubeEvent, the chain of the object it regards.
	Owners []Owner `json:"owners"`
	// Folded counts the earlier updates of this object a slow reader of human output never got:
	// folded into this one by the printer's outbox (Updated events; never in JSON).
	Folded int
	// Changes are the fields the update changed (diff.Compute, ignored ones marked), computed
	// once by the analysis step when a consumer needs them (--diff, --ignore-path, --only-path,
	// hot loops): non-nil then, empty when nothing changed; nil when not computed.
	Changes []diff.Change
	// Ignored: an update that changed only --ignore-path fields; OutOfFocus: one that changed
	// none of the --only-path fields. Human output hides both, JSON marks them.
	Ignored    bool
	OutOfFocus bool
	// Audit is the API server's audit event of the request that made this object line's write
	// (--audit-log): who, with which client, how it was matched; nil when none was found.
	Audit *AuditInfo
}

// QueuedInfo is what the plugin's simulated workqueue did with a key up to one of its
// reconciles (Reconciled lines); a ControllerReconcile line uses TriggerCount and Triggers as a
// Reconciled line does.
type QueuedInfo struct {
	Wait     time.Duration `json:"waitMs" unit:"ms"` // from the key's first add (or its failure) to a worker taking it
	Work     time.Duration `json:"workMs" unit:"ms"` // the simulated reconcile
	Requeues int           `json:"requeues"`         // rate-limited requeues of this key before this reconcile
	Failed   bool          `json:"error"`            // the reconcile failed and the key was requeued rate-limited
	// TriggerCount is how many object events were enqueued for the key since a worker last
	// took it (they coalesced into this reconcile); Triggers lists them, capped (MaxTriggers:
	// the oldest and the newest kept).
	TriggerCount int       `json:"triggerCount"`
	Triggers     []Trigger `json:"triggers"`
	// Requeue: the key was back in the queue because its previous reconcile failed
	// (AddRateLimited); RequeueReason says so.
	Requeue       bool   `json:"requeue"`
	RequeueReason string `json:"requeueReason"`
}

// ScrapeInfo is a ControllerQueue line's payload: one scrape of a controller's /metrics.
type ScrapeInfo struct {
	URL    string
	Sample *QueueSample
}

// StatsInfo is the payload of the lines about what the plugin's requests cost the API server:
// ApiStats, Throttled, and the APF placement on a resource's first List or Watch line.
type StatsInfo struct {
	// API is the resource's API figures since the run began (ApiStats).
	API *apistats.Snapshot
	// APF: the flow schema and priority level the server put the requests in.
	APF *apistats.APF
	// Final: the ApiStats line at exit.
	Final bool `json:"final"`
	// RetryAfter is what a 429 asked for (Throttled; its reason is Lifecycle.Reason, the
	// client-side delay Lifecycle.Duration).
	RetryAfter time.Duration
}

// LifecycleInfo is the payload of the informer's lifecycle lines (Informer, List, Watch,
// WatchClosed, Bookmark, Synced, Resync, Relist, Error, Recovered, Throttled; Dropped counts in
// Items; a ControllerReconcile line's Reason says why a reconcile without a trigger ran).
type LifecycleInfo struct {
	Items    int           // List, Synced, Resync, Dropped
	Duration time.Duration // List, Synced, Throttled
	Initial  bool          // List: the informer's first list
	Pages    int           // List: the LIST requests (pages) it took
	ListMode string        // Synced: how the initial list came: watchlist or list
	FellBack bool          // Synced: a streaming list was tried first and failed
	// Backoff: Error and Recovered lines of an attempt after a failed one: how long the
	// reflector waited between the failure and this attempt (observed, not predicted).
	Backoff             time.Duration
	SendInitialEvents   bool          // Watch: a streaming list (WatchList)
	TimeoutSeconds      int64         // Watch: the timeout the reflector asked for
	InitialEventsEnd    bool          // Bookmark: the end of a streaming list
	Reason              string        `json:"reason"` // WatchClosed, Relist, Error, Throttled, ControllerReconcile
	Message             string        // Error
	Verb                string        // Error: list or watch, when known
	FromResourceVersion string        // Relist
	Counts              RelistCounts  // Relist
	Info                *InformerInfo // Informer
	// NotFound is the object asked for by name that the initial list did not have (Synced):
	// it does not exist yet, or not with these selectors. The informer waits for it.
	NotFound *ObjectKey
}
