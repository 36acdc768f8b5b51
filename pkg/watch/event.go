// Package watch runs informers for resolved resources and emits what they receive as typed
// events on a channel. Its informers' caches hold compact objects (the encoded bytes and a few
// metadata fields, see compact.go), decoded only for the events that carry them. It never
// prints: pkg/printer turns events into lines.
package watch

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/discovery"
)

// Type names an event: an object event (Added, Updated, Deleted) or a lifecycle marker.
type Type string

// Event types. The names are part of the JSON contract (docs/json.md).
const (
	Added       Type = "Added"
	Updated     Type = "Updated"
	Deleted     Type = "Deleted"
	Informer    Type = "Informer"
	List        Type = "List"
	Watch       Type = "Watch"
	WatchClosed Type = "WatchClosed"
	Bookmark    Type = "Bookmark"
	Synced      Type = "Synced"
	Resync      Type = "Resync"
	Relist      Type = "Relist"
	Error       Type = "Error"
	Reconciled  Type = "Reconciled"
	// Dropped counts human lines a slow reader of the output never got (Items).
	Dropped Type = "Dropped"
	// Recovered follows Error lines once a list or watch succeeds again.
	Recovered Type = "Recovered"
	// ControllerQueue is a running controller's workqueue, scraped from its /metrics.
	ControllerQueue Type = "ControllerQueue"
	// KubeEvent is an Event (events.k8s.io/v1) a controller wrote about a watched object
	// (--events).
	KubeEvent Type = "KubeEvent"
	// HotLoop reports one object rewritten too often, or two managers taking turns at it
	// (HotLoop holds the report). The analysis step makes it; the informer never does.
	HotLoop Type = "HotLoop"
	// HotLoopEnded closes a HotLoop: a whole window passed without an update to the object, or
	// it was deleted (HotLoop holds the episode).
	HotLoopEnded Type = "HotLoopEnded"
	// Folded stands, in human output, for the updates of an object in a hot loop folded into
	// it (HotLoop holds how many, over how long, by whom); never in JSON or a recording.
	Folded Type = "Folded"
	// ApiStats is what one resource's informer cost the API server so far (--api-stats, and in
	// -o json at exit).
	ApiStats Type = "ApiStats" //nolint:revive // the JSON contract's name
	// Throttled is a request the server refused with 429 (API Priority and Fairness) or the
	// client-side rate limiter held back, as it happens.
	Throttled Type = "Throttled"
	// ControllerReconcile is one reconcile a running controller really made, read from its log
	// (--controller-logs), with the watched events that caused it (Reconcile holds it).
	ControllerReconcile Type = "ControllerReconcile"
)

// IsObject reports whether t is an object event (Added, Updated or Deleted).
func (t Type) IsObject() bool { return t == Added || t == Updated || t == Deleted }

// Delta says what caused an object event, in client-go's delta vocabulary.
type Delta string

// Deltas, as client-go's cache.DeltaType names them.
const (
	DeltaAdded    Delta = "Added"    // a watch ADDED event
	DeltaUpdated  Delta = "Updated"  // a watch MODIFIED event
	DeltaDeleted  Delta = "Deleted"  // a watch DELETED event, or an object missing from a relist
	DeltaReplaced Delta = "Replaced" // delivered by a list: the initial list or a relist
	DeltaSync     Delta = "Sync"     // a periodic resync: the cached object again, unchanged
)

// RelistCounts sorts what a relist delivered against the cache it replaced.
type RelistCounts struct {
	Added     int
	Updated   int
	Deleted   int
	Unchanged int
}

// InformerInfo describes the informer machinery of this run (the first event of every run).
type InformerInfo struct {
	ClientGoVersion       string
	Queue                 string
	AtomicEvents          bool
	UnlockWhileProcessing bool
	WatchList             bool
	ResyncPeriod          time.Duration
	Namespace             string
	LabelSelector         string
	FieldSelector         string
	Resources             []discovery.Resource
	MetadataOnly          bool
	DropManagedFields     bool
	// OwnedResources are the resources --owned follows below Resources.
	OwnedResources []discovery.Resource
	// Events is set with --events: Events regarding the watched objects are merged in.
	Events bool
	// ListMode is --list-mode: auto (client-go's default, WatchList says which), watchlist or
	// list; PageSize is the LIST page size asked for (--chunk-size; 0: client-go's default).
	ListMode string
	PageSize int64
	// QPS and Burst are the client-side rate limiter's (QPS < 0: none).
	QPS   float32
	Burst int
	// Wires is the wire format of each resource (by its String), WireProtobuf or WireJSON;
	// nil when not known (a recording made before it was recorded).
	Wires map[string]string
}

