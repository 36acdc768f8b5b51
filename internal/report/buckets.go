package report

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/printer"
	"github.com/kubectl-informer/kubectl-informer/pkg/recording"
	"github.com/kubectl-informer/kubectl-informer/pkg/replay"
)

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
	b.bars()
	b.laneBars()
	for _, q := range append(slices.Clone(r.SimQueues), r.Scraped...) {
		r.bucketDepth(q)
	}
	b.objectList()
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

// bars counts each resource's lines per bucket, once the buckets are known.
func (b *builder) bars() {
	r := b.r
	for _, res := range r.Resources {
		res.Bars = make([]map[string]int, r.Buckets)
	}
	for _, t := range b.ticks {
		countIn(r.Resources[t.res].Bars, r.bucketOf(t.at), t.series)
	}
	for _, res := range r.Resources {
		res.MaxRate = float64(busiest(res.Bars)) / r.Bucket.Seconds()
	}
}

// countIn counts one of key in bucket i of bars.
func countIn(bars []map[string]int, i int, key string) {
	if bars[i] == nil {
		bars[i] = map[string]int{}
	}
	bars[i][key]++
}

// busiest is the highest total of one bucket of bars.
func busiest(bars []map[string]int) int {
	most := 0
	for _, bar := range bars {
		total := 0
		for _, n := range bar {
			total += n
		}
		most = max(most, total)
	}
	return most
}

// objectList sorts the objects, most changed first, and keeps the histories of those the page
// shows: every object in a hot loop, then the busiest, up to HistoryObjects.
func (b *builder) objectList() {
	r := b.r
	for _, o := range b.objects {
		o.finish()
		r.Objects = append(r.Objects, o)
	}
	sort.Slice(r.Objects, func(i, j int) bool {
		a, c := r.Objects[i], r.Objects[j]
		if a.Changes != c.Changes {
			return a.Changes > c.Changes
		}
		if a.Events-a.Heartbeats != c.Events-c.Heartbeats {
			return a.Events-a.Heartbeats > c.Events-c.Heartbeats
		}
		return a.order < c.order
	})
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
