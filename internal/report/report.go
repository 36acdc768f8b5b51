// Package report turns a recording (`kubectl informer watch --record FILE`, or saved `-o json`
// output) into one self-contained HTML page: a timeline per resource, markers for the
// informer's lifecycle, the queues' depth over time, the objects that changed most and who
// wrote them, each one's history, and the exit summary. Everything is aggregated here, in Go;
// the page only draws what it is given. It reads decoded recording lines (pkg/replay) and never
// talks to a cluster. What each chart is derived from is documented in docs/report.md.
package report

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/internal/audit"
	"github.com/kubectl-informer/kubectl-informer/internal/redact"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Limits that keep the page light whatever the recording's size.
const (
	// MaxBuckets caps the time buckets of every chart.
	MaxBuckets = 500
	// TopObjects is how many objects the "changed most" table lists.
	TopObjects = 50
	// HistoryObjects is how many objects get a history (the busiest, and every one in a hot loop).
	HistoryObjects = 30
	// HistoryHead is how many of an object's first history entries are kept; the ones between
	// them and the newest HistoryTail are counted, not shown.
	HistoryHead = 100
	// HistoryTail is how many of an object's newest history entries are kept.
	HistoryTail = 400
	// MaxChanges caps the changes shown per history entry.
	MaxChanges = 12
	// MaxValue caps a changed value's text, in characters.
	MaxValue = 120
	// MaxMarkerList caps the markers listed in the table under the timeline (the chart has all).
	MaxMarkerList = 500
)

// Series are the kinds of object events a timeline stacks, by where they came from.
var Series = []string{SeriesAdded, SeriesUpdated, SeriesDeleted, SeriesInitial, SeriesRelist, SeriesResync}

// The timeline's series.
const (
	SeriesAdded   = "added"   // a watch ADDED event
	SeriesUpdated = "updated" // a watch MODIFIED event
	SeriesDeleted = "deleted" // a watch DELETED event
	SeriesInitial = "initial" // delivered by the initial list
	SeriesRelist  = "relist"  // delivered by a relist, or a tombstone (missing from a relist)
	SeriesResync  = "resync"  // a periodic resync
)

// seriesLabel is what the legend and the hover say for a series.
var seriesLabel = map[string]string{
	SeriesAdded: "Added (watch)", SeriesUpdated: "Updated (watch)", SeriesDeleted: "Deleted (watch)",
	SeriesInitial: "initial list", SeriesRelist: "relist (and tombstones)", SeriesResync: "resync",
}

// SeriesOf says which series an object event belongs to.
func SeriesOf(ev *watch.Event) string {
	switch {
	case ev.Obj.InitialList:
		return SeriesInitial
	case ev.Obj.Tombstone || ev.Obj.Delta == watch.DeltaReplaced:
		return SeriesRelist
	case ev.Obj.Delta == watch.DeltaSync:
		return SeriesResync
	case ev.Type == watch.Added:
		return SeriesAdded
	case ev.Type == watch.Deleted:
		return SeriesDeleted
	}
	return SeriesUpdated
}

// Marker types: the lifecycle lines a timeline marks.
const (
	MarkerWatch        = "Watch"
	MarkerWatchClosed  = "WatchClosed"
	MarkerError        = "Error"
	MarkerRelist       = "Relist"
	MarkerSynced       = "Synced"
	MarkerHotLoop      = "HotLoop"
	MarkerHotLoopEnded = "HotLoopEnded"
	MarkerScrapeError  = "ScrapeError"
)

// markerOf says which marker a line makes, if any.
func markerOf(ev *watch.Event) string {
	switch ev.Type {
	case watch.Watch:
		return MarkerWatch
	case watch.WatchClosed:
		return MarkerWatchClosed
	case watch.Error:
		if ev.Lifecycle.Verb == "scrape" {
			return MarkerScrapeError
		}
		return MarkerError
	case watch.Relist:
		return MarkerRelist
	case watch.Synced:
		return MarkerSynced
	case watch.HotLoop:
		return MarkerHotLoop
	case watch.HotLoopEnded:
		return MarkerHotLoopEnded
	}
	return ""
}

