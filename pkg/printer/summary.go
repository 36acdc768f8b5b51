package printer

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// simulatedQueue heads the simulated workqueue's figures: they are the plugin's, never a
// running controller's.
const simulatedQueue = "simulated queue (the plugin's own workqueue, not your controller's)"

// writeQueue writes the simulated workqueue's figures, without the line's end.
func writeQueue(b *strings.Builder, s *summary.Summary) {
	var final, adds, retries int64
	for _, q := range s.LastQueue {
		final += q.Depth
		adds += q.Adds
		retries += q.Retries
	}
	if s.FromRecording && s.Reconciles == 0 {
		// The depth after the last enqueue is not the final depth, and 0 reconciles would
		// contradict the run that was recorded.
		fmt.Fprintf(b, "%s: %d adds, %d retries, depth max %d; simulated reconciles not recorded (no Reconciled lines: record with --show-reconciles)",
			simulatedQueue, adds, retries, s.MaxDepth)
	} else {
		fmt.Fprintf(b, "%s: %d adds, %d retries, depth max %d, final %d; %d simulated reconciles (%d failed)",
			simulatedQueue, adds, retries, s.MaxDepth, final, s.Reconciles, s.Failed)
	}
	if s.Reconciles > 0 {
		fmt.Fprintf(b, ", wait p50 %s p99 %s, work p50 %s p99 %s",
			roundMs(summary.Percentile(s.Waits, 0.5)), roundMs(summary.Percentile(s.Waits, 0.99)),
			roundMs(summary.Percentile(s.Works, 0.5)), roundMs(summary.Percentile(s.Works, 0.99)))
		fmt.Fprintf(b, "; %d events enqueued, %.2f per reconcile", s.Triggers, float64(s.Triggers)/float64(s.Reconciles))
	}
}

