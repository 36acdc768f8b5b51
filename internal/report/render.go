package report

import (
	"crypto/sha256"
	_ "embed" // the page's template, style and script
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/shell"
)

// stdinSource is how the command names a recording read from standard input (Report.Source).
const stdinSource = "standard input"

var (
	//go:embed assets/report.html.tmpl
	pageTemplate string
	//go:embed assets/report.css
	pageCSS string
	//go:embed assets/report.js
	pageJS string
)

// ChartHeight is the height of every chart in its own units (the width is the recording's
// span in seconds: the page zooms by changing the charts' viewBox).
const ChartHeight = 100

// page is the report's template, parsed on first use: not at every start of the plugin (0.75 ms,
// most of this package's share of the start-up of a watch that renders no page).
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"clock":  clock,
		"num":    num,
		"join":   strings.Join,
		"label":  func(s string) string { return seriesLabel[s] },
		"plural": plural,
		"add":    func(a, b int) int { return a + b },
		// The words of a suggested command: a name may hold `;` or `$(...)`.
		"shq": shell.Quote,
		// replayArg is the recording as a replay command names it: a page made from standard
		// input has no file to name.
		"replayArg": func(source string) string {
			if source == stdinSource {
				return "FILE"
			}
			return shell.Quote(source)
		},
	}).Parse(pageTemplate))
})

