// Package scrape reads a running controller's workqueue metrics from its Prometheus endpoint.
//
// Both controller-runtime and plain client-go controllers (through k8s.io/component-base) export
// the same seven workqueue metric families, labelled by queue name (and, for controller-runtime,
// by controller). Parse turns an exposition into one watch.QueueSample per queue; Scraper fetches an
// endpoint; Poll scrapes one repeatedly and reports failures once per failure streak.
package scrape

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kubectl-informer/kubectl-informer/pkg/watch"
)

// Exact metric family names read by Parse. Nothing else in the exposition is looked at.
const (
	MetricDepth                   = "workqueue_depth"
	MetricAdds                    = "workqueue_adds_total"
	MetricRetries                 = "workqueue_retries_total"
	MetricQueueDuration           = "workqueue_queue_duration_seconds"
	MetricWorkDuration            = "workqueue_work_duration_seconds"
	MetricUnfinishedWork          = "workqueue_unfinished_work_seconds"
	MetricLongestRunningProcessor = "workqueue_longest_running_processor_seconds"
)

// controller-runtime's reconcile metric families, labelled by controller (reconcile_total also
// by result). They are attached to the queue of the same controller.
const (
	MetricReconcileTotal          = "controller_runtime_reconcile_total"
	MetricReconcileErrors         = "controller_runtime_reconcile_errors_total"
	MetricTerminalReconcileErrors = "controller_runtime_terminal_reconcile_errors_total"
	MetricReconcilePanics         = "controller_runtime_reconcile_panics_total"
	MetricReconcileTime           = "controller_runtime_reconcile_time_seconds"
	MetricActiveWorkers           = "controller_runtime_active_workers"
	MetricMaxConcurrentReconciles = "controller_runtime_max_concurrent_reconciles"
)

// Label names identifying a queue.
const (
	LabelName       = "name"
	LabelController = "controller"
	LabelResult     = "result"
)

// Page is what one scrape found: the queues, and how many metric families the page had in all
// (so that a page without workqueue metrics can be told from an empty one).
type Page struct {
	Queues   []watch.QueueSample
	Families int
}

// Parse reads the Prometheus text exposition format (version 0.0.4) and returns one sample per
// (name, controller) seen in any workqueue metric, sorted by controller, then name, with
// controller-runtime's reconcile metrics attached to their controller's queue. Everything else
// is ignored. An input without workqueue metrics yields an empty slice and no error; a malformed
// input yields a one-line error.
func Parse(r io.Reader) ([]watch.QueueSample, error) {
	page, err := ParsePage(r)
	return page.Queues, err
}

// ParsePage is Parse, also counting the page's metric families.
func ParsePage(r io.Reader) (page Page, err error) {
	// The upstream parser has panicked on malformed input (v0.70.0: a TYPE line followed by a
	// line "{}"); a bad metrics page must be an error, never a crash.
	defer recoverParsePanic(&page, &err)
	// Only the families read reach the parser, within the bounds of bound.go.
	kept, count, err := sift(r)
	if err != nil {
		return Page{}, oneLineError{err}
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(kept))
	if err != nil {
		return Page{}, oneLineError{err}
	}
	return Page{Queues: fromFamilies(families), Families: count}, nil
}

func recoverParsePanic(page *Page, err *error) {
	if r := recover(); r != nil {
		*page = Page{}
		*err = oneLineError{fmt.Errorf("malformed exposition: parser panicked: %v", r)}
	}
}

// parseProto reads the length-delimited protobuf exposition format.
func parseProto(r io.Reader) (page Page, err error) {
	defer recoverParsePanic(&page, &err)
	dec := expfmt.NewDecoder(r, expfmt.NewFormat(expfmt.TypeProtoDelim))
	families := map[string]*dto.MetricFamily{}
	count, series := 0, 0
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return Page{}, oneLineError{fmt.Errorf("protobuf exposition: %w", err)}
		}
		count++
		if !read(mf.GetName()) {
			continue
		}
		if series += len(mf.GetMetric()); series > maxSeries {
			return Page{}, oneLineError{fmt.Errorf("more than %d workqueue and controller-runtime series on one page (the bound per scrape)", MaxSeries)}
		}
		if prev, ok := families[mf.GetName()]; ok {
			prev.Metric = append(prev.Metric, mf.GetMetric()...)
			continue
		}
		families[mf.GetName()] = mf
	}
	return Page{Queues: fromFamilies(families), Families: count}, nil
}

type queueKey struct{ controller, name string }

// accumulator gathers all series of one queue before quantiles are computed.
type accumulator struct {
	sample                 watch.QueueSample
	queue, work, reconcile histogramAcc
}