// Event is one thing the informer received or did: a header (its type, when, which resource,
// which object, at which resourceVersion) and the payload of its family. Object lines fill Obj;
// a Reconciled line Queued; a ControllerReconcile line Reconcile; HotLoop, HotLoopEnded and
// Folded lines HotLoop; a KubeEvent line Kube; a ControllerQueue line Scrape; ApiStats and
// Throttled lines Stats; the informer's lifecycle lines Lifecycle. docs/architecture.md draws
// which line fills what.
type Event struct {
	Type     Type
	Time     time.Time
	Resource discovery.Resource
	// Namespace and Name are the object's (object lines, and the lines about one object: a
	// reconcile, a hot loop, a KubeEvent's own); Key is namespace/name, as
	// cache.MetaNamespaceKeyFunc makes it, on the lines about a key.
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	Key             string `json:"key"`
	ResourceVersion string `json:"resourceVersion"`

	Obj       ObjectInfo
	Queued    QueuedInfo
	Reconcile *ReconcileInfo // ControllerReconcile: one reconcile a controller's log showed
	HotLoop   *HotLoopInfo   // HotLoop, HotLoopEnded and Folded
	Kube      *KubeEventInfo // KubeEvent (Namespace, Name, ResourceVersion are the Event object's)
	Scrape    ScrapeInfo
	Stats     StatsInfo
	Lifecycle LifecycleInfo
}

// AuditInfo is what an object line says of the request that made its write, from the API
// server's audit log.
type AuditInfo struct {
	// User is the authenticated user; ImpersonatedUser the user it acted as (kubectl --as), ""
	// when it did not impersonate.
	User             string
	ImpersonatedUser string
	// ServiceAccount is "namespace/name" when the acting user is a service account.
	ServiceAccount string
	UserAgent      string
	AuditID        string
	// Verb and Subresource are the request's (create, update, patch, delete, deletecollection).
	Verb        string
	Subresource string
	// Matched says how the request was found: AuditByResourceVersion, AuditByDelete,
	// AuditByCollection or AuditByTime.
	Matched string
}

// How an object line's request was found in the audit log (AuditInfo.Matched).
const (
	// AuditByResourceVersion: the response's object has the line's resourceVersion
	// (RequestResponse level).
	AuditByResourceVersion = "resourceVersion"
	// AuditByDelete: the DELETE of the object (a delete's response has no new resourceVersion).
	AuditByDelete = "delete"
	// AuditByCollection: a deletecollection of the object's resource and namespace.
	AuditByCollection = "collection"
	// AuditByTime: a write of the object close in time (Metadata level: no response object).
	AuditByTime = "time"
)

// By is who acted: the impersonated user when there is one, else the user.
func (a *AuditInfo) By() string {
	if a.ImpersonatedUser != "" {
		return a.ImpersonatedUser
	}
	return a.User
}

// Trigger is an object event that put a key in the workqueue.
type Trigger struct {
	Type            Type     `json:"type"`
	Delta           Delta    `json:"delta"`
	ResourceVersion string   `json:"resourceVersion"`
	Managers        []string `json:"managers,omitempty"` // who made the update (Attribution), when it is one
	// Attribution is how Managers was found (diff.RuleEntry, RuleOwnership, ...): with
	// ownership and several managers, one of them made it.
	Attribution string    `json:"attribution,omitempty"`
	Time        time.Time `json:"time" unit:"time"`
	// Resource and Key name the object whose event it was when that is not the reconciled
	// object itself: an object it owns (--owned), whose events enqueue their owner as a
	// controller's EnqueueRequestForOwner or handleObject does. Empty for the object's own.
	Resource string `json:"resource,omitempty"`
	Key      string `json:"key,omitempty"`
}

// MaxTriggers caps Event.Queued.Triggers: the first two and the newest ones are kept.
const MaxTriggers = 10

// IsChange reports whether ev is an update that changed the object on the server: a watch
// MODIFIED event or a relist finding a new resourceVersion, with both versions at hand (not a
// resync, not a relist's unchanged redelivery).
func (ev *Event) IsChange() bool {
	return ev.Type == Updated && ev.Obj.Object != nil && ev.Obj.OldObject != nil &&
		ev.Obj.OldResourceVersion != ev.ResourceVersion && ev.Obj.Delta != DeltaSync
}

// HotLoopInfo returns the event's hot-loop payload (HotLoop, HotLoopEnded, Folded), empty when
// it has none.
func (ev *Event) HotLoopInfo() HotLoopInfo {
	if ev.HotLoop == nil {
		return HotLoopInfo{}
	}
	return *ev.HotLoop
}

// ObjectKey names one object; Namespace is "" for a cluster-scoped object, or when the
// informer lists every namespace.
type ObjectKey struct {
	Namespace string
	Name      string
}