// Report is a recording, aggregated for the page.
type Report struct {
	// Source names the input ("demo.ndjson", "standard input").
	Source string
	Header *recording.Header
	// Headerless: plain -o json output, no recording header.
	Headerless bool
	// ReconcileLines counts the recording's Reconciled lines: without any (no simulated
	// workers), an object's reconciles are unknown, not 0.
	ReconcileLines int
	// ControllerReconcileLines counts the real reconciles read from controllers' logs
	// (ControllerReconcile lines); Lanes are they, one per controller, in order of appearance.
	ControllerReconcileLines int
	Lanes                    []*Lane
	Runs                     []RunInfo
	// First and Last are the first and last event lines' times.
	First, Last time.Time
	// Events counts the event lines read (the header not included).
	Events int
	// Damaged lists the line numbers that did not parse; Warnings what was skipped.
	Damaged  []int
	Warnings []string
	// Summary is the exit summary, as watch and replay print it on stderr.
	Summary string

	// Bucket is the width of every chart's time buckets; Buckets how many there are.
	Bucket  time.Duration
	Buckets int

	Resources []*Resource
	// Markers are every marker, in time order; Resource -1 for those of no resource (scrapes).
	Markers []Marker
	// SimQueues are the simulated workqueues (one per resource), Scraped the scraped ones.
	SimQueues []*QueueSeries
	Scraped   []*QueueSeries
	// Objects are every object seen, the most changed first.
	Objects []*Object
}

// RunInfo is one run's Informer line.
type RunInfo struct {
	Time          time.Time
	PluginVersion string
	Info          watch.InformerInfo
}

// Resource is one resource's timeline.
type Resource struct {
	Name string // plural.group, as kubectl names it: deployments.apps
	Kind string
	// Counts are its object events by series, over the whole recording.
	Counts map[string]int
	// Bars[i] are bucket i's counts by series (only non-empty buckets are drawn).
	Bars []map[string]int
	// MaxRate is the highest bucket total, in events per second.
	MaxRate float64
}

// Marker is one lifecycle line on a timeline.
type Marker struct {
	Type     string
	Time     time.Time
	Resource int // index in Report.Resources, -1 for none
	// Restart: a Watch line that is not its resource's first in the run.
	Restart bool
	Text    string
}

// QueueSeries is one queue's depth over time.
type QueueSeries struct {
	Name string // resource (simulated) or "name (controller) at URL" (scraped)
	URL  string
	// Lines counts the lines that gave a depth.
	Lines    int
	MaxDepth float64
	// Depth[i] is the highest depth seen in bucket i, or, in a bucket without a sample, the
	// last one before it when Carried; Valid[i] is false where nothing is known.
	Depth []float64
	Valid []bool
	// LastDepth is the last sample's depth.
	LastDepth float64
	// Carried: a bucket without a sample has the last sample's depth. True for scraped queues
	// (a change of depth always gets a line, so no line means the same depth) and for simulated
	// ones whose recording has Reconciled lines (the depth after each Done); without them the
	// depth is only known when a key is enqueued, and buckets without one are left empty.
	Carried bool
	points  []point
}

type point struct {
	at    time.Time
	depth float64
}

// Object is one object's events.
type Object struct {
	ID        string // DOM id: obj-N
	Resource  string
	Namespace string
	Name      string
	Events    int
	ByType    map[string]int
	// Changes counts the updates that changed it (not resyncs, not a relist's unchanged
	// redeliveries); Writers the managers named for them, most first.
	Changes int
	Writers []Writer
	// Heartbeats counts the updates that changed only heartbeat fields (noise.DefaultIgnore: a
	// Lease's renewTime, a Node's lastHeartbeatTime): they are not Changes, so an object that
	// only stays alive does not rank as one that changed.
	Heartbeats int
	writers    map[string]int
	HotLoops   int
	Reconciles int
	// Real counts its real reconciles (ControllerReconcile lines of it) by result; nil when none.
	Real map[string]int
	// History is its first HistoryHead and last HistoryTail entries (HotLoop, HotLoopEnded and
	// the KubeEvent lines about it included); Elided counts the entries between them that are not kept.
	History    []Entry
	Elided     int
	HasHistory bool
	tail       []Entry
	// order: index of the first line about it, for a stable sort.
	order int
}

// Key is namespace/name, or name for a cluster-scoped object.
func (o *Object) Key() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Total is the number of history entries: object events and diagnosis lines.
func (o *Object) Total() int { return len(o.History) + o.Elided }

// Writer is a manager and how many of an object's changes it was named for.
type Writer struct {
	Manager string
	Count   int
}