// WriteHTML writes the report as one self-contained HTML page: no request leaves it (a
// Content-Security-Policy forbids any), the data it draws is in the page.
func (r *Report) WriteHTML(w io.Writer) error {
	return page().Execute(w, r.view())
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// num prints a chart coordinate: short, no exponent.
func num(f float64) string {
	s := strconv.FormatFloat(f, 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

// view is what the template draws: the report with every chart's geometry worked out.
type view struct {
	*Report
	CSP       string
	CSS       template.CSS
	JS        template.JS
	Data      pageData
	Width     string // the charts' width in their units: the span in seconds
	Height    int
	Timelines []timelineView
	// Lanes are the controllers' real reconciles; ResultLegend their results, when any.
	Lanes        []laneView
	ResultLegend []legendItem
	Queues       []queueChart
	Global       []markerView // markers of no resource (scrapes)
	MarkerAll    []markerView
	// MarkersFolded counts markers drawn as another of their type in the same bucket.
	MarkersFolded int
	Legend        []legendItem
	Top           []*Object
	Histories     []*Object
	Flags         [][2]string
	Span          string
	HeadLimit     int
}

// pageData is handed to the script as JSON (never as script text).
type pageData struct {
	StartMs  int64   `json:"startMs"`
	Span     float64 `json:"span"`
	BucketMs int64   `json:"bucketMs"`
}

type legendItem struct{ Series, Label string }

type timelineView struct {
	*Resource
	Bars    []barView
	Markers []markerView
	Total   int
	MaxRate string
}

type barView struct {
	Series  string
	X, W    string
	Y, H    string
	Count   int
	Tip     string
	Bucket  int
	Seconds float64
}

type markerView struct {
	Marker
	X        string
	Resource string
	Tip      string
	Symbol   string
	More     *int // markers of the same type in the same bucket, drawn as this one
}

// TipMore is the hover text of a drawn marker, with how many more it stands for.
func (m markerView) TipMore() string {
	if m.More == nil || *m.More == 0 {
		return m.Tip
	}
	return fmt.Sprintf("%s (and %d more %s in this bucket)", m.Tip, *m.More, m.Type)
}

type queueChart struct {
	Title  string
	Kind   string // sim or scraped
	Max    float64
	Series []queueView
}

type queueView struct {
	*QueueSeries
	Path  string
	Color int
	Tip   string
}

var markerSymbol = map[string]string{
	MarkerWatch: "W", MarkerWatchClosed: "C", MarkerError: "E", MarkerRelist: "R", MarkerSynced: "S",
	MarkerHotLoop: "H", MarkerHotLoopEnded: "h", MarkerScrapeError: "X",
}

func (r *Report) view() view {
	bs := r.Bucket.Seconds()
	width := float64(r.Buckets) * bs
	v := view{
		Report: r, Height: ChartHeight, Width: num(width),
		CSS: template.CSS(pageCSS), JS: template.JS(pageJS),
		CSP: "default-src 'none'; script-src " + hash(pageJS) + "; style-src " + hash(pageCSS) +
			"; img-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'",
		Data:      pageData{StartMs: r.First.UnixMilli(), Span: width, BucketMs: r.Bucket.Milliseconds()},
		Span:      r.Last.Sub(r.First).Round(time.Millisecond).String(),
		HeadLimit: HistoryHead,
	}
	for _, s := range Series {
		v.Legend = append(v.Legend, legendItem{Series: s, Label: seriesLabel[s]})
	}
	markers := r.markerViews(&v)
	for i, res := range r.Resources {
		if tv, ok := r.timeline(res, markers[i], bs); ok {
			v.Timelines = append(v.Timelines, tv)
		}
	}
	for _, l := range r.Lanes {
		v.Lanes = append(v.Lanes, r.laneView(l, bs))
	}
	if len(r.Lanes) > 0 {
		for _, res := range Results {
			v.ResultLegend = append(v.ResultLegend, legendItem{Series: res, Label: resultLabel[res]})
		}
	}
	if len(r.SimQueues) > 0 {
		v.Queues = append(v.Queues, r.queueChart("simulated workqueue depth (the plugin's own queue, per resource)", "sim", r.SimQueues))
	}
	if len(r.Scraped) > 0 {
		v.Queues = append(v.Queues, r.queueChart("scraped controller queue depth (ControllerQueue lines)", "scraped", r.Scraped))
	}
	for _, o := range r.Objects {
		if len(v.Top) < TopObjects {
			v.Top = append(v.Top, o)
		}
		if o.HasHistory {
			v.Histories = append(v.Histories, o)
		}
	}
	if r.Header != nil {
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range r.Header.Flags {
				if !yield(k) {
					return
				}
			}
		}) {
			name := "--" + k
			if k == "resources" || k == "name" { // the arguments, not flags
				name = k
			}
			v.Flags = append(v.Flags, [2]string{name, r.Header.Flags[k]})
		}
	}
	return v
}

// markerViews words and places the markers: those of a resource, one list per resource, go on
// its timeline; those of none (scrapes) into v.Global; every one, up to MaxMarkerList, into
// v.MarkerAll.
func (r *Report) markerViews(v *view) [][]markerView {
	markers := make([][]markerView, len(r.Resources))
	// One drawn marker per resource, type and time bucket: 200,000 Error lines draw at most
	// MaxBuckets marks per type and chart, not 200,000 (a 77 MB page); the mark counts the rest.
	type slot struct {
		res, bucket int
		typ         string
	}
	drawn := map[slot]*int{}
	for _, m := range r.Markers {
		sl := slot{res: m.Resource, typ: m.Type}
		if r.Bucket > 0 {
			sl.bucket = int(m.Time.Sub(r.First) / r.Bucket)
		}
		mv := markerView{Marker: m, X: num(m.Time.Sub(r.First).Seconds()), Symbol: markerSymbol[m.Type], More: new(int)}
		if m.Resource >= 0 {
			mv.Resource = r.Resources[m.Resource].Name
		}
		mv.Tip = clock(m.Time) + " " + m.Type
		if m.Restart {
			mv.Tip += " (restart)"
		}
		mv.Tip += ": " + m.Text
		if len(v.MarkerAll) < MaxMarkerList {
			v.MarkerAll = append(v.MarkerAll, mv)
		}
		if n, ok := drawn[sl]; ok {
			*n++
			v.MarkersFolded++
			continue
		}
		drawn[sl] = mv.More
		if m.Resource >= 0 {
			markers[m.Resource] = append(markers[m.Resource], mv)
		} else {
			v.Global = append(v.Global, mv)
		}
	}
	return markers
}

// timeline draws a resource's bars: one stack of series per bucket, as high as its rate. It is
// not drawn (false) when the resource has nothing to show.
func (r *Report) timeline(res *Resource, markers []markerView, bs float64) (timelineView, bool) {
	tv := timelineView{Resource: res, Markers: markers, MaxRate: num(res.MaxRate)}
	for _, n := range res.Counts {
		tv.Total += n
	}
	// A resource with no event and nothing but its informer's start to mark gets no chart:
	// a cluster-wide recording has dozens of them.
	if tv.Total == 0 && !slices.ContainsFunc(tv.Markers, func(m markerView) bool { return m.Type != "Watch" && m.Type != "Synced" }) {
		return tv, false
	}
	for b, bar := range res.Bars {
		if len(bar) == 0 {
			continue
		}
		y := float64(ChartHeight)
		start := r.First.Add(time.Duration(b) * r.Bucket)
		for _, s := range Series {
			n := bar[s]
			if n == 0 {
				continue
			}
			h := float64(n) / bs / res.MaxRate * (ChartHeight - 10)
			y -= h
			tv.Bars = append(tv.Bars, barView{
				Series: s, X: num(float64(b) * bs), W: num(bs), Y: num(y), H: num(h), Count: n, Bucket: b,
				Tip: fmt.Sprintf("%s–%s %s: %d %s (%s/s)", clock(start), clock(start.Add(r.Bucket)), res.Name, n, seriesLabel[s], num(float64(n)/bs)),
			})
		}
	}
	return tv, true
}

func (r *Report) queueChart(title, kind string, qs []*QueueSeries) queueChart {
	c := queueChart{Title: title, Kind: kind}
	for _, q := range qs {
		c.Max = max(c.Max, q.MaxDepth)
	}
	scale := c.Max
	if scale == 0 {
		scale = 1
	}
	bs := r.Bucket.Seconds()
	for i, q := range qs {
		var d strings.Builder
		open := false
		for b := range q.Depth {
			if !q.Valid[b] {
				open = false
				continue
			}
			y := num(ChartHeight - q.Depth[b]/scale*(ChartHeight-5))
			if !open {
				fmt.Fprintf(&d, "M%s %s", num(float64(b)*bs), y)
				open = true
			} else {
				fmt.Fprintf(&d, "V%s", y)
			}
			fmt.Fprintf(&d, "H%s", num(float64(b+1)*bs))
		}
		tip := q.Name
		if q.URL != "" {
			tip += " at " + q.URL
		}
		tip += fmt.Sprintf(": %d lines, depth max %s, last %s", q.Lines, num(q.MaxDepth), num(q.LastDepth))
		c.Series = append(c.Series, queueView{QueueSeries: q, Path: d.String(), Color: i % 8, Tip: tip})
	}
	return c
}
