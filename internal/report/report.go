// Package report turns a recording (`kubectl informer watch --record FILE`, or saved `-o json`
// output) into one self-contained HTML page: a timeline per resource, markers for the
// informer's lifecycle, the queues' depth over time, the objects that changed most and who
// wrote them, each one's history, and the exit summary. Everything is aggregated here, in Go;
// the page only draws what it is given. It reads decoded recording lines (pkg/replay) and never
// talks to a cluster. What each chart is derived from is documented in docs/report.md.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/diff"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/internal/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
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
	case ev.InitialList:
		return SeriesInitial
	case ev.Tombstone || ev.Delta == watch.DeltaReplaced:
		return SeriesRelist
	case ev.Delta == watch.DeltaSync:
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
		if ev.Verb == "scrape" {
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
	Runs           []RunInfo
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
	// (an unchanged queue's scrapes are folded, so no line means no change) and for simulated
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
	Changes    int
	Writers    []Writer
	writers    map[string]int
	HotLoops   int
	Reconciles int
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
	// Managers and Rule say who made an update that changed it (internal/diff's attribution).
	Managers []string
	Rule     string
	NoOp     bool
	Changes  []Change
	// MoreChanges counts changes beyond MaxChanges.
	MoreChanges int
	Depth       *int64 // the simulated queue's depth after it was enqueued
	Filtered    string
	// Text is a diagnosis line's (HotLoop, HotLoopEnded) or an Event's (KubeEvent) words.
	Text string
}

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
func Read(r io.Reader, source string) (*Report, error) {
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
		b.add(line.Event, line.PluginVersion)
	}
}

// builder accumulates a report in one pass; the buckets are made at the end, once the span is
// known.
type builder struct {
	r       *Report
	good    int
	pipe    *pipeline.Pipeline
	summary *analysis.Summary
	// pluginVersion is the version of the plugin that recorded the line in the pipeline.
	pluginVersion string
	res           map[string]int // resource name -> index
	ticks         []tick
	objects       map[string]*Object
	sim           map[string]*QueueSeries
	scraped       map[string]*QueueSeries
	watched       map[string]bool // resources with a Watch line in this run
	lines         int
}

type tick struct {
	at     time.Time
	res    int
	series string
}

func newBuilder(source string) *builder {
	summary := analysis.NewSummary()
	summary.FromRecording = true
	b := &builder{
		r:       &Report{Source: source},
		summary: summary,
		res:     map[string]int{},
		objects: map[string]*Object{},
		sim:     map[string]*QueueSeries{},
		scraped: map[string]*QueueSeries{},
		watched: map[string]bool{},
	}
	b.pipe = pipeline.New(pipeline.Config{
		Analysis: analysis.Config{Changes: true},
		Summary:  summary,
		Emit: func(ev *watch.Event) error {
			b.aggregate(*ev)
			return nil
		},
	})
	return b
}

// resource returns the index of a resource's timeline, making it on first sight.
func (b *builder) resource(name, kind string) int {
	if i, ok := b.res[name]; ok {
		if b.r.Resources[i].Kind == "" {
			b.r.Resources[i].Kind = kind
		}
		return i
	}
	b.res[name] = len(b.r.Resources)
	b.r.Resources = append(b.r.Resources, &Resource{Name: name, Kind: kind, Counts: map[string]int{}})
	return len(b.r.Resources) - 1
}

// add takes a recorded line through the pipeline: analyzed (what each update changed and
// who made it, as replay shows them; the recorded marks and hot loops stay), counted in the
// summary, then aggregated.
func (b *builder) add(ev watch.Event, pluginVersion string) {
	b.pluginVersion = pluginVersion
	b.pipe.Process(&ev)
}

