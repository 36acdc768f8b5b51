package watch

// The NDJSON line of a HotLoop, HotLoopEnded, KubeEvent, Reconciled, ControllerReconcile or
// ApiStats event is its head (time, type and resource) and then members of the event itself: its
// header fields and its family's payload fields, by their json tags. One struct per family, then,
// is both what the event carries and what its line encodes and decodes (pkg/recording reads this
// table); a duration or time field's tag says its unit on the line: unit:"s" seconds (a float, read back
// rounded to the nanosecond), "s-trunc" seconds (read back truncated), "ms" milliseconds with
// microsecond precision, "time" RFC 3339 with nine digits in UTC. docs/json.md is the contract.

// lineMembers lists, for each such line type, the members its line writes after the head, in
// order: "Field.name", Field the Event field that holds it ("" for the header; "Stats.API.APF":
// a field of a field) and name its json tag there. Options: omitempty (left out when empty), list (an empty list, never null),
// positive (written when above zero), if=Flag (written when the payload's Flag is set; a line
// that has it sets Flag).
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
		"Reconcile.requeueAfterSeconds,positive", "Reconcile.durationSeconds,if=DurationKnown", "Queued.triggerCount",
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
}

// LineMembers returns the members the NDJSON line of an event of type t writes after its head,
// in order ("Field.name[,options]", see lineMembers), or nil when t's line is not made of its
// event's fields this way (object, lifecycle, ControllerQueue, Throttled and Informer lines).
func LineMembers(t Type) []string { return lineMembers[t] }