func fromFamilies(families map[string]*dto.MetricFamily) []watch.QueueSample {
	acc := map[queueKey]*accumulator{}
	get := func(m *dto.Metric) *accumulator {
		var k queueKey
		for _, lp := range m.GetLabel() {
			switch lp.GetName() {
			case LabelName:
				k.name = lp.GetValue()
			case LabelController:
				k.controller = lp.GetValue()
			}
		}
		a := acc[k]
		if a == nil {
			a = &accumulator{sample: watch.QueueSample{Name: k.name, Controller: k.controller}}
			acc[k] = a
		}
		return a
	}
	scalar := func(family string, add func(a *accumulator, v float64)) {
		for _, m := range families[family].GetMetric() {
			if v, ok := scalarValue(m); ok {
				add(get(m), v)
			}
		}
	}
	scalar(MetricDepth, func(a *accumulator, v float64) { a.sample.Depth += v })
	scalar(MetricAdds, func(a *accumulator, v float64) { a.sample.Adds += v })
	scalar(MetricRetries, func(a *accumulator, v float64) { a.sample.Retries += v })
	scalar(MetricUnfinishedWork, func(a *accumulator, v float64) { a.sample.UnfinishedSeconds += v })
	scalar(MetricLongestRunningProcessor, func(a *accumulator, v float64) {
		a.sample.LongestRunningSeconds = max(a.sample.LongestRunningSeconds, v)
	})
	histogram := func(family string, pick func(a *accumulator) *histogramAcc) {
		for _, m := range families[family].GetMetric() {
			if h := m.GetHistogram(); h != nil {
				pick(get(m)).add(h)
			}
		}
	}
	histogram(MetricQueueDuration, func(a *accumulator) *histogramAcc { return &a.queue })
	histogram(MetricWorkDuration, func(a *accumulator) *histogramAcc { return &a.work })
	addReconcileMetrics(families, acc)

	out := make([]watch.QueueSample, 0, len(acc))
	for _, a := range acc {
		s := a.sample
		s.QueueP50, s.QueueP99, s.HasQueueLatency = a.queue.quantiles()
		s.WorkP50, s.WorkP99, s.HasWorkLatency = a.work.quantiles()
		s.ReconcileP50, s.ReconcileP99, s.HasReconcileTime = a.reconcile.quantiles()
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y watch.QueueSample) int {
		return cmp.Or(strings.Compare(x.Controller, y.Controller), strings.Compare(x.Name, y.Name))
	})
	return out
}

// addReconcileMetrics attaches controller-runtime's per-controller reconcile metrics to the
// queue of that controller: the queue labelled controller=C (controller-runtime since v0.15),
// else the queue named C without a controller label (older releases), else a queue of its own
// named C (a page with reconcile metrics but no workqueue series for that controller yet).
func addReconcileMetrics(families map[string]*dto.MetricFamily, acc map[queueKey]*accumulator) {
	byController := map[string]*accumulator{}
	find := func(controller string) *accumulator {
		if a, ok := byController[controller]; ok {
			return a
		}
		var found *accumulator
		for k, a := range acc {
			// The queue named after its controller, else the first by name: deterministic.
			if k.controller == controller && (found == nil || k.name == controller ||
				(found.sample.Name != controller && k.name < found.sample.Name)) {
				found = a
			}
		}
		if found == nil {
			found = acc[queueKey{name: controller}]
		}
		if found == nil {
			found = &accumulator{sample: watch.QueueSample{Name: controller, Controller: controller}}
			acc[queueKey{controller: controller, name: controller}] = found
		}
		byController[controller] = found
		return found
	}
	label := func(m *dto.Metric, name string) string {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == name {
				return lp.GetValue()
			}
		}
		return ""
	}
	scalar := func(family string, add func(s *watch.QueueSample, m *dto.Metric, v float64)) {
		for _, m := range families[family].GetMetric() {
			c := label(m, LabelController)
			if c == "" {
				continue
			}
			if v, ok := scalarValue(m); ok {
				add(&find(c).sample, m, v)
			}
		}
	}
	scalar(MetricReconcileTotal, func(s *watch.QueueSample, m *dto.Metric, v float64) {
		s.HasReconciles = true
		switch label(m, LabelResult) {
		case "success":
			s.Reconciles.Success += v
		case "error":
			s.Reconciles.Error += v
		case "requeue":
			s.Reconciles.Requeue += v
		case "requeue_after":
			s.Reconciles.RequeueAfter += v
		}
	})
	scalar(MetricReconcileErrors, func(s *watch.QueueSample, _ *dto.Metric, v float64) {
		s.HasReconciles = true
		s.ReconcileErrors += v
	})
	scalar(MetricTerminalReconcileErrors, func(s *watch.QueueSample, _ *dto.Metric, v float64) { s.TerminalReconcileErrors += v })
	scalar(MetricReconcilePanics, func(s *watch.QueueSample, _ *dto.Metric, v float64) { s.ReconcilePanics += v })
	scalar(MetricActiveWorkers, func(s *watch.QueueSample, _ *dto.Metric, v float64) {
		s.HasWorkers = true
		s.ActiveWorkers += v
	})
	scalar(MetricMaxConcurrentReconciles, func(s *watch.QueueSample, _ *dto.Metric, v float64) {
		s.HasWorkers = true
		s.MaxConcurrentReconciles += v
	})
	for _, m := range families[MetricReconcileTime].GetMetric() {
		if c := label(m, LabelController); c != "" && m.GetHistogram() != nil {
			find(c).reconcile.add(m.GetHistogram())
		}
	}
}