// aggregate adds an analyzed line to the report.
func (b *builder) aggregate(ev watch.Event) {
	r, pluginVersion := b.r, b.pluginVersion
	b.lines++
	r.Events++
	if r.First.IsZero() || ev.Time.Before(r.First) {
		r.First = ev.Time
	}
	if ev.Time.After(r.Last) {
		r.Last = ev.Time
	}
	resName := ev.Resource.String()
	switch {
	case ev.Type == watch.Informer:
		if ev.Info != nil {
			r.Runs = append(r.Runs, RunInfo{Time: ev.Time, PluginVersion: pluginVersion, Info: *ev.Info})
			for _, res := range ev.Info.Resources {
				b.resource(res.String(), res.Kind)
			}
		}
		clear(b.watched)
		return
	case ev.Type.IsObject():
		i := b.resource(resName, ev.Resource.Kind)
		s := SeriesOf(&ev)
		b.ticks = append(b.ticks, tick{at: ev.Time, res: i, series: s})
		r.Resources[i].Counts[s]++
		if ev.Queue != nil {
			b.depth(true, resName, "", ev.Time, float64(ev.Queue.Depth))
		}
		b.object(&ev, s)
	case ev.Type == watch.Reconciled:
		if ev.Queue != nil && resName != "" {
			b.depth(true, resName, "", ev.Time, float64(ev.Queue.Depth))
			b.sim[resName].Carried = true
		}
		r.ReconcileLines++
		ns, name := splitKey(ev.Key)
		if o := b.objects[watch.ObjectID(resName, ns, name)]; o != nil {
			o.Reconciles++
		}
	case ev.Type == watch.ControllerQueue:
		if ev.Sample != nil {
			name := ev.Sample.Name
			if ev.Sample.Controller != "" && ev.Sample.Controller != name {
				name += " (controller " + ev.Sample.Controller + ")"
			}
			b.depth(false, ev.URL+"\x00"+ev.Sample.Name, name, ev.Time, ev.Sample.Depth)
		}
	case ev.Type == watch.KubeEvent && ev.Kube != nil:
		// An Event a controller wrote about a watched object (--events) joins its history.
		k := ev.Kube
		for _, res := range r.Resources {
			if res.Kind != k.Regarding.Kind {
				continue
			}
			if o := b.objects[watch.ObjectID(res.Name, k.Regarding.Namespace, k.Regarding.Name)]; o != nil {
				o.record(Entry{Time: ev.Time, Type: string(ev.Type), Text: kubeEventText(k)})
				break
			}
		}
	case ev.Type == watch.HotLoop || ev.Type == watch.HotLoopEnded:
		ns, name := ev.Namespace, ev.Name
		if name == "" {
			ns, name = splitKey(ev.Key)
		}
		o := b.objectFor(resName, ns, name)
		if ev.Type == watch.HotLoop {
			o.HotLoops++
		}
		o.record(Entry{Time: ev.Time, Type: string(ev.Type), Text: hotLoopText(&ev)})
	}
	if m := markerOf(&ev); m != "" {
		mk := Marker{Type: m, Time: ev.Time, Resource: -1, Text: markerText(&ev, m)}
		if resName != "" && m != MarkerScrapeError {
			mk.Resource = b.resource(resName, ev.Resource.Kind)
		}
		if m == MarkerWatch {
			mk.Restart = b.watched[resName]
			b.watched[resName] = true
			if mk.Restart {
				mk.Text = strings.Replace(mk.Text, "watch started", "watch restarted", 1)
			}
		}
		r.Markers = append(r.Markers, mk)
	}
}

