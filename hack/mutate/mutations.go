package main

// mutation is one lie kubectl-informer must never tell, as a small source rewrite, and the unit
// tests that must fail when it is made.
type mutation struct {
	name string // the lie, in a few words
	file string // relative to the module root
	old  string // text that must occur exactly once in file
	new  string
	pkg  string // the package whose tests kill it
	run  []string
}

// mutations are the lies, each with the tests that kill it. When a refactoring moves the text
// a mutation rewrites, `make mutate` fails saying so: rewrite the mutation, do not drop it.
var mutations = []mutation{
	{
		name: "the Events already there are shown in the list's order, not the order they happened",
		file: "pkg/watch/owned.go",
		old:  "if c := a.Kube.EventTime.Compare(b.Kube.EventTime); c != 0 {",
		new:  "if c := 0; c != 0 {",
		pkg:  "./pkg/watch",
		run:  []string{"TestInitialKubeEventsInTimeOrder"},
	},
	{
		name: "a hidden Reconciled line pins its resource's later events out of resourceVersion order",
		file: "pkg/watch/order.go",
		old:  "if !h.ok && h.ev.Type == Reconciled {",
		new:  "if false {",
		pkg:  "./pkg/watch",
		run:  []string{"TestReorder"},
	},
	{
		name: "the order hold does not wait for an earlier event still in the plugin's pipeline",
		file: "pkg/watch/order.go",
		old:  "r.InFlight.earlier(h.ev.Resource.String(), h.rv, now.Add(-MaxBacklogWait))",
		new:  "false",
		pkg:  "./pkg/watch",
		run:  []string{"TestReorderWaitsForBacklog"},
	},
	{
		name: "an unchanged relist delivery reads [RESYNC] in human output",
		file: "pkg/printer/printer.go",
		old:  "case ev.Delta == watch.DeltaSync:",
		new:  "case ev.Delta == watch.DeltaSync || (ev.Type == watch.Updated && ev.OldResourceVersion == ev.ResourceVersion):",
		pkg:  "./pkg/printer",
		run:  []string{"TestObjectLineSaysWhereItCameFrom"},
	},
	{
		name: "a compact object forgets the initial-events-end annotation: a streaming list never ends",
		file: "pkg/watch/compact.go",
		old:  "if v, ok := annotations[initialEventsEndAnnotation]; ok {",
		new:  "if v, ok := annotations[initialEventsEndAnnotation]; ok && false {",
		pkg:  "./pkg/watch",
		run:  []string{"TestCompactWatch"},
	},
	{
		name: "a compact JSON object decodes its numbers unlike the dynamic client (every one a float64)",
		file: "pkg/watch/compact.go",
		old:  "if err := utiljson.Unmarshal(c.raw, &m); err != nil {",
		new:  "if err := json.Unmarshal(c.raw, &m); err != nil {",
		pkg:  "./pkg/watch",
		run:  []string{"TestCompactList"},
	},
	{
		name: "an unchanged relist delivery is labelled a resync (delta Sync) in JSON",
		file: "pkg/watch/process.go",
		old:  "ri.emitObject(Updated, DeltaReplaced, toUnstructured(c.cur), toUnstructured(c.old), initial, false)",
		new:  "ri.emitObject(Updated, map[bool]Delta{true: DeltaSync, false: DeltaReplaced}[resourceVersionOf(c.old) == resourceVersionOf(c.cur)], toUnstructured(c.cur), toUnstructured(c.old), initial, false)",
		pkg:  "./pkg/watch",
		run:  []string{"TestProcessLifecycle"},
	},
	{
		name: "a tombstone whose object is unknown is dropped instead of named from its key",
		file: "pkg/watch/process.go",
		old: `			// Never drop a delete: name it from its key.
			ns, name, _ := cache.SplitMetaNamespaceKey(d.Key)
			u = &unstructured.Unstructured{Object: map[string]interface{}{}}
			u.SetNamespace(ns)
			u.SetName(name)`,
		new: `			return nil`,
		pkg: "./pkg/watch",
		run: []string{"TestTombstoneWithoutObjectNamedFromKey"},
	},
	{
		name: "the branch naming a tombstone from its key is gone",
		file: "pkg/watch/process.go",
		old: `		if u == nil {
			// Never drop a delete: name it from its key.`,
		new: `		if false {
			// Never drop a delete: name it from its key.`,
		pkg: "./pkg/watch",
		run: []string{"TestTombstoneWithoutObjectNamedFromKey"},
	},
	{
		name: "an object missing from a relist is not flagged as a tombstone",
		file: "pkg/watch/process.go",
		old:  "ri.emitObject(Deleted, DeltaDeleted, toUnstructured(g), nil, false, true)",
		new:  "ri.emitObject(Deleted, DeltaDeleted, toUnstructured(g), nil, false, false)",
		pkg:  "./pkg/watch",
		run:  []string{"TestProcessLifecycle"},
	},
	{
		name: "the tombstone flag is lost in JSON",
		file: "internal/recording/encode.go",
		old:  "InitialList: ev.InitialList, Delta: ev.Delta, Tombstone: ev.Tombstone,",
		new:  "InitialList: ev.InitialList, Delta: ev.Delta,",
		pkg:  "./internal/recording",
		run:  []string{"TestObjectLineSaysWhereItCameFrom"},
	},
	{
		name: "a watch add is flagged as part of the initial list",
		file: "pkg/watch/process.go",
		old:  "InitialList:     initial && t == Added,",
		new:  "InitialList:     t == Added,",
		pkg:  "./pkg/watch",
		run:  []string{"TestProcessLifecycle"},
	},
	{
		name: "a relist counts unchanged objects as updated",
		file: "pkg/watch/process.go",
		old:  "counts.Unchanged++",
		new:  "counts.Updated++",
		pkg:  "./pkg/watch",
		run:  []string{"TestProcessLifecycle"},
	},
	{
		name: "the queue depth is read from the adds counter",
		file: "pkg/watch/queue.go",
		old:  "Depth: wq.metrics.depth.Load()",
		new:  "Depth: wq.metrics.adds.Load()",
		pkg:  "./pkg/watch",
		run:  []string{"TestQueueDepthIsTheGaugeNotTheAdds"},
	},
	{
		name: "a slow reader of human output loses deletes",
		file: "internal/pipeline/outbox.go",
		old:  "case watch.Added, watch.Updated, watch.Bookmark, watch.Reconciled, watch.ControllerQueue:",
		new:  "case watch.Added, watch.Updated, watch.Deleted, watch.Bookmark, watch.Reconciled, watch.ControllerQueue:",
		pkg:  "./internal/pipeline",
		run:  []string{"TestOutboxNeverDropsDeletesLifecycleOrDiagnoses", "TestOutboxAccountsForEveryLine"},
	},
	{
		name: "a slow reader of human output loses HotLoop diagnoses",
		file: "internal/pipeline/outbox.go",
		old:  "case watch.Added, watch.Updated, watch.Bookmark, watch.Reconciled, watch.ControllerQueue:",
		new:  "case watch.Added, watch.Updated, watch.Bookmark, watch.Reconciled, watch.ControllerQueue, watch.HotLoop, watch.HotLoopEnded:",
		pkg:  "./internal/pipeline",
		run:  []string{"TestOutboxNeverDropsDeletesLifecycleOrDiagnoses"},
	},
	{
		name: "dropped lines are not counted",
		file: "internal/pipeline/outbox.go",
		old:  "		o.dropped++\n",
		new:  "\n",
		pkg:  "./internal/pipeline",
		run:  []string{"TestOutboxNeverDropsDeletesLifecycleOrDiagnoses", "TestOutboxAccountsForEveryLine"},
	},
	{
		name: "folded updates are not counted",
		file: "internal/pipeline/outbox.go",
		old:  "ev.Folded += s.ev.Folded + 1",
		new:  "ev.Folded = 1",
		pkg:  "./internal/pipeline",
		run:  []string{"TestOutboxFoldsUpdatesPerObject", "TestOutboxAccountsForEveryLine"},
	},
	{
		name: "a Secret's stringData is shown",
		file: "pkg/printer/redact.go",
		old:  `range []string{"data", "stringData"}`,
		new:  `range []string{"data"}`,
		pkg:  "./pkg/printer",
		run:  []string{"TestSecretsRedacted", "TestSecretsNeverLeak"},
	},
	{
		name: "an update is attributed to every manager, not the one whose entry moved",
		file: "internal/diff/managers.go",
		old:  "if b, ok := before[id]; ok && equal(a.time, b.time) && !gained(a.fieldsV1, b.fieldsV1) {",
		new:  "if b, ok := before[id]; ok && equal(a.time, b.time) && !gained(a.fieldsV1, b.fieldsV1) && false {",
		pkg:  "./internal/diff",
		run:  []string{"TestAttribute", "TestAttributeEntry"},
	},
	{
		name: "server text reaches the terminal unescaped",
		file: "pkg/printer/printer.go",
		old:  "b.WriteString(Escape(name))",
		new:  "b.WriteString(name)",
		pkg:  "./pkg/printer",
		run:  []string{"TestHostileTextHuman", "TestHostileTextAllForms"},
	},
	{
		name: "-o json hides noise and folds the updates of a hot object (JSON must keep every update)",
		file: "internal/pipeline/stages.go",
		old:  "hides: cfg.Human}",
		new:  "hides: true}",
		pkg:  "./internal/pipeline",
		run:  []string{"TestNoiseHiddenFromHumanOutputOnly"},
	},
	{
		name: "replay -l keeps a reconcile whose object's recorded labels do not match",
		file: "pkg/replay/filter.go",
		old:  `l := f.labels[ev.Resource.String()+" "+keyOf(ns, name)]`,
		new:  `l := labels.Set{"app": "db"}`,
		pkg:  "./pkg/replay",
		run:  []string{"TestFilterKeep"},
	},
	{
		name: "replay --until drops the lines of its very moment",
		file: "pkg/replay/filter.go",
		old:  "if f.Until.set && ev.Time.After(f.Until.at) {",
		new:  "if f.Until.set && !ev.Time.Before(f.Until.at) {",
		pkg:  "./pkg/replay",
		run:  []string{"TestFilterKeep"},
	},
	{
		name: "an update that changed only ignored fields is hidden without a count",
		file: "internal/analysis/summary.go",
		old:  "\t\tcase ev.Ignored:\n\t\t\ts.Ignored++",
		new:  "\t\tcase ev.Ignored:",
		pkg:  "./internal/analysis",
		run:  []string{"TestSummaryCounts"},
	},
	{
		name: "a replayed update is attributed to nobody (the printer no longer attributes it)",
		file: "internal/analysis/analysis.go",
		old:  "\t\tif ev.Attribution == nil {",
		new:  "\t\tif false {",
		pkg:  "./internal/analysis",
		run:  []string{"TestAnalyzeUpdate"},
	},
	{
		name: "--diff shows no change when no filter or detector needed the changes",
		file: "internal/analysis/analysis.go",
		old:  "changes:  cfg.Changes || cfg.Filter.Active() || hot != nil,",
		new:  "changes:  cfg.Filter.Active() || hot != nil,",
		pkg:  "./internal/analysis",
		run:  []string{"TestAnalyzeUpdate"},
	},
	{
		name: "a Folded line stands for fewer updates than it folded",
		file: "internal/noise/fold.go",
		old:  "\tp.count++\n",
		new:  "\tp.count = 1\n",
		pkg:  "./internal/noise",
		run:  []string{"TestFolder"},
	},
	{
		name: "an update that changed an ignored field and another one is hidden",
		file: "internal/noise/filter.go",
		old:  "ev.Ignored = kept == 0 && len(ev.Changes) > 0",
		new:  "ev.Ignored = kept < len(ev.Changes)",
		pkg:  "./internal/noise",
		run:  []string{"TestFilterMark"},
	},
	{
		name: "the report draws a relist's deliveries as watch updates",
		file: "internal/report/report.go",
		old:  "case ev.Tombstone || ev.Delta == watch.DeltaReplaced:",
		new:  "case ev.Tombstone:",
		pkg:  "./internal/report",
		run:  []string{"TestSeriesOf", "TestReadCountsMatchRecording"},
	},
	{
		name: "the report shows a Secret's changed values",
		file: "internal/report/report.go",
		old:  "if c.Sensitive || (secret && diff.IsSecretPath(c.Path)) {",
		new:  "if false {",
		pkg:  "./internal/report",
		run:  []string{"TestHTMLEscapesRecordingText"},
	},
	{
		name: "the report's page may load things from the network",
		file: "internal/report/render.go",
		old:  `CSP: "default-src 'none'; script-src "`,
		new:  `CSP: "script-src "`,
		pkg:  "./internal/report",
		run:  []string{"TestHTMLEscapesRecordingText"},
	},
}