// Owner is one link of an owner chain: an object that owns the next one by ownerReferences.
type Owner struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// HotLoopInfo is what a HotLoop, HotLoopEnded or Folded line says about an object's hot loop.
type HotLoopInfo struct {
	// Reason (HotLoop) is "updates" (too many in the window) or "alternating" (two managers
	// taking turns).
	Reason string `json:"reason"`
	// Loop is the diagnosis (diff.LoopFight, LoopSelf, LoopBusy; HotLoop, HotLoopEnded);
	// Suggestion (HotLoop) is its usual fix.
	Loop       string `json:"loop"`
	Suggestion string `json:"suggestion"`
	// Managers made the updates, first seen first.
	Managers []string `json:"managers"`
	// Fields are the paths that flip (HotLoop, Folded), most changed first on Folded.
	Fields []string `json:"fields"`
	// Updates: in the window when the loop was found (HotLoop), over the whole episode
	// (HotLoopEnded), folded into the line (Folded).
	Updates int `json:"updates"`
	// Window is the detection window (HotLoop).
	Window time.Duration `json:"windowSeconds" unit:"s"`
	// Duration is from the first update to the last (HotLoopEnded, Folded).
	Duration time.Duration `json:"durationSeconds" unit:"s"`
	// Deleted (HotLoopEnded): the loop ended because its object was deleted.
	Deleted bool `json:"objectDeleted"`
}

// KubeEventInfo is what an Event (events.k8s.io/v1) says.
type KubeEventInfo struct {
	Reason              string    `json:"reason"`
	Note                string    `json:"note"`
	EventType           string    `json:"eventType"` // Normal or Warning ("type" is the line's)
	ReportingController string    `json:"reportingController"`
	ReportingInstance   string    `json:"reportingInstance"`
	Action              string    `json:"action"`
	Regarding           Regarding `json:"regarding"`
	// Count is how often the Event happened: series.count, else deprecatedCount, else 1.
	Count int64 `json:"count"`
	// EventTime is when it last happened, by the Event's own clock: series.lastObservedTime,
	// else eventTime, else deprecatedLastTimestamp, else deprecatedFirstTimestamp, else the
	// Event object's creationTimestamp. Zero when it has none of them.
	EventTime time.Time `json:"eventTime" unit:"time"`
}

// Regarding is the object an Event is about.
type Regarding struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	FieldPath  string `json:"fieldPath,omitempty"`
}

// ReconcileInfo is what a controller's log says about one of its reconciles.
type ReconcileInfo struct {
	Controller  string `json:"controller"`
	ReconcileID string `json:"reconcileID"`
	// Kind of the reconciled object as the log names it ("" when it does not).
	Kind string `json:"objectKind"`
	// Result is ok, error, requeue, requeueAfter, or unknown (the log did not say how it
	// ended); Error is the error text of a failed one; RequeueAfter the delay it asked for
	// (written when positive).
	Result       string        `json:"result"`
	Error        string        `json:"message"`
	RequeueAfter time.Duration `json:"requeueAfterSeconds" unit:"s-trunc"`
	// Duration is how long it took, when the log says (DurationKnown; written only then).
	Duration      time.Duration `json:"durationSeconds" unit:"s-trunc"`
	DurationKnown bool          `json:"-"`
	// Bounds is "logged" when the controller logged its start and end, "lines" when they are
	// the first and last of its lines the log showed (a controller logging at info).
	Bounds string `json:"bounds"`
	// Source is the log it came from (a file, "-" for stdin); Format its encoding; Lines how
	// many of its lines it is made of.
	Source string `json:"source"`
	Format string `json:"format"`
	Lines  int    `json:"lines"`
	// ReasonMessage says in words why a reconcile without a trigger ran (Event.Lifecycle.Reason is its
	// code: retry, requeue, requeueAfter, first, notWatched, noEvent).
	ReasonMessage string `json:"reasonMessage"`
	// FilteredTriggers counts the triggers a --predicate keeps out of the workqueue: when it is
	// TriggerCount, the predicates would have saved this reconcile.
	FilteredTriggers int `json:"filteredTriggers"`
	// UntrustedTime: a timestamp of its lines was far from when this machine read it (more than
	// an hour later, or before 1970): the read time stands for it in Event.Time and the join.
	UntrustedTime bool `json:"untrustedTime"`
}

// UpdateOf is the Updated line a watch MODIFIED event from old to cur makes at time at: its
// header from cur (namespace, name, resourceVersion), its Obj with the delta, old's
// resourceVersion and both objects; nothing the informer adds after (attribution, queue
// figures). For a program or a test that makes lines of its own.
func UpdateOf(res discovery.Resource, old, cur *unstructured.Unstructured, at time.Time) Event {
	return Event{
		Type:            Updated,
		Time:            at,
		Resource:        res,
		Namespace:       cur.GetNamespace(),
		Name:            cur.GetName(),
		ResourceVersion: cur.GetResourceVersion(),
		Obj: ObjectInfo{
			Delta:              DeltaUpdated,
			OldResourceVersion: old.GetResourceVersion(),
			Object:             cur,
			OldObject:          old,
		},
	}
}