// Entry is one line of an object's history.
type Entry struct {
	Time               time.Time
	Type               string
	Delta              string
	ResourceVersion    string
	OldResourceVersion string
	Series             string
	Tombstone          bool
	// Managers and Rule say who made an update that changed it (pkg/diff's attribution).
	Managers []string
	Rule     string
	NoOp     bool
	// Heartbeat: the update changed only heartbeat fields (Object.Heartbeats).
	Heartbeat bool
	// AuditBy is who made the write by the audit log (a recording made with --audit-log, or
	// report --audit-log): the acting user, a service account as sa:NAMESPACE/NAME; "" when not
	// known.
	AuditBy string
	Changes []Change
	// MoreChanges counts changes beyond MaxChanges.
	MoreChanges int
	Depth       *int64 // the simulated queue's depth after it was enqueued
	Filtered    string
	// Text is a diagnosis line's (HotLoop, HotLoopEnded), an Event's (KubeEvent) or a real
	// reconcile's (ControllerReconcile) words.
	Text string
	// Result is a real reconcile's (ok, error, ...).
	Result string
}

// RealResults are its real reconciles by result, in Results' order.
func (o *Object) RealResults() []ResultCount { return resultCounts(o.Real) }

// Change is one changed field, its values as short JSON text.
type Change struct {
	Path     string
	Old, New string
	HasOld   bool
	HasNew   bool
}

// Read reads a recording and aggregates it. It fails (nothing to show) on a read error, a
// header of a newer format, or input with no line of a recording at all; damaged lines among
// good ones are listed in Report.Damaged, and the report is made without them.
func Read(r io.Reader, source string) (*Report, error) { return ReadJoined(r, source, nil) }

// ReadJoined is Read with each object line joined to an audit log of the recorded time (report
// --audit-log): its history entry names who made the write (nil: as recorded).
func ReadJoined(r io.Reader, source string, auditLog *audit.Recorded) (*Report, error) {
	rd, err := replay.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	b := newBuilder(source)
	var firstErr error
	warned := map[string]bool{}
	for {
		line, err := rd.Next()
		var lerr *replay.LineError
		var unknown *recording.UnknownTypeError
		switch {
		case errors.Is(err, io.EOF):
			return b.finish(rd, firstErr)
		case errors.As(err, &lerr) && errors.As(err, &unknown):
			if !warned[unknown.Type] {
				warned[unknown.Type] = true
				b.r.Warnings = append(b.r.Warnings, fmt.Sprintf("line %d: unknown line type %q (written by a newer kubectl informer?); lines of this type are not in the report", lerr.Line, unknown.Type))
			}
			continue
		case errors.As(err, &lerr):
			b.r.Damaged = append(b.r.Damaged, lerr.Line)
			if firstErr == nil {
				firstErr = lerr
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if line.Header != nil {
			if b.r.Header == nil {
				b.r.Header = line.Header
			}
			b.good++
			continue
		}
		b.good++
		fromLogs(&line.Event)
		auditLog.Join(&line.Event)
		b.add(line.Event, line.PluginVersion)
	}
}

// fromLogs escapes the control characters (C0, C1, bidirectional) and masks the credentials of
// the text a controller's log gave a line (ControllerReconcile, and the logs' Error and
// Recovered lines), as every other output does: the page is a file that cat and less show too,
// and a recording may come from anywhere.
func fromLogs(ev *watch.Event) {
	if ev.Type != watch.ControllerReconcile && ev.Lifecycle.Verb != "logs" {
		return
	}
	clean := func(s string) string { return printer.Escape(redact.Text(s)) }
	ev.Namespace, ev.Name, ev.Key = clean(ev.Namespace), clean(ev.Name), clean(ev.Key)
	ev.Lifecycle.Reason, ev.Lifecycle.Message = clean(ev.Lifecycle.Reason), clean(ev.Lifecycle.Message)
	if r := ev.Reconcile; r != nil {
		c := *r
		c.Controller, c.ReconcileID, c.Kind, c.Result = clean(c.Controller), clean(c.ReconcileID), clean(c.Kind), clean(c.Result)
		c.Error, c.ReasonMessage, c.Source, c.Format = clean(c.Error), clean(c.ReasonMessage), clean(c.Source), clean(c.Format)
		ev.Reconcile = &c
	}
}

// DamagedError says which lines were left out of a report that was otherwise made.
type DamagedError struct {
	Source string
	Lines  []int
	First  error
}

func (e *DamagedError) Error() string {
	nums := make([]string, 0, len(e.Lines))
	for i, n := range e.Lines {
		if i == 10 {
			nums = append(nums, fmt.Sprintf("and %d more", len(e.Lines)-10))
			break
		}
		nums = append(nums, fmt.Sprint(n))
	}
	word := "lines"
	if len(e.Lines) == 1 {
		word = "line"
	}
	return fmt.Sprintf("%s: %d damaged %s not in the report (line %s; the first: %v)", e.Source, len(e.Lines), word, strings.Join(nums, ", "), e.First)
}