// scalarValue returns the value of a gauge, counter or untyped series. The family's declared
// type is not enforced: an exporter that omits TYPE lines produces untyped series.
func scalarValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// histogramAcc sums classic histograms bucket by bucket.
type histogramAcc struct {
	buckets map[float64]float64 // finite upper bound -> cumulative count
	inf     float64             // the +Inf bucket, i.e. all observations
}

func (h *histogramAcc) add(hist *dto.Histogram) {
	if h.buckets == nil {
		h.buckets = map[float64]float64{}
	}
	// The text format spells out the +Inf bucket; protobuf leaves it implied by the count.
	inf := float64(hist.GetSampleCount())
	if hist.GetSampleCountFloat() > 0 {
		inf = hist.GetSampleCountFloat()
	}
	for _, b := range hist.GetBucket() {
		ub := b.GetUpperBound()
		c := float64(b.GetCumulativeCount())
		if b.GetCumulativeCountFloat() > 0 {
			c = b.GetCumulativeCountFloat()
		}
		switch {
		case math.IsNaN(ub):
		case math.IsInf(ub, +1):
			inf = c
		default:
			h.buckets[ub] += c
		}
	}
	h.inf += inf
}

// quantiles returns the 0.5 and 0.99 quantiles, and whether they are meaningful.
func (h *histogramAcc) quantiles() (p50, p99 float64, ok bool) {
	if len(h.buckets) == 0 {
		return 0, 0, false
	}
	bs := make([]bucket, 0, len(h.buckets)+1)
	for ub, c := range h.buckets {
		bs = append(bs, bucket{upperBound: ub, count: c})
	}
	slices.SortFunc(bs, func(x, y bucket) int { return cmp.Compare(x.upperBound, y.upperBound) })
	bs = append(bs, bucket{upperBound: math.Inf(+1), count: h.inf})
	p50, ok50 := bucketQuantile(0.5, bs)
	p99, ok99 := bucketQuantile(0.99, bs)
	if !ok50 || !ok99 {
		return 0, 0, false
	}
	return p50, p99, true
}

type bucket struct{ upperBound, count float64 }

// bucketQuantile estimates quantile q (0 <= q <= 1) from cumulative buckets sorted by strictly
// increasing upper bound, the last being +Inf. It follows PromQL's histogram_quantile for classic
// histograms: counts are forced monotonic; the quantile is interpolated linearly within its
// bucket, taking 0 as the lower edge of the first bucket if its upper bound is positive; if it
// falls into the +Inf bucket, the highest finite upper bound is returned. ok is false when there
// are no observations or the result is not finite.
func bucketQuantile(q float64, bs []bucket) (v float64, ok bool) {
	if len(bs) < 2 {
		return 0, false
	}
	for i := 1; i < len(bs); i++ {
		if bs[i].count < bs[i-1].count {
			bs[i].count = bs[i-1].count
		}
	}
	total := bs[len(bs)-1].count
	if !(total > 0) || math.IsInf(total, 0) {
		return 0, false
	}
	rank := q * total
	b := len(bs) - 1
	for i := range bs[:len(bs)-1] {
		if bs[i].count >= rank {
			b = i
			break
		}
	}
	switch {
	case b == len(bs)-1:
		v = bs[len(bs)-2].upperBound
	case b == 0 && bs[0].upperBound <= 0:
		v = bs[0].upperBound
	default:
		start, count := 0.0, bs[b].count
		if b > 0 {
			start = bs[b-1].upperBound
			count -= bs[b-1].count
			rank -= bs[b-1].count
		}
		v = start + (bs[b].upperBound-start)*(rank/count)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