func splitKey(key string) (ns, name string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

func (b *builder) objectFor(res, ns, name string) *Object {
	k := watch.ObjectID(res, ns, name)
	o := b.objects[k]
	if o == nil {
		o = &Object{Resource: res, Namespace: ns, Name: name, ByType: map[string]int{}, writers: map[string]int{}, order: b.lines}
		b.objects[k] = o
	}
	return o
}

func (b *builder) depth(sim bool, key, name string, at time.Time, depth float64) {
	m := b.scraped
	if sim {
		m = b.sim
	}
	q := m[key]
	if q == nil {
		if name == "" {
			name = key
		}
		q = &QueueSeries{Name: name, Carried: !sim}
		if i := strings.IndexByte(key, 0); i >= 0 {
			q.URL = key[:i]
		}
		m[key] = q
		if sim {
			b.r.SimQueues = append(b.r.SimQueues, q)
		} else {
			b.r.Scraped = append(b.r.Scraped, q)
		}
	}
	q.Lines++
	q.MaxDepth = max(q.MaxDepth, depth)
	q.LastDepth = depth
	q.points = append(q.points, point{at: at, depth: depth})
}

// object records an object event in its object's counts and history.
func (b *builder) object(ev *watch.Event, series string) {
	o := b.objectFor(ev.Resource.String(), ev.Namespace, ev.Name)
	o.Events++
	o.ByType[string(ev.Type)]++
	e := Entry{
		Time: ev.Time, Type: string(ev.Type), Delta: string(ev.Delta), ResourceVersion: ev.ResourceVersion,
		OldResourceVersion: ev.OldResourceVersion, Series: series, Tombstone: ev.Tombstone, Filtered: ev.Filtered,
	}
	if ev.Queue != nil {
		d := ev.Queue.Depth
		e.Depth = &d
	}
	if ev.IsChange() {
		o.Changes++
		secret := printer.IsSecret(ev.Resource)
		changes := ev.Changes // the analysis step's
		var a diff.Attribution
		if ev.Attribution != nil {
			a = *ev.Attribution
		}
		e.Rule, e.NoOp = a.Rule, a.NoOp
		for _, m := range a.Managers {
			name := m.Manager
			if m.Subresource != "" {
				name += " (" + m.Subresource + ")"
			}
			if !slices.Contains(e.Managers, name) {
				e.Managers = append(e.Managers, name)
				o.writers[name]++
			}
		}
		for i, c := range changes {
			if i == MaxChanges {
				e.MoreChanges = len(changes) - MaxChanges
				break
			}
			e.Changes = append(e.Changes, changeOf(c, secret))
		}
	}
	o.record(e)
}

// record keeps an entry: the first HistoryHead, then a window of the newest HistoryTail.
func (o *Object) record(e Entry) {
	if len(o.History) < HistoryHead {
		o.History = append(o.History, e)
		return
	}
	o.tail = append(o.tail, e)
	if len(o.tail) >= 2*HistoryTail {
		o.Elided += len(o.tail) - HistoryTail
		o.tail = append(o.tail[:0:0], o.tail[len(o.tail)-HistoryTail:]...)
	}
}

func (o *Object) finish() {
	if n := len(o.tail) - HistoryTail; n > 0 {
		o.Elided += n
		o.tail = o.tail[n:]
	}
	o.History = append(o.History, o.tail...)
	o.tail = nil
	for m, n := range o.writers {
		o.Writers = append(o.Writers, Writer{Manager: m, Count: n})
	}
	sort.Slice(o.Writers, func(i, j int) bool {
		if o.Writers[i].Count != o.Writers[j].Count {
			return o.Writers[i].Count > o.Writers[j].Count
		}
		return o.Writers[i].Manager < o.Writers[j].Manager
	})
}

// changeOf words a change for the page: values as JSON, cut to MaxValue characters; a Secret's
// values (already redacted in the recording) are never shown.
func changeOf(c diff.Change, secret bool) Change {
	out := Change{Path: c.Path, HasOld: c.HasOld, HasNew: c.HasNew}
	val := func(v any) string {
		if c.Sensitive || (secret && diff.IsSecretPath(c.Path)) {
			return "<redacted>"
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Sprint(v)
		}
		return cut(strings.TrimSuffix(buf.String(), "\n"), MaxValue)
	}
	if c.HasOld {
		out.Old = val(c.Old)
	}
	if c.HasNew {
		out.New = val(c.New)
	}
	return out
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// finish makes the buckets, sorts the objects and writes the summary.
func (b *builder) finish(rd *replay.Reader, firstErr error) (*Report, error) {
	r := b.r
	if b.good == 0 {
		if firstErr != nil {
			return nil, fmt.Errorf("%s is not a recording: %w", r.Source, firstErr)
		}
		return nil, fmt.Errorf("%s is empty: not a recording", r.Source)
	}
	r.Headerless = rd.Headerless
	if r.Headerless {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s has no recording header (plain -o json output?): read as format version %d", r.Source, recording.FormatVersion))
	}
	span := r.Last.Sub(r.First)
	r.Bucket = BucketFor(span)
	r.Buckets = int(span/r.Bucket) + 1
	for _, res := range r.Resources {
		res.Bars = make([]map[string]int, r.Buckets)
	}
	for _, t := range b.ticks {
		i := r.bucketOf(t.at)
		bar := r.Resources[t.res].Bars[i]
		if bar == nil {
			bar = map[string]int{}
			r.Resources[t.res].Bars[i] = bar
		}
		bar[t.series]++
	}
	for _, res := range r.Resources {
		for _, bar := range res.Bars {
			total := 0
			for _, n := range bar {
				total += n
			}
			res.MaxRate = max(res.MaxRate, float64(total)/r.Bucket.Seconds())
		}
	}
	for _, q := range append(slices.Clone(r.SimQueues), r.Scraped...) {
		r.bucketDepth(q)
	}
	for _, o := range b.objects {
		o.finish()
		r.Objects = append(r.Objects, o)
	}
	sort.Slice(r.Objects, func(i, j int) bool {
		a, c := r.Objects[i], r.Objects[j]
		if a.Changes != c.Changes {
			return a.Changes > c.Changes
		}
		if a.Events != c.Events {
			return a.Events > c.Events
		}
		return a.order < c.order
	})
	// Histories: every object in a hot loop, then the busiest, up to HistoryObjects.
	n := 0
	for _, o := range r.Objects {
		if o.HotLoops > 0 && n < HistoryObjects {
			o.HasHistory = true
			n++
		}
	}
	for _, o := range r.Objects {
		if !o.HasHistory && n < HistoryObjects {
			o.HasHistory = true
			n++
		}
	}
	for i, o := range r.Objects {
		o.ID = fmt.Sprintf("obj-%d", i)
		if !o.HasHistory {
			o.History = nil
		}
	}
	sort.SliceStable(r.Markers, func(i, j int) bool { return r.Markers[i].Time.Before(r.Markers[j].Time) })
	var buf bytes.Buffer
	title := fmt.Sprintf("summary of %s (%s recorded, %d events)", r.Source, span.Round(time.Millisecond), r.Events)
	if err := printer.WriteSummary(&buf, title, b.summary); err == nil {
		r.Summary = buf.String()
	}
	if len(r.Damaged) > 0 {
		return r, &DamagedError{Source: r.Source, Lines: r.Damaged, First: firstErr}
	}
	return r, nil
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

// bucketSteps are the bucket widths a report may use: round numbers a person reads easily.
var bucketSteps = []time.Duration{
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// BucketFor returns the narrowest bucket width that covers span in at most MaxBuckets buckets.
func BucketFor(span time.Duration) time.Duration {
	for _, s := range bucketSteps {
		if span/s < MaxBuckets {
			return s
		}
	}
	return span/MaxBuckets + time.Second
}

func (r *Report) bucketOf(t time.Time) int {
	i := int(t.Sub(r.First) / r.Bucket)
	return min(max(i, 0), r.Buckets-1)
}

// bucketDepth turns a queue's samples into one depth per bucket: the highest sampled in it, or
// the last sample before it (a queue keeps its depth until the next sample says otherwise).
func (r *Report) bucketDepth(q *QueueSeries) {
	q.Depth = make([]float64, r.Buckets)
	q.Valid = make([]bool, r.Buckets)
	lastIn := make([]float64, r.Buckets)
	for _, p := range q.points {
		i := r.bucketOf(p.at)
		if !q.Valid[i] || p.depth > q.Depth[i] {
			q.Depth[i] = p.depth
		}
		q.Valid[i] = true
		lastIn[i] = p.depth
	}
	last, have := 0.0, false
	for i := range q.Depth {
		if q.Valid[i] {
			// Carried forward: the bucket's last sample, not its highest.
			last, have = lastIn[i], true
			continue
		}
		if have && q.Carried {
			q.Depth[i], q.Valid[i] = last, true
		}
	}
	q.points = nil
}

// kubeEventText words an Event about an object: `Warning BackOff: Back-off restarting failed
// container (by kubelet) x4`.
func kubeEventText(k *watch.KubeEventInfo) string {
	s := k.EventType + " " + k.Reason + ": " + k.Note
	if k.ReportingController != "" {
		s += " (by " + k.ReportingController + ")"
	}
	if k.Count > 1 {
		s += fmt.Sprintf(" x%d", k.Count)
	}
	return cut(s, 400)
}

// hotLoopText words a HotLoop or HotLoopEnded line for the history and the marker.
func hotLoopText(ev *watch.Event) string {
	var h watch.HotLoopInfo
	if ev.HotLoop != nil {
		h = *ev.HotLoop
	}
	if ev.Type == watch.HotLoopEnded {
		s := fmt.Sprintf("hot loop ended: %d updates in %s", h.Updates, h.Duration.Round(time.Millisecond))
		if len(h.Managers) > 0 {
			s += " by " + strings.Join(h.Managers, ", ")
		}
		if h.Loop != "" {
			s += " (" + h.Loop + ")"
		}
		if h.Deleted {
			s += "; the object was deleted"
		}
		return s
	}
	s := fmt.Sprintf("HOT LOOP (%s", h.Reason)
	if h.Loop != "" {
		s += ", " + h.Loop
	}
	s += fmt.Sprintf("): %d updates in %s", h.Updates, h.Window.Round(time.Millisecond))
	if len(h.Managers) > 0 {
		s += " by " + strings.Join(h.Managers, ", ")
	}
	if len(h.Fields) > 0 {
		s += "; flipping: " + strings.Join(h.Fields, ", ")
	}
	if h.Suggestion != "" {
		s += ". " + h.Suggestion
	}
	return s
}

// markerText says what a marker is, for the hover and the marker list.
func markerText(ev *watch.Event, m string) string {
	res := ev.Resource.String()
	var s string
	switch m {
	case MarkerWatch:
		s = "watch started"
		if ev.ResourceVersion != "" {
			s += " from resourceVersion " + ev.ResourceVersion
		} else {
			s += " from now"
		}
		if ev.SendInitialEvents {
			s += " (streaming list)"
		}
	case MarkerWatchClosed:
		s = "watch closed"
		if ev.Reason != "" {
			s += ": " + ev.Reason
		}
		if ev.ResourceVersion != "" {
			s += " (last resourceVersion " + ev.ResourceVersion + ")"
		}
	case MarkerError, MarkerScrapeError:
		s = "error"
		if ev.Verb != "" {
			s = ev.Verb + " error"
		}
		if m == MarkerScrapeError {
			s = "scrape failed"
		}
		s += " " + ev.Reason + ": " + ev.Message
	case MarkerRelist:
		c := ev.Counts
		s = fmt.Sprintf("relist from resourceVersion %s to %s: %d added, %d updated, %d deleted, %d unchanged",
			ev.FromResourceVersion, ev.ResourceVersion, c.Added, c.Updated, c.Deleted, c.Unchanged)
		if ev.Reason != "" {
			s += " (" + ev.Reason + ")"
		}
	case MarkerSynced:
		s = fmt.Sprintf("cache synced: %d objects in %s", ev.Items, ev.Duration)
	case MarkerHotLoop, MarkerHotLoopEnded:
		key := ev.Key
		if key == "" {
			key = ev.Namespace + "/" + ev.Name
		}
		s = key + ": " + hotLoopText(ev)
	}
	if res != "" && m != MarkerScrapeError {
		s = res + " " + s
	}
	return cut(s, 400)
}
