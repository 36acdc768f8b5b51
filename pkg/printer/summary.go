package printer

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Summary counts what a run saw, for the exit summary on stderr.
type Summary struct {
	start      time.Time
	byType     map[watch.Type]int
	byDelta    map[watch.Type]map[watch.Delta]int
	reconciles int
	failed     int
	waits      []time.Duration
	works      []time.Duration
	maxDepth   int64
	last       map[string]watch.QueueFigures // per resource
	watches    map[string]int                // per resource
	// streamingLists: streaming lists that ended (their initial-events-end bookmark).
	streamingLists int
	// Scraping: ControllerQueue lines, scrape errors (counted apart from the informer's), URLs.
	queueLines, scrapeErrors int
	scraped                  map[string]bool
	// Hot loops: how many were found, and one line each once they ended.
	hotLoops int
	ended    []string
	ongoing  []watch.Event
	// Triggers: the object events that coalesced into the reconciles (Reconciled.TriggerCount).
	triggers int
	// --predicate: the object events each predicate filtered, of all object events.
	filtered   map[string]int
	objects    int
	predicates *PredicateReport
	// Noise: updates marked ignored or out of focus, and those folded into Folded lines.
	ignored, outOfFocus, foldedUpdates, foldedLines int
	// HidesNoise: the output is human, which hides what is noise (JSON only marks it).
	HidesNoise bool
	// FromRecording: the events come from a recording (replay, report), which has Reconciled
	// lines only when its run showed them; without them the reconciles are not known.
	FromRecording bool
	// ApiStats: the latest figures of each resource, in the order first seen.
	api      map[string]*watch.Event
	apiOrder []string
}

// PredicateReport is what the summary says about --predicate beyond the filtered lines it
// counts itself: the reconciles the predicates saved, measured live or read from a recording.
type PredicateReport struct {
	Predicates string // as given, e.g. "generation, labels|annotations"
	// Unfiltered: live runs, the reconciles a shadow queue fed every event ran.
	Unfiltered int64
	// Replay: recorded reconciles whose every trigger the predicates drop (Saved), and those
	// whose triggers were capped in the recording so that this cannot be told (Unknown).
	Replay                     bool
	Reconciles, Saved, Unknown int
}

// Predicates gives the summary what --predicate saved.
func (s *Summary) Predicates(r PredicateReport) { s.predicates = &r }

// NewSummary starts counting now.
func NewSummary() *Summary {
	return &Summary{
		start:    time.Now(),
		byType:   map[watch.Type]int{},
		byDelta:  map[watch.Type]map[watch.Delta]int{},
		filtered: map[string]int{},
		last:     map[string]watch.QueueFigures{},
		watches:  map[string]int{},
		scraped:  map[string]bool{},
		api:      map[string]*watch.Event{},
	}
}

// Add counts one event.
func (s *Summary) Add(ev *watch.Event) {
	s.byType[ev.Type]++
	if ev.Type.IsObject() {
		if s.byDelta[ev.Type] == nil {
			s.byDelta[ev.Type] = map[watch.Delta]int{}
		}
		s.byDelta[ev.Type][ev.Delta]++
		s.objects++
		if ev.Filtered != "" {
			s.filtered[ev.Filtered]++
		}
		switch {
		case ev.Ignored:
			s.ignored++
		case ev.OutOfFocus:
			s.outOfFocus++
		}
	}
	switch ev.Type {
	case watch.Reconciled:
		s.reconciles++
		s.triggers += ev.TriggerCount
		if ev.Failed {
			s.failed++
		}
		s.waits = append(s.waits, ev.Wait)
		s.works = append(s.works, ev.Work)
	case watch.Watch:
		s.watches[ev.Resource.String()]++
	case watch.Bookmark:
		if ev.InitialEventsEnd { // a streaming list ended: a complete list, without a List line
			s.streamingLists++
		}
	case watch.Folded:
		s.foldedUpdates += ev.Items
		s.foldedLines++
		return // not an event the informer received: the events it stands for were counted
	case HotLoop:
		s.hotLoops++
	case HotLoopEnded:
		s.ended = append(s.ended, hotLoopSummary(ev, "ended"))
	case watch.ApiStats:
		key := ev.Resource.String()
		if _, ok := s.api[key]; !ok {
			s.apiOrder = append(s.apiOrder, key)
		}
		s.api[key] = ev
	case watch.ControllerQueue:
		s.queueLines++
		s.scraped[ev.URL] = true
	case watch.Error:
		if ev.Verb == "scrape" {
			s.scrapeErrors++
			s.scraped[ev.URL] = true
		}
	}
	if ev.Queue != nil {
		s.maxDepth = max(s.maxDepth, ev.Queue.Depth)
		s.last[ev.Resource.String()] = *ev.Queue
	}
}

