package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestTopWant(t *testing.T) {
	want := topWant(45) // 45 = 2×20 + 5: the first five resources hold one more
	if want[topResourceName(0)] != 3 || want[topResourceName(4)] != 3 || want[topResourceName(5)] != 2 || want[topResourceName(19)] != 2 {
		t.Errorf("topWant(45) = %v", want)
	}
	sum := 0
	for _, n := range want {
		sum += n
	}
	if len(want) != topResources || sum != 45 {
		t.Errorf("topWant(45): %d resources, %d objects; want %d, 45", len(want), sum, topResources)
	}
	if got := strings.Count(topResourceArg(), ",") + 1; got != topResources || !strings.HasPrefix(topResourceArg(), "bench00s.bench.example.com,") {
		t.Errorf("topResourceArg() = %q", topResourceArg())
	}
}

// TestTopProgressRanking: top's first complete ranking is the TopResource line after which
// every resource has said all its objects; other resources, other line types, short counts
// and a ranking that lacks a resource do not complete it.
func TestTopProgressRanking(t *testing.T) {
	p := newTopProgress(progressRanking, map[string]int{"bench00s.bench.example.com": 2, "bench01s.bench.example.com": 1})
	for _, l := range []string{
		`{"type":"Top","time":"t1","rank":1,"resource":"bench00s.bench.example.com","namespace":"bench","name":"bench-000000","writes":2}`,
		`{"type":"TopWriter","time":"t1","rank":1,"manager":"bench-writer","writes":2,"objects":2}`,
		`{"type":"TopResource","time":"t1","rank":1,"resource":"bench00s.bench.example.com","writes":1,"objects":2}`,
		`{"type":"TopResource","time":"t1","rank":2,"resource":"leases.coordination.k8s.io","writes":0,"heartbeats":3,"objects":1}`,
		`{"type":"TopResource","time":"t2","rank":1,"resource":"bench00s.bench.example.com","writes":2,"objects":2}`,
		`{"type":"TopResource","time":"t2","rank":2,"resource":"bench01s.bench.example.com","writes":1,"objects":0}`,
		// watch's Synced lines are not top's
		`{"time":"t2","type":"Synced","group":"bench.example.com","version":"v1","resource":"bench01s","items":1}`,
	} {
		if p.line([]byte(l)) {
			t.Fatalf("complete after %s", l)
		}
	}
	if p.missing() != 1 {
		t.Errorf("missing = %d, want 1", p.missing())
	}
	if !p.line([]byte(`{"type":"TopResource","time":"t3","rank":2,"resource":"bench01s.bench.example.com","writes":2,"objects":1}` + "\n")) {
		t.Fatal("not complete when every resource said all its objects")
	}
	if len(p.over) != 0 {
		t.Errorf("over = %v", p.over)
	}
	// A count above the objects created is named, and is not complete.
	p.line([]byte(`{"type":"TopResource","resource":"bench01s.bench.example.com","objects":2}`))
	if p.complete() || len(p.over) != 1 {
		t.Errorf("complete %v, over %v; want false, [bench01s]", p.complete(), p.over)
	}
}

func TestTopProgressSynced(t *testing.T) {
	p := newTopProgress(progressSynced, map[string]int{"bench00s.bench.example.com": 2, "bench01s.bench.example.com": 1})
	for _, l := range []string{
		`{"time":"t","type":"Added","group":"bench.example.com","version":"v1","resource":"bench00s","namespace":"bench","name":"bench-000000","initialList":true}`,
		`{"time":"t","type":"Synced","group":"bench.example.com","version":"v1","resource":"bench00s","items":2}`,
		`{"type":"TopResource","resource":"bench01s.bench.example.com","objects":1}`, // top's, not watch's
		`{"time":"t","type":"Synced","group":"bench.example.com","version":"v1","resource":"bench01s","items":0}`,
	} {
		if p.line([]byte(l)) {
			t.Fatalf("complete after %s", l)
		}
	}
	if !p.line([]byte(`{"time":"t","type":"Synced","group":"bench.example.com","version":"v1","resource":"bench01s","items":1}`)) {
		t.Fatal("not complete after every resource's Synced line with its objects")
	}
	// A core resource has no group: its name is the plural alone.
	q := newTopProgress(progressSynced, map[string]int{"configmaps": 1})
	if !q.line([]byte(`{"type":"Synced","group":"","resource":"configmaps","items":1}`)) {
		t.Error("core resource's Synced line not counted")
	}
}

