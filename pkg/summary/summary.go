// Package summary counts what a run saw, for the summary printed at exit and the report: the
// events each type and delta, the reconciles and their waits, what the analysis step marked, the
// controllers' logs and scrapes, and the spans sent.
package summary

import (
	"slices"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Summary counts what a run saw, for the exit summary (printer.WriteSummary renders it) and
// the report: one accounting, so that they cannot disagree. Add feeds it the events the
// outputs got, analyzed; its fields are the figures, read once the run is over. It is used
// from one goroutine.
type Summary struct {
	// ByType counts the events of each type; ByDelta the object events of each type by delta.
	ByType  map[watch.Type]int
	ByDelta map[watch.Type]map[watch.Delta]int
	// Objects counts the object events; Filtered those each --predicate filtered.
	Objects  int
	Filtered map[string]int
	// Reconciles, the failed ones, and their waits and works (Reconciled lines).
	Reconciles, Failed int
	Waits, Works       []time.Duration
	// Triggers: the object events that coalesced into the reconciles (TriggerCount).
	Triggers int
	// MaxDepth is the simulated workqueue's deepest; LastQueue its last figures per resource.
	MaxDepth  int64
	LastQueue map[string]watch.QueueFigures
	// Watches counts the Watch lines per resource (the first is no restart).
	Watches map[string]int
	// StreamingLists: streaming lists that ended (their initial-events-end bookmark).
	StreamingLists int
	// Scraping: ControllerQueue lines, scrape errors (counted apart from the informer's), and
	// the URLs they came from.
	QueueLines, ScrapeErrors int
	Scraped                  map[string]bool
	// Logged: the ControllerReconcile lines of each controller (--controller-logs).
	Logged map[string]*LoggedReconciles
	// LogsRead: controllers' logs are read (set by the caller before the run): a controller its
	// metrics count whose log showed no reconcile is said, and each ControllerQueue line of a
	// controller says how many of its reconciles its log showed so far.
	LogsRead bool
	// LogErrors: Error lines of controllers' logs (pod logs, LogBehind), counted apart from the
	// informer's.
	LogErrors int
	// HotLoops counts the HotLoop lines; Ended holds the HotLoopEnded ones; Ongoing the loops
	// still going at exit (Step.Ongoing, set by the caller).
	HotLoops int
	Ended    []watch.Event
	Ongoing  []watch.Event
	// Noise: updates marked ignored or out of focus, and those folded into Folded lines.
	Ignored, OutOfFocus, FoldedUpdates, FoldedLines int
	// API holds the latest ApiStats line of each resource, APIOrder the resources in the order
	// first seen.
	API      map[string]*watch.Event
	APIOrder []string
	// Predicates: what --predicate saved, set by the caller at the end; nil without it.
	Predicates *PredicateReport
	// HidesNoise: the output is human, which hides what is noise (JSON only marks it).
	HidesNoise bool
	// FromRecording: the events come from a recording (replay, report), which has Reconciled
	// lines only when its run showed them; without them the reconciles are not known.
	FromRecording bool
	// Spans: what --otlp exported, set by the caller at the end; nil without it.
	Spans *SpanReport
}

// SpanReport is what the summary says about --otlp: the spans made, those the collector took,
// those lost (the queue full, the collector down, slow or refusing).
type SpanReport struct {
	Spans, Exported, Dropped int64
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

// New returns an empty summary.
func New() *Summary {
	return &Summary{
		ByType:    map[watch.Type]int{},
		ByDelta:   map[watch.Type]map[watch.Delta]int{},
		Filtered:  map[string]int{},
		LastQueue: map[string]watch.QueueFigures{},
		Watches:   map[string]int{},
		Scraped:   map[string]bool{},
		API:       map[string]*watch.Event{},
		Logged:    map[string]*LoggedReconciles{},
	}
}

// LoggedReconciles counts one controller's reconciles read from its log.
type LoggedReconciles struct {
	// Reconciles counts them, ByResult by result (ok, error, requeue, ...).
	Reconciles int
	ByResult   map[string]int
	// FromLines: those whose start and end the log did not say (bounds "lines": a controller
	// logging at info).
	FromLines int
	// Triggers: the watched events they were joined to; NoTrigger: the reconciles with none;
	// Saved: those with triggers, every one of them kept out of the workqueue by --predicate.
	Triggers, NoTrigger, Saved int
	// Objects counts the reconciles of each object (namespace/name).
	Objects map[string]int
	// Counted is the controller's own controller_runtime_reconcile_total at its last scrape
	// (--metrics-*), -1 when not scraped: what the log should show if it covers the controller's
	// whole life at verbosity 5.
	Counted float64
	// NoObject: reconciles of it its logs showed, none of whose lines names an object (a
	// singleton controller's): counted, never a ControllerReconcile line.
	NoObject int
}

// MostReconciled returns up to n objects with the most reconciles, most first.
func (l *LoggedReconciles) MostReconciled(n int) []string {
	keys := make([]string, 0, len(l.Objects))
	for k := range l.Objects {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := l.Objects[b] - l.Objects[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return keys[:min(n, len(keys))]
}

// logged is controller's count, made on first use.
func (s *Summary) logged(controller string) *LoggedReconciles {
	l := s.Logged[controller]
	if l == nil {
		l = &LoggedReconciles{ByResult: map[string]int{}, Objects: map[string]int{}, Counted: -1}
		s.Logged[controller] = l
	}
	return l
}

// counted notes a scraped controller's reconcile total, for the controllers whose logs are read.
func (s *Summary) counted(controller string, total float64) {
	s.logged(controller).Counted = total
}

// SetNoObject notes how many reconciles of controller its logs showed that name no object (set
// by the caller at the end).
func (s *Summary) SetNoObject(controller string, n int) { s.logged(controller).NoObject = n }

// SetCounted notes a scraped controller's reconcile total at its last scrape (set by the caller
// at the end: a ControllerQueue line may have been folded since).
func (s *Summary) SetCounted(controller string, total float64) { s.counted(controller, total) }

func (s *Summary) addLogged(ev *watch.Event) {
	r := ev.Reconcile
	if r == nil {
		return
	}
	l := s.logged(r.Controller)
	l.Reconciles++
	l.ByResult[r.Result]++
	if r.Bounds == "lines" {
		l.FromLines++
	}
	l.Triggers += ev.Queued.TriggerCount
	if ev.Queued.TriggerCount == 0 {
		l.NoTrigger++
	}
	if ev.Queued.TriggerCount > 0 && r.FilteredTriggers == ev.Queued.TriggerCount {
		l.Saved++
	}
	l.Objects[ev.Key]++
}

// Add counts one event.
func (s *Summary) Add(ev *watch.Event) {
	s.ByType[ev.Type]++
	if ev.Type.IsObject() {
		if s.ByDelta[ev.Type] == nil {
			s.ByDelta[ev.Type] = map[watch.Delta]int{}
		}
		s.ByDelta[ev.Type][ev.Obj.Delta]++
		s.Objects++
		if ev.Obj.Filtered != "" {
			s.Filtered[ev.Obj.Filtered]++
		}
		switch {
		case ev.Obj.Ignored:
			s.Ignored++
		case ev.Obj.OutOfFocus:
			s.OutOfFocus++
		}
	}
	switch ev.Type {
	case watch.Reconciled:
		s.Reconciles++
		s.Triggers += ev.Queued.TriggerCount
		if ev.Queued.Failed {
			s.Failed++
		}
		s.Waits = append(s.Waits, ev.Queued.Wait)
		s.Works = append(s.Works, ev.Queued.Work)
	case watch.Watch:
		s.Watches[ev.Resource.String()]++
	case watch.Bookmark:
		if ev.Lifecycle.InitialEventsEnd { // a streaming list ended: a complete list, without a List line
			s.StreamingLists++
		}
	case watch.Folded:
		if ev.HotLoop != nil {
			s.FoldedUpdates += ev.HotLoop.Updates
		}
		s.FoldedLines++
		return // not an event the informer received: the events it stands for were counted
	case watch.HotLoop:
		s.HotLoops++
	case watch.HotLoopEnded:
		s.Ended = append(s.Ended, *ev)
	case watch.ApiStats:
		key := ev.Resource.String()
		if _, ok := s.API[key]; !ok {
			s.APIOrder = append(s.APIOrder, key)
		}
		s.API[key] = ev
	case watch.ControllerReconcile:
		s.addLogged(ev)
	case watch.ControllerQueue:
		if q := ev.Scrape.Sample; q != nil && q.HasReconciles && q.Controller != "" {
			s.counted(q.Controller, q.Reconciles.Total())
			if s.LogsRead {
				// The line states the coverage so far (its reconciles' lines come a little later).
				q.LogShows, q.HasLogShows = s.logged(q.Controller).Reconciles, true
			}
		}
		s.QueueLines++
		s.Scraped[ev.Scrape.URL] = true
	case watch.Error:
		switch ev.Lifecycle.Verb {
		case "scrape":
			s.ScrapeErrors++
			s.Scraped[ev.Scrape.URL] = true
		case "logs":
			s.LogErrors++
		}
	}
	if ev.Obj.Queue != nil {
		s.MaxDepth = max(s.MaxDepth, ev.Obj.Queue.Depth)
		s.LastQueue[ev.Resource.String()] = *ev.Obj.Queue
	}
}

// Lists counts the complete lists: List lines and streaming lists.
func (s *Summary) Lists() int { return s.ByType[watch.List] + s.StreamingLists }

// WatchRestarts counts the watches started after a resource's first.
func (s *Summary) WatchRestarts() int {
	n := 0
	for _, w := range s.Watches {
		n += max(w-1, 0)
	}
	return n
}

// Percentile returns the p-th percentile (0..1) of ds by the nearest-rank method.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