// WriteSummary prints the exit summary as a few lines, under a head line that says title
// (`summary after 12.3s`, `summary of demo.ndjson (...)`; escaped by the caller).
func WriteSummary(w io.Writer, title string, s *summary.Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "--- kubectl informer: %s ---\n", title)
	var parts []string
	for _, t := range []watch.Type{watch.Added, watch.Updated, watch.Deleted} {
		if s.ByType[t] == 0 {
			continue
		}
		var deltas []string
		for _, d := range []watch.Delta{watch.DeltaAdded, watch.DeltaUpdated, watch.DeltaDeleted, watch.DeltaReplaced, watch.DeltaSync} {
			if n := s.ByDelta[t][d]; n > 0 {
				deltas = append(deltas, fmt.Sprintf("%s %d", d, n))
			}
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s)", t, s.ByType[t], strings.Join(deltas, ", ")))
	}
	if n := s.ByType[watch.KubeEvent]; n > 0 {
		parts = append(parts, fmt.Sprintf("KubeEvent %d", n))
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(&b, "events: %s\n", strings.Join(parts, "; "))
	restarts := s.WatchRestarts()
	lists := fmt.Sprintf("%d lists", s.Lists())
	if s.StreamingLists > 0 {
		lists += fmt.Sprintf(" (%d streaming)", s.StreamingLists)
	}
	fmt.Fprintf(&b, "informer: %s, %d relists, %d watch restarts, %d watch closes, %d errors, %d resyncs, %d bookmarks\n",
		lists, s.ByType[watch.Relist], restarts, s.ByType[watch.WatchClosed], s.ByType[watch.Error]-s.ScrapeErrors-s.LogErrors,
		s.ByType[watch.Resync], s.ByType[watch.Bookmark])
	for _, key := range s.APIOrder {
		if ev := s.API[key]; ev.Stats.API != nil {
			fmt.Fprintf(&b, "api %s: %s\n", Escape(key), APIFigures(ev.Stats.API))
		}
	}
	if len(s.Scraped) > 0 {
		fmt.Fprintf(&b, "metrics: %d ControllerQueue lines from %d URLs, %d scrape errors (one per failure streak)\n",
			s.QueueLines, len(s.Scraped), s.ScrapeErrors)
	}
	writeLogged(&b, s)
	if s.LogErrors > 0 {
		fmt.Fprintf(&b, "controller logs: %d errors reading the logs (pod logs that failed, a reading that fell behind; one per streak)\n", s.LogErrors)
	}
	writeQueue(&b, s)
	b.WriteString("\n")
	if s.Predicates != nil {
		writePredicates(&b, s)
	}
	if l := noiseLine(s); l != "" {
		b.WriteString(l + "\n")
	}
	if s.HotLoops > 0 {
		fmt.Fprintf(&b, "hot loops: %d found, %d ended\n", s.HotLoops, len(s.Ended))
		for i := range s.Ended {
			b.WriteString("  " + hotLoopSummary(&s.Ended[i], "ended") + "\n")
		}
		for i := range s.Ongoing {
			b.WriteString("  " + hotLoopSummary(&s.Ongoing[i], "still going at exit") + "\n")
		}
	}
	if r := s.Spans; r != nil {
		fmt.Fprintf(&b, "otlp: %d spans, %d exported, %d spans dropped\n", r.Spans, r.Exported, r.Dropped)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hotLoopSummary is one hot loop in the summary: `deployments.apps demo/web: fight by a, b,
// 120 updates in 30.5s (ended)`.
func hotLoopSummary(ev *watch.Event, state string) string {
	h := ev.HotLoopInfo()
	l := fmt.Sprintf("%s %s: %s", ev.Resource.String(), ev.Key, h.Loop)
	if len(h.Managers) > 0 {
		l += " by " + strings.Join(h.Managers, ", ")
	}
	return Escape(fmt.Sprintf("%s, %d updates in %s (%s)", l, h.Updates, h.Duration.Round(time.Millisecond), state))
}

func roundMs(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(100 * time.Microsecond).String()
}

// writePredicates says what --predicate filtered and what it saved.
func writePredicates(b *strings.Builder, s *summary.Summary) {
	r := s.Predicates
	total := 0
	var by []string
	for _, name := range slices.Sorted(maps.Keys(s.Filtered)) {
		total += s.Filtered[name]
		by = append(by, fmt.Sprintf("%s %d", name, s.Filtered[name]))
	}
	fmt.Fprintf(b, "predicates %s: %d of %d object events filtered", r.Predicates, total, s.Objects)
	if len(by) > 1 {
		fmt.Fprintf(b, " (%s)", strings.Join(by, ", "))
	}
	switch {
	case r.Replay && r.Reconciles == 0:
		b.WriteString("; the recording has no Reconciled lines (recorded without worker flags or --show-reconciles), so the reconciles saved cannot be told\n")
	case r.Replay && r.Unknown > 0:
		fmt.Fprintf(b, "; of %d recorded reconciles, at least %d ran only for filtered events and would not have run (%d had more triggers than the recording keeps)\n", r.Reconciles, r.Saved, r.Unknown)
	case r.Replay:
		fmt.Fprintf(b, "; of %d recorded reconciles, %d ran only for filtered events and would not have run\n", r.Reconciles, r.Saved)
	default:
		fmt.Fprintf(b, "; reconciles: %d with them, %d without (a shadow queue fed every event): %d saved\n", s.Reconciles, r.Unfiltered, max(r.Unfiltered-int64(s.Reconciles), 0))
	}
}

// noise says what was ignored, out of focus or folded, and how to see it: nothing is hidden
// without a count.
func noiseLine(s *summary.Summary) string {
	if s.Ignored+s.OutOfFocus+s.FoldedUpdates == 0 {
		return ""
	}
	var parts []string
	if s.FoldedUpdates > 0 {
		parts = append(parts, fmt.Sprintf("%d updates of objects in a hot loop folded into %d Folded lines (--fold=off shows each)", s.FoldedUpdates, s.FoldedLines))
	}
	if s.Ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d updates that changed only ignored paths (--ignore-path=- shows them)", s.Ignored))
	}
	if s.OutOfFocus > 0 {
		parts = append(parts, fmt.Sprintf("%d updates out of focus (no --only-path path changed)", s.OutOfFocus))
	}
	if s.HidesNoise {
		return "hidden: " + strings.Join(parts, "; ") + "; -o json and --record keep every one"
	}
	return "marked: " + strings.Join(parts, "; ") + ` (every line kept, with "ignored" or "outOfFocus")`
}

// writeLogged says what each controller's log showed (--controller-logs): its reconciles by
// result, the events per reconcile, the objects it reconciled most.
func writeLogged(b *strings.Builder, s *summary.Summary) {
	names := make([]string, 0, len(s.Logged))
	for name := range s.Logged {
		names = append(names, name)
	}
	sort.Strings(names)
	read := false // some log showed a reconcile: logs were read
	for _, l := range s.Logged {
		read = read || l.Reconciles > 0
	}
	for _, name := range names {
		l := s.Logged[name]
		if l.Reconciles == 0 {
			writeUnshown(b, name, l, read || s.LogsRead)
			continue
		}
		results := make([]string, 0, len(l.ByResult))
		for r := range l.ByResult {
			results = append(results, r)
		}
		sort.Strings(results)
		for i, r := range results {
			results[i] = fmt.Sprintf("%d %s", l.ByResult[r], Escape(r))
		}
		most := l.MostReconciled(3)
		for i, k := range most {
			most[i] = fmt.Sprintf("%s (%d)", Escape(k), l.Objects[k])
		}
		fmt.Fprintf(b, "controller %s (from its log): %d reconciles (%s), %.2f events per reconcile, %d with no trigger; most reconciled: %s\n",
			Escape(name), l.Reconciles, strings.Join(results, ", "), float64(l.Triggers)/float64(l.Reconciles), l.NoTrigger, strings.Join(most, ", "))
		if l.Saved > 0 && s.Predicates != nil {
			fmt.Fprintf(b, "  --predicate %s would have saved %d of them: every event that triggered them is one it drops\n", Escape(s.Predicates.Predicates), l.Saved)
		}
		if l.Counted >= 0 {
			b.WriteString("  " + coverage(l) + "\n")
		}
	}
}

// writeUnshown says why a controller that no ControllerReconcile line shows has none: its
// reconciles name no object (a singleton's), or, scraped with logs read, no line read names one.
// A controller whose metrics count no reconcile is not said.
func writeUnshown(b *strings.Builder, name string, l *summary.LoggedReconciles, logsRead bool) {
	switch {
	case l.NoObject > 0 && l.Counted > 0:
		fmt.Fprintf(b, "controller %s: its log shows %s of %s reconciles its metrics count since it started (%.0f%%), none of which names an object (a singleton controller's): counted, never a ControllerReconcile line\n",
			Escape(name), thousands(float64(l.NoObject)), thousands(l.Counted), 100*float64(l.NoObject)/l.Counted)
	case l.NoObject > 0:
		fmt.Fprintf(b, "controller %s: its log shows %s reconciles that name no object (a singleton controller's): counted, never a ControllerReconcile line\n",
			Escape(name), thousands(float64(l.NoObject)))
	case l.Counted > 0 && logsRead:
		// Scraped, and logs read, but no reconcile of this one in them.
		fmt.Fprintf(b, "controller %s: its log shows 0 of %s reconciles its metrics count: no line read names a reconcile of it (stderr said what each log held); is its log among --controller-logs? For every reconcile run it at --zap-log-level=5 (controller-runtime) or -v=4 (klog)\n",
			Escape(name), thousands(l.Counted))
	}
}

// coverage says how many of the reconciles a controller's metrics count its log showed, and
// why not every one.
func coverage(l *summary.LoggedReconciles) string {
	if float64(l.Reconciles) >= l.Counted {
		return fmt.Sprintf("its log shows every one of the %s reconciles its metrics count since it started", thousands(l.Counted))
	}
	s := fmt.Sprintf("its log shows %s of %s reconciles its metrics count since it started (%.0f%%)",
		thousands(float64(l.Reconciles)), thousands(l.Counted), 100*float64(l.Reconciles)/l.Counted)
	if l.FromLines == l.Reconciles {
		// No reconcile's start or end was logged: verbosity 5 is off.
		return s + ": it logs at info, so a reconcile shows only when it logs a line; for every reconcile run it at --zap-log-level=5 (controller-runtime) or -v=4 (klog)"
	}
	return s + ": to see every one, run it at --zap-log-level=5 (controller-runtime) or -v=4 (klog), and follow its log from its start"
}

// thousands writes a count with thousands separators: 1,955.
func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