// percentile returns the p-th percentile (0..1) by the nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Write prints the summary as a few lines.
func (s *Summary) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "--- kubectl informer: summary after %s ---\n", time.Since(s.start).Round(time.Millisecond))
	var parts []string
	for _, t := range []watch.Type{watch.Added, watch.Updated, watch.Deleted} {
		if s.byType[t] == 0 {
			continue
		}
		var deltas []string
		for _, d := range []watch.Delta{watch.DeltaAdded, watch.DeltaUpdated, watch.DeltaDeleted, watch.DeltaReplaced, watch.DeltaSync} {
			if n := s.byDelta[t][d]; n > 0 {
				deltas = append(deltas, fmt.Sprintf("%s %d", d, n))
			}
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s)", t, s.byType[t], strings.Join(deltas, ", ")))
	}
	if n := s.byType[watch.KubeEvent]; n > 0 {
		parts = append(parts, fmt.Sprintf("KubeEvent %d", n))
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(&b, "events: %s\n", strings.Join(parts, "; "))
	restarts := 0
	for _, n := range s.watches {
		restarts += max(n-1, 0)
	}
	lists := fmt.Sprintf("%d lists", s.byType[watch.List]+s.streamingLists)
	if s.streamingLists > 0 {
		lists += fmt.Sprintf(" (%d streaming)", s.streamingLists)
	}
	fmt.Fprintf(&b, "informer: %s, %d relists, %d watch restarts, %d watch closes, %d errors, %d resyncs, %d bookmarks\n",
		lists, s.byType[watch.Relist], restarts, s.byType[watch.WatchClosed], s.byType[watch.Error]-s.scrapeErrors,
		s.byType[watch.Resync], s.byType[watch.Bookmark])
	for _, key := range s.apiOrder {
		if ev := s.api[key]; ev.API != nil {
			fmt.Fprintf(&b, "api %s: %s\n", Escape(key), APIFigures(ev.API))
		}
	}
	if len(s.scraped) > 0 {
		fmt.Fprintf(&b, "metrics: %d ControllerQueue lines from %d URLs, %d scrape errors (one per failure streak)\n",
			s.queueLines, len(s.scraped), s.scrapeErrors)
	}
	var final, adds, retries int64
	for _, q := range s.last {
		final += q.Depth
		adds += q.Adds
		retries += q.Retries
	}
	if s.FromRecording && s.reconciles == 0 {
		// The depth after the last enqueue is not the final depth, and 0 reconciles would
		// contradict the run that was recorded.
		fmt.Fprintf(&b, "queue: %d adds, %d retries, depth max %d; reconciles not recorded (no Reconciled lines: record with --show-reconciles)",
			adds, retries, s.maxDepth)
	} else {
		fmt.Fprintf(&b, "queue: %d adds, %d retries, depth max %d, final %d; %d reconciles (%d failed)",
			adds, retries, s.maxDepth, final, s.reconciles, s.failed)
	}
	if s.reconciles > 0 {
		fmt.Fprintf(&b, ", wait p50 %s p99 %s, work p50 %s p99 %s",
			roundMs(percentile(s.waits, 0.5)), roundMs(percentile(s.waits, 0.99)),
			roundMs(percentile(s.works, 0.5)), roundMs(percentile(s.works, 0.99)))
		fmt.Fprintf(&b, "; %d events enqueued, %.2f per reconcile", s.triggers, float64(s.triggers)/float64(s.reconciles))
	}
	b.WriteString("\n")
	if s.predicates != nil {
		s.writePredicates(&b)
	}
	if l := s.noise(); l != "" {
		b.WriteString(l + "\n")
	}
	if s.hotLoops > 0 {
		fmt.Fprintf(&b, "hot loops: %d found, %d ended\n", s.hotLoops, len(s.ended))
		for _, l := range s.ended {
			b.WriteString("  " + l + "\n")
		}
		for i := range s.ongoing {
			b.WriteString("  " + hotLoopSummary(&s.ongoing[i], "still going at exit") + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Ongoing gives the summary the hot loops not ended at exit (HotLoops.Ongoing).
func (s *Summary) Ongoing(evs []watch.Event) { s.ongoing = evs }

// hotLoopSummary is one hot loop in the summary: `deployments.apps demo/web: fight by a, b,
// 120 updates in 30.5s (ended)`.
func hotLoopSummary(ev *watch.Event, state string) string {
	managers, _ := hotLoopLists(ev)
	l := fmt.Sprintf("%s %s: %s", ev.Resource.String(), ev.Key, ev.Reason)
	if len(managers) > 0 {
		l += " by " + strings.Join(managers, ", ")
	}
	return Escape(fmt.Sprintf("%s, %d updates in %s (%s)", l, ev.Items, ev.Duration.Round(time.Millisecond), state))
}

func roundMs(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(100 * time.Microsecond).String()
}

// writePredicates says what --predicate filtered and what it saved.
func (s *Summary) writePredicates(b *strings.Builder) {
	r := s.predicates
	total := 0
	var by []string
	for _, name := range slices.Sorted(maps.Keys(s.filtered)) {
		total += s.filtered[name]
		by = append(by, fmt.Sprintf("%s %d", name, s.filtered[name]))
	}
	fmt.Fprintf(b, "predicates %s: %d of %d object events filtered", r.Predicates, total, s.objects)
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
		fmt.Fprintf(b, "; reconciles: %d with them, %d without (a shadow queue fed every event): %d saved\n", s.reconciles, r.Unfiltered, max(r.Unfiltered-int64(s.reconciles), 0))
	}
}

// noise says what was ignored, out of focus or folded, and how to see it: nothing is hidden
// without a count.
func (s *Summary) noise() string {
	if s.ignored+s.outOfFocus+s.foldedUpdates == 0 {
		return ""
	}
	var parts []string
	if s.foldedUpdates > 0 {
		parts = append(parts, fmt.Sprintf("%d updates of objects in a hot loop folded into %d Folded lines (--fold=off shows each)", s.foldedUpdates, s.foldedLines))
	}
	if s.ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d updates that changed only ignored paths (--ignore-path=- shows them)", s.ignored))
	}
	if s.outOfFocus > 0 {
		parts = append(parts, fmt.Sprintf("%d updates out of focus (no --only-path path changed)", s.outOfFocus))
	}
	if s.HidesNoise {
		return "hidden: " + strings.Join(parts, "; ") + "; -o json and --record keep every one"
	}
	return "marked: " + strings.Join(parts, "; ") + ` (every line kept, with "ignored" or "outOfFocus")`
}
