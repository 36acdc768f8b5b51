package watch

import "github.com/kubectl-informer/kubectl-informer/pkg/apistats"

// An NDJSON line other than an object's is its head (time and type, and the resource but for a
// ControllerQueue or Informer line) and then members of the event itself: its header
// fields and its family's payload fields, by their json tags. One struct per family, then, is
// both what the event carries and what its line encodes and decodes (pkg/recording reads this
// table); a duration or time field's tag says its unit on the line: unit:"s" seconds (a float, read back
// rounded to the nanosecond), "s-trunc" seconds (read back truncated), "ms" milliseconds with
// microsecond precision, "ms-trunc" whole milliseconds (an integer, truncated), "go" as Go
// writes a duration ("1m30s"), "time" RFC 3339 with nine digits in UTC. docs/json.md is the contract.

// lineMembers lists, for each such line type, the members its line writes after the head, in
// order: "Field.name", Field the Event field that holds it ("" for the header; "Stats.API.APF":
// a field of a field) and name its json tag there. Options: omitempty (left out when empty),
// list (an empty list, never null), positive (written when above zero), as=NAME (its name on
// this line, not its tag's), unit=U (its unit on this line), fallback (read back only when an
// earlier member left the field zero), if=COND (written only when COND
// holds; several: all of them). COND is a path of Go field names from the Event: true when that
// field is not zero (a set flag, a non-nil payload), or, as Path=VALUE, when it is that string;
// !COND is its negation. Reading a line back, a member present sets its first COND's field when
// that is a flag, and a payload is allocated only for a member present.
var lineMembers = map[Type][]string{
	HotLoop: {".namespace", ".name", ".key", "HotLoop.reason", "HotLoop.managers,list", "HotLoop.updates",
		"HotLoop.windowSeconds", "HotLoop.fields,list", "HotLoop.loop,omitempty", "HotLoop.suggestion,omitempty"},
	HotLoopEnded: {".namespace", ".name", ".key", "HotLoop.loop", "HotLoop.updates", "HotLoop.durationSeconds",
		"HotLoop.managers,list", "HotLoop.objectDeleted"},
	KubeEvent: {".namespace", ".name", ".resourceVersion", "Obj.initialList", "Obj.delta", "Kube.eventType",
		"Kube.reason", "Kube.note", "Kube.reportingController", "Kube.reportingInstance,omitempty", "Kube.action,omitempty",
		"Kube.regarding", "Kube.count", "Kube.eventTime,omitempty", "Obj.owners,omitempty"},
	Reconciled: {".key", "Queued.waitMs", "Queued.workMs", "Queued.requeues", "Queued.error", "Obj.queue",
		"Queued.triggerCount", "Queued.triggers,omitempty", "Queued.requeue", "Queued.requeueReason,omitempty"},
	ControllerReconcile: {".namespace", ".name", ".key", "Reconcile.controller", "Reconcile.reconcileID,omitempty",
		"Reconcile.objectKind,omitempty", "Reconcile.result", "Reconcile.message,omitempty",
		"Reconcile.requeueAfterSeconds,positive", "Reconcile.durationSeconds,if=Reconcile.DurationKnown", "Queued.triggerCount",
		"Queued.triggers,omitempty", "Lifecycle.reason,omitempty", "Reconcile.reasonMessage,omitempty", "Reconcile.source",
		"Reconcile.format", "Reconcile.lines", "Reconcile.bounds,omitempty", "Reconcile.filteredTriggers,omitempty",
		"Reconcile.untrustedTime,omitempty"},
	ApiStats: {"Stats.final", "Stats.API.elapsedSeconds", "Stats.API.requests,list", "Stats.API.lists",
		"Stats.API.streamingLists", "Stats.API.listPages", "Stats.API.lastListPages", "Stats.API.bytesReceived",
		"Stats.API.bytesDecoded", "Stats.API.compressedResponses", "Stats.API.objects", "Stats.API.bookmarks",
		"Stats.API.watchStreams", "Stats.API.watchReconnects", "Stats.API.watchOpen", "Stats.API.watchesClosed",
		"Stats.API.watchLivedSeconds", "Stats.API.watchLivedMaxSeconds", "Stats.API.throttled",
		"Stats.API.retryAfterSeconds", "Stats.API.clientWaits", "Stats.API.clientWaitSeconds",
		"Stats.API.clientWaitMaxSeconds", "Stats.API.APF.flowSchema,omitempty", "Stats.API.APF.priorityLevel,omitempty",
		"Stats.API.APF.flowSchemaUID,omitempty", "Stats.API.APF.priorityLevelUID,omitempty",
		"Stats.API.APF.apfNote,omitempty"},
	List: {".resourceVersion", "Lifecycle.items", "Lifecycle.durationMs", "Lifecycle.initial", "Lifecycle.pages,positive",
		"Stats.APF.flowSchema,omitempty", "Stats.APF.priorityLevel,omitempty", "Stats.APF.flowSchemaUID,omitempty", "Stats.APF.priorityLevelUID,omitempty", "Stats.APF.apfNote,omitempty"},
	Watch: {".resourceVersion", "Lifecycle.sendInitialEvents", "Lifecycle.timeoutSeconds",
		"Stats.APF.flowSchema,omitempty", "Stats.APF.priorityLevel,omitempty", "Stats.APF.flowSchemaUID,omitempty", "Stats.APF.priorityLevelUID,omitempty", "Stats.APF.apfNote,omitempty"},
	WatchClosed: {".resourceVersion", "Lifecycle.reason"},
	Bookmark:    {".resourceVersion", "Lifecycle.initialEventsEnd"},
	Synced: {".resourceVersion", "Lifecycle.items", "Lifecycle.durationMs", "Lifecycle.notFound,omitempty",
		"Lifecycle.listMode,omitempty", "Lifecycle.fellBack,if=Lifecycle.ListMode"},
	Resync:    {"Lifecycle.items"},
	Dropped:   {"Lifecycle.items"},
	Relist:    {".resourceVersion", "Lifecycle.reason", "Lifecycle.fromResourceVersion", "Lifecycle.Counts.added", "Lifecycle.Counts.updated", "Lifecycle.Counts.deleted", "Lifecycle.Counts.unchanged"},
	Error:     {"Lifecycle.reason", "Lifecycle.message", "Lifecycle.verb", "Lifecycle.backoffMs,positive"},
	Recovered: {"Lifecycle.message", "Lifecycle.verb", "Lifecycle.backoffMs,positive"},
	// A client-side delay (ClientThrottled) says how long; a 429 what its Retry-After asked.
	Throttled: {"Lifecycle.reason", "Lifecycle.verb", "Lifecycle.durationMs,as=delayMs,unit=ms,if=" + clientThrottled,
		"Stats.retryAfterSeconds,if=!" + clientThrottled, "Stats.APF.flowSchema,omitempty", "Stats.APF.priorityLevel,omitempty", "Stats.APF.flowSchemaUID,omitempty", "Stats.APF.priorityLevelUID,omitempty", "Stats.APF.apfNote,omitempty"},
	// A page without workqueue metrics (Scrape.Sample nil) says so in its message; a queue's
	// line has its figures, each group only when the page had it (the sample's Has flags).
	ControllerQueue: {"Scrape.url", "Scrape.Sample.name,if=Scrape.Sample", "Scrape.Sample.controller,omitempty,if=Scrape.Sample",
		"Scrape.Sample.depth,if=Scrape.Sample", "Scrape.Sample.adds,if=Scrape.Sample", "Scrape.Sample.retries,if=Scrape.Sample",
		"Scrape.Sample.unfinishedSeconds,if=Scrape.Sample", "Scrape.Sample.longestRunningSeconds,if=Scrape.Sample",
		"Scrape.Sample.queueP50Seconds,if=Scrape.Sample.HasQueueLatency", "Scrape.Sample.queueP99Seconds,if=Scrape.Sample.HasQueueLatency",
		"Scrape.Sample.workP50Seconds,if=Scrape.Sample.HasWorkLatency", "Scrape.Sample.workP99Seconds,if=Scrape.Sample.HasWorkLatency",
		"Scrape.Sample.reconciles,if=Scrape.Sample.HasReconciles", "Scrape.Sample.reconcileErrors,if=Scrape.Sample.HasReconciles",
		"Scrape.Sample.terminalReconcileErrors,if=Scrape.Sample.HasReconciles", "Scrape.Sample.reconcilePanics,if=Scrape.Sample.HasReconciles",
		"Scrape.Sample.activeWorkers,if=Scrape.Sample.HasWorkers", "Scrape.Sample.maxConcurrentReconciles,if=Scrape.Sample.HasWorkers",
		"Scrape.Sample.reconcileP50Seconds,if=Scrape.Sample.HasReconcileTime", "Scrape.Sample.reconcileP99Seconds,if=Scrape.Sample.HasReconcileTime",
		"Scrape.Sample.addsPerSecond,if=Scrape.Sample.HasRates", "Scrape.Sample.retriesPerSecond,if=Scrape.Sample.HasRates",
		"Scrape.Sample.reconcilesPerSecond,if=Scrape.Sample.HasRates,if=Scrape.Sample.HasReconciles",
		"Scrape.Sample.reconcileErrorsPerSecond,if=Scrape.Sample.HasRates,if=Scrape.Sample.HasReconciles",
		"Scrape.Sample.foldedScrapes,omitempty,if=Scrape.Sample", "Scrape.Sample.steadyScrapes,omitempty,if=Scrape.Sample",
		"Scrape.Sample.logShows,if=Scrape.Sample.HasLogShows", "Scrape.Sample.insecure,omitempty,if=Scrape.Sample",
		"Scrape.Sample.from,omitempty,if=Scrape.Sample", "Lifecycle.message,if=!Scrape.Sample"},
	// The resync period twice: as Go writes a duration, then in seconds (read only when the
	// first says nothing).
	Informer: {"Lifecycle.Info.pluginVersion", "Lifecycle.Info.clientGoVersion", "Lifecycle.Info.queue",
		"Lifecycle.Info.atomicEvents", "Lifecycle.Info.unlockWhileProcessing", "Lifecycle.Info.watchList",
		"Lifecycle.Info.resyncPeriod", "Lifecycle.Info.resyncPeriod,as=resyncSeconds,unit=s,fallback",
		"Lifecycle.Info.namespace", "Lifecycle.Info.labelSelector", "Lifecycle.Info.fieldSelector",
		"Lifecycle.Info.secretsRedacted", "Lifecycle.Info.metadataOnly", "Lifecycle.Info.dropManagedFields",
		"Lifecycle.Info.resources,list", "Lifecycle.Info.ownedResources,omitempty", "Lifecycle.Info.events,omitempty",
		"Lifecycle.Info.listMode,omitempty", "Lifecycle.Info.pageSize,omitempty", "Lifecycle.Info.qps,omitempty",
		"Lifecycle.Info.burst,omitempty", "Lifecycle.Info.wires,omitempty"},
}

// clientThrottled is the condition of a Throttled line the client-side rate limiter made.
const clientThrottled = "Lifecycle.Reason=" + string(apistats.NoticeClientThrottled)

// headless are the line types whose head is their time and type only (no resource).
var headless = map[Type]bool{ControllerQueue: true, Informer: true}

// LineMembers returns the members the NDJSON line of an event of type t writes after its head,
// in order ("Field.name[,options]", see lineMembers), or nil for an object line: half of its
// members are what the printer derived, so pkg/recording holds its table.
func LineMembers(t Type) []string { return lineMembers[t] }

// LineHasResource reports whether the head of t's line names the event's resource (group,
// version, resource, kind after its time and type).
func LineHasResource(t Type) bool { return !headless[t] }
