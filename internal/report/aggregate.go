package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubectl-informer/kubectl-informer/internal/analysis"
	"github.com/kubectl-informer/kubectl-informer/internal/noise"
	"github.com/kubectl-informer/kubectl-informer/internal/pipeline"
	"github.com/kubectl-informer/kubectl-informer/pkg/diff"
	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/summary"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// builder accumulates a report in one pass; the buckets are made at the end, once the span is
// known.
type builder struct {
	r       *Report
	good    int
	pipe    *pipeline.Pipeline
	summary *summary.Summary
	// pluginVersion is the version of the plugin that recorded the line in the pipeline.
	pluginVersion string
	res           map[string]int // resource name -> index
	ticks         []tick
	objects       map[string]*Object
	sim           map[string]*QueueSeries
	scraped       map[string]*QueueSeries
	watched       map[string]bool // resources with a Watch line in this run
	lanes         map[string]*Lane
	lines         int
	// heartbeat tells an update that only renewed a heartbeat from a change.
	heartbeat *noise.Filter
}

type tick struct {
	at     time.Time
	res    int
	series string
}

func newBuilder(source string) *builder {
	summary := summary.New()
	summary.FromRecording = true
	heartbeat, err := noise.NewFilter(nil, nil) // the default ignore paths: heartbeats
	if err != nil {
		panic(err) // the defaults parse: noise's tests prove it
	}
	b := &builder{
		heartbeat: heartbeat,
		r:         &Report{Source: source},
		summary:   summary,
		res:       map[string]int{},
		objects:   map[string]*Object{},
		sim:       map[string]*QueueSeries{},
		scraped:   map[string]*QueueSeries{},
		watched:   map[string]bool{},
		lanes:     map[string]*Lane{},
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
		if ev.Lifecycle.Info != nil {
			r.Runs = append(r.Runs, RunInfo{Time: ev.Time, PluginVersion: pluginVersion, Info: *ev.Lifecycle.Info})
			for _, res := range ev.Lifecycle.Info.Resources {
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
		if ev.Obj.Queue != nil {
			b.depth(true, resName, "", ev.Time, float64(ev.Obj.Queue.Depth))
		}
		b.object(&ev, s)
	case ev.Type == watch.Reconciled:
		if ev.Obj.Queue != nil && resName != "" {
			b.depth(true, resName, "", ev.Time, float64(ev.Obj.Queue.Depth))
			b.sim[resName].Carried = true
		}
		r.ReconcileLines++
		ns, name := splitKey(ev.Key)
		if o := b.objects[watch.ObjectID(resName, ns, name)]; o != nil {
			o.Reconciles++
		}
	case ev.Type == watch.ControllerQueue:
		if ev.Scrape.Sample != nil {
			name := ev.Scrape.Sample.Name
			if ev.Scrape.Sample.Controller != "" && ev.Scrape.Sample.Controller != name {
				name += " (controller " + ev.Scrape.Sample.Controller + ")"
			}
			b.depth(false, ev.Scrape.URL+"\x00"+ev.Scrape.Sample.Name, name, ev.Time, ev.Scrape.Sample.Depth)
		}
	case ev.Type == watch.ControllerReconcile:
		b.controllerReconcile(&ev, resName)
	case ev.Type == watch.KubeEvent && ev.Kube != nil:
		b.kubeEvent(&ev)
	case ev.Type == watch.HotLoop || ev.Type == watch.HotLoopEnded:
		b.hotLoop(&ev, resName)
	}
	if m := markerOf(&ev); m != "" {
		b.marker(&ev, m, resName)
	}
}

// kubeEvent adds an Event a controller wrote about a watched object (--events) to its history.
func (b *builder) kubeEvent(ev *watch.Event) {
	k := ev.Kube
	for _, res := range b.r.Resources {
		if res.Kind != k.Regarding.Kind {
			continue
		}
		if o := b.objects[watch.ObjectID(res.Name, k.Regarding.Namespace, k.Regarding.Name)]; o != nil {
			o.record(Entry{Time: ev.Time, Type: string(ev.Type), Text: kubeEventText(k)})
			break
		}
	}
}

// hotLoop counts a hot loop on its object and adds its start or end to the history.
func (b *builder) hotLoop(ev *watch.Event, resName string) {
	ns, name := ev.Namespace, ev.Name
	if name == "" {
		ns, name = splitKey(ev.Key)
	}
	o := b.objectFor(resName, ns, name)
	if ev.Type == watch.HotLoop {
		o.HotLoops++
	}
	o.record(Entry{Time: ev.Time, Type: string(ev.Type), Text: hotLoopText(ev)})
}

// marker puts a lifecycle marker on its resource's timeline; a second watch start on a resource
// in one run is a restart, which is what a reader looks for.
func (b *builder) marker(ev *watch.Event, m, resName string) {
	mk := Marker{Type: m, Time: ev.Time, Resource: -1, Text: markerText(ev, m)}
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
	b.r.Markers = append(b.r.Markers, mk)
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
		Time: ev.Time, Type: string(ev.Type), Delta: string(ev.Obj.Delta), ResourceVersion: ev.ResourceVersion,
		OldResourceVersion: ev.Obj.OldResourceVersion, Series: series, Tombstone: ev.Obj.Tombstone, Filtered: ev.Obj.Filtered,
	}
	if ev.Obj.Queue != nil {
		d := ev.Obj.Queue.Depth
		e.Depth = &d
	}
	if a := ev.Obj.Audit; a != nil {
		e.AuditBy = a.By()
		if a.ServiceAccount != "" && a.ImpersonatedUser == "" {
			e.AuditBy = "sa:" + a.ServiceAccount
		}
	}
	if ev.IsChange() {
		// An update that only renewed a heartbeat is in the history, not counted as a change.
		heartbeat := b.heartbeat.IgnoresAll(ev.Obj.Changes)
		if heartbeat {
			o.Heartbeats++
			e.Heartbeat = true
		} else {
			o.Changes++
		}
		secret := printer.IsSecret(ev.Resource)
		changes := ev.Obj.Changes // the analysis step's
		var a diff.Attribution
		if ev.Obj.Attribution != nil {
			a = *ev.Obj.Attribution
		}
		e.Rule, e.NoOp = a.Rule, a.NoOp
		for _, m := range a.Managers {
			name := m.Manager
			if m.Subresource != "" {
				name += " (" + m.Subresource + ")"
			}
			if !slices.Contains(e.Managers, name) {
				e.Managers = append(e.Managers, name)
				if !heartbeat {
					o.writers[name]++
				}
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
