package report

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// largeRecording is n updates of objects ConfigMaps by two managers, spread over span, each
// with its queue figures: a busy hour of a cluster.
func largeRecording(n, objects int, span time.Duration) []byte {
	r := newRec()
	r.b.Grow(n * 900)
	step := span / time.Duration(n)
	rvs := make([]int, objects)
	for i := range objects {
		rvs[i] = i + 1
		r.line(0, "Added", cm("demo", fmt.Sprintf("cm-%d", i), fmt.Sprint(i+1), "m0", "2026-11-21T05:00:00Z", "0")+`,"delta":"Replaced","initialList":true,"queue":{"depth":1,"adds":1,"retries":0}`)
	}
	for i := range n {
		o := i % objects
		old := rvs[o]
		rvs[o] = objects + i + 1
		at := time.Duration(i) * step
		ts := r.t0.Add(at).Format(time.RFC3339)
		line := cm("demo", fmt.Sprintf("cm-%d", o), fmt.Sprint(rvs[o]), fmt.Sprintf("m%d", i%2), ts, fmt.Sprint(i)) +
			fmt.Sprintf(`,"oldResourceVersion":"%d","delta":"Updated","queue":{"depth":%d,"adds":%d,"retries":0}`, old, i%50, i)
		r.line(int(at/time.Millisecond), "Updated", line)
	}
	return []byte(r.b.String())
}

// BenchmarkLargeRecording reads and renders 100,000 updates of 2,000 objects over an hour:
// `go test ./internal/report -run '^$' -bench Large -benchtime 1x`. It reports the recording's
// and the page's sizes.
func BenchmarkLargeRecording(b *testing.B) {
	data := largeRecording(100_000, 2_000, time.Hour)
	if dir := os.Getenv("REPORT_BENCH_WRITE"); dir != "" {
		_ = os.WriteFile(dir+"/large.ndjson", data, 0o600)
	}
	b.ResetTimer()
	var page bytes.Buffer
	for range b.N {
		r, err := Read(bytes.NewReader(data), "large.ndjson")
		if err != nil {
			b.Fatal(err)
		}
		page.Reset()
		if err := r.WriteHTML(&page); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data))/1e6, "recording-MB")
	b.ReportMetric(float64(page.Len())/1e6, "page-MB")
}

// The large recording's page keeps its limits: MaxBuckets per chart, TopObjects rows,
// HistoryObjects histories of at most HistoryHead+HistoryTail entries.
func TestLargeRecordingStaysLight(t *testing.T) {
	r, html := readPage(t, largeRecording(20_000, 500, time.Hour), "large")
	if r.Buckets > MaxBuckets {
		t.Errorf("%d buckets", r.Buckets)
	}
	if n := strings.Count(html, `<tr data-object=`); n != TopObjects {
		t.Errorf("%d rows in the objects table, want %d", n, TopObjects)
	}
	if n := strings.Count(html, `<div class="history"`); n != HistoryObjects {
		t.Errorf("%d histories, want %d", n, HistoryObjects)
	}
	if n := strings.Count(html, `<tr class="entry`); n > HistoryObjects*(HistoryHead+HistoryTail) {
		t.Errorf("%d history rows", n)
	}
	if n := strings.Count(html, `<rect class="bar`); n > MaxBuckets*len(Series) {
		t.Errorf("%d bars", n)
	}
}
