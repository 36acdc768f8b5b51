package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Results are the results of a controller's real reconciles (ControllerReconcile lines), in
// the order a lane stacks them: failures at the bottom, where the eye starts.
var Results = []string{"error", "requeue", "requeueAfter", "unknown", "ok"}

// resultLabel is what the legend and the hover say for a result.
var resultLabel = map[string]string{
	"ok": "ok", "error": "error", "requeue": "requeue", "requeueAfter": "requeue after", "unknown": "result not logged",
}

// Lane is one controller's real reconciles, read from its log (`watch --controller-logs`,
// `--controller-logs-from`): its row on the timeline, apart from the plugin's simulated
// Reconciled lines.
type Lane struct {
	Controller string
	// Counts are its reconciles by result, over the whole recording.
	Counts map[string]int
	// Bars[i] are bucket i's reconciles by result (only non-empty buckets are drawn).
	Bars []map[string]int
	// MaxBar is the most reconciles of one bucket.
	MaxBar int
	// NoTrigger counts the reconciles that had no trigger (a reason instead).
	NoTrigger int
	ticks     []laneTick
}

type laneTick struct {
	at     time.Time
	result string
}

// Total is every reconcile of the lane.
func (l *Lane) Total() int {
	n := 0
	for _, c := range l.Counts {
		n += c
	}
	return n
}

// ResultCount is a number of reconciles with one result.
type ResultCount struct {
	Result string
	Count  int
}

// resultCounts lists counts by result in Results' order, the empty ones left out.
func resultCounts(m map[string]int) []ResultCount {
	var out []ResultCount
	for _, r := range resultOrder(m) {
		out = append(out, ResultCount{Result: r, Count: m[r]})
	}
	return out
}

// resultOrder is the results of m, in Results' order, then any other (a newer plugin's) by name.
func resultOrder(m map[string]int) []string {
	var out []string
	for _, r := range Results {
		if m[r] > 0 {
			out = append(out, r)
		}
	}
	for r, n := range m {
		if n > 0 && resultLabel[r] == "" {
			out = append(out, r)
		}
	}
	return out
}

// resultOf is a reconcile's result as the lane counts it ("unknown" when the line has none).
func resultOf(ev *watch.Event) string {
	if ev.Reconcile == nil || ev.Reconcile.Result == "" {
		return "unknown"
	}
	return ev.Reconcile.Result
}

// controllerReconcile adds a real reconcile to its controller's lane and, when its object is
// watched, to the object's counts by result and its history.
func (b *builder) controllerReconcile(ev *watch.Event, resName string) {
	r := b.r
	r.ControllerReconcileLines++
	name := "(unnamed controller)"
	if ev.Reconcile != nil && ev.Reconcile.Controller != "" {
		name = ev.Reconcile.Controller
	}
	l := b.lanes[name]
	if l == nil {
		l = &Lane{Controller: name, Counts: map[string]int{}}
		b.lanes[name] = l
		r.Lanes = append(r.Lanes, l)
	}
	result := resultOf(ev)
	l.Counts[result]++
	l.ticks = append(l.ticks, laneTick{at: ev.Time, result: result})
	if ev.Queued.TriggerCount == 0 {
		l.NoTrigger++
	}
	if resName == "" || ev.Name == "" {
		return // an object of a kind not watched (reason notWatched): in its lane only
	}
	o := b.objectFor(resName, ev.Namespace, ev.Name)
	if o.Real == nil {
		o.Real = map[string]int{}
	}
	o.Real[result]++
	o.record(Entry{Time: ev.Time, Type: string(ev.Type), Result: result, Text: reconcileText(ev)})
}

// laneBars counts each lane's reconciles per bucket, once the buckets are known.
func (b *builder) laneBars() {
	r := b.r
	for _, l := range r.Lanes {
		l.Bars = make([]map[string]int, r.Buckets)
		for _, t := range l.ticks {
			countIn(l.Bars, r.bucketOf(t.at), t.result)
		}
		l.ticks = nil
		l.MaxBar = busiest(l.Bars)
	}
}

// reconcileText words a real reconcile for an object's history, as the human line does:
// `by widget (reconcile 6af6b3d9): error: boom in 14.6ms; trigger: Updated rv=6277 (by
// widget-operator)` or, without a trigger, the reason. The object is the history's own.
func reconcileText(ev *watch.Event) string {
	s := printer.ControllerReconcileText(ev)
	if _, rest, ok := strings.Cut(s, "  "); ok {
		s = rest
	}
	return cut(s, 400)
}

// laneView is a lane as the page draws it: stacked bars of reconciles by result per bucket,
// as high as the bucket's count against the lane's busiest bucket.
type laneView struct {
	*Lane
	Bars    []laneBar
	Results []ResultCount
}

type laneBar struct {
	Result string
	X, W   string
	Y, H   string
	Count  int
	Tip    string
}

// laneView draws a lane.
func (r *Report) laneView(l *Lane, bs float64) laneView {
	lv := laneView{Lane: l, Results: resultCounts(l.Counts)}
	for b, bar := range l.Bars {
		if len(bar) == 0 {
			continue
		}
		y := float64(ChartHeight)
		start := r.First.Add(time.Duration(b) * r.Bucket)
		for _, res := range resultOrder(bar) {
			n := bar[res]
			h := float64(n) / float64(l.MaxBar) * (ChartHeight - 10)
			y -= h
			lv.Bars = append(lv.Bars, laneBar{
				Result: res, X: num(float64(b) * bs), W: num(bs), Y: num(y), H: num(h), Count: n,
				Tip: clock(start) + "–" + clock(start.Add(r.Bucket)) + " " + l.Controller + ": " +
					strconv.Itoa(n) + " " + plural(n, "reconcile", "reconciles") + " " + resultWords(res),
			})
		}
	}
	return lv
}

// resultWords is a result as the legend and the hover say it.
func resultWords(res string) string {
	if w := resultLabel[res]; w != "" {
		return w
	}
	return res
}