// TestTopRatios: the ratio rows are the median of the per-round ratios, with their range;
// failed runs and rounds missing a tool are left out.
func TestTopRatios(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	r := &report{c: config{rounds: 3, workload: workloadTop, tools: []string{"top", "floor"}}, results: []*result{
		{Tool: "top", Round: 1, Sync: s(6), MaxRSS: 300 << 10},
		{Tool: "floor", Round: 1, Sync: s(4), MaxRSS: 200 << 10},
		{Tool: "top", Round: 2, Sync: s(9), MaxRSS: 400 << 10},
		{Tool: "floor", Round: 2, Sync: s(3), MaxRSS: 200 << 10},
		{Tool: "top", Round: 3, Sync: s(5), MaxRSS: 250 << 10},
		{Tool: "floor", Round: 3, Err: "no complete ranking"},
	}}
	med, lo, hi, ok := r.pairedRatio("top", "floor", mFirst)
	if !ok || med != 2.25 || lo != 1.5 || hi != 3 {
		t.Errorf("time ratio = %v (%v–%v) %v; want 2.25 (1.5–3)", med, lo, hi, ok)
	}
	if med, _, _, _ := r.pairedRatio("top", "floor", mRSS); math.Abs(med-1.75) > 1e-9 {
		t.Errorf("RSS ratio = %v, want 1.75", med)
	}
	if got := r.ratioCell("top", "floor", mFirst); got != "2.25× (1.50–3.00)" {
		t.Errorf("ratioCell = %q", got)
	}
	md := r.topMarkdown()
	if !strings.Contains(md, "| top / floor | 2.25× (1.50–3.00) |") || strings.Contains(md, "top-named / floor") {
		t.Errorf("ratio rows:\n%s", md)
	}
}

func TestTopToolsValidate(t *testing.T) {
	ok := config{objects: 40, rounds: 1, concurrency: 1, workload: workloadTop, tools: topToolNames()}
	if err := validate(&ok); err != nil {
		t.Errorf("top workload: %v", err)
	}
	for _, c := range []config{
		{objects: 10, rounds: 1, concurrency: 1, workload: workloadTop, tools: []string{"top"}},                      // fewer objects than resources
		{objects: 40, rounds: 1, concurrency: 1, workload: workloadTop, tools: []string{"plugin"}},                   // not a top tool
		{objects: 40, updates: 4, rounds: 1, concurrency: 1, workload: workloadConfigMaps, tools: []string{"floor"}}, // a top tool elsewhere
	} {
		if err := validate(&c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
	for _, n := range toolNames() {
		if toolByName(n).progress != "" {
			t.Errorf("default tools include the top workload's %s", n)
		}
	}
}

// TestBestOfRoundsTarget: #37's targets are read from each tool's best round (a failed run left
// out), with the median of the per-round ratios beside it; the others stay medians.
func TestBestOfRoundsTarget(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	r := &report{c: config{rounds: 3, tools: []string{"plugin+--diff", "wire"}}, results: []*result{
		{Tool: "plugin+--diff", Round: 1, Sync: s(0.8)},
		{Tool: "wire", Round: 1, Sync: s(0.3)},
		{Tool: "plugin+--diff", Round: 2, Sync: s(0.5)},
		{Tool: "wire", Round: 2, Sync: s(0.2)},
		{Tool: "plugin+--diff", Round: 3, Sync: s(0.1), Err: "timed out"},
		{Tool: "wire", Round: 3, Sync: s(0.4)},
	}}
	if got, ok := r.bestRatio("plugin+--diff", "wire", mSync); !ok || math.Abs(got-2.5) > 1e-9 {
		t.Errorf("bestRatio = %v %v, want 2.5", got, ok)
	}
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	r.targetLine(w, target{"x ≤ 2.6×", "plugin+--diff", "wire", mSync, 2.6, true})
	r.targetLine(w, target{"x ≤ 2.4×", "plugin+--diff", "wire", mSync, 2.4, true})
	r.targetLine(w, target{"x ≤ 2.6× (median)", "plugin+--diff", "wire", mSync, 2.6, false})
	want := "pass  x ≤ 2.6×: 2.50× (median of the rounds' ratios 2.58×, rounds 2.50–2.67)\n" +
		"MISS  x ≤ 2.4×: 2.50× (median of the rounds' ratios 2.58×, rounds 2.50–2.67)\n" +
		"pass  x ≤ 2.6× (median): 2.58× (rounds 2.50–2.67)\n"
	if b.String() != want {
		t.Errorf("target lines:\n%s\nwant:\n%s", b.String(), want)
	}
}
