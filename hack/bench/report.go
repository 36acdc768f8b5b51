package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

type machine struct {
	CPUs       int
	CPUModel   string
	Memory     string
	Kernel     string
	Go         string
	Kubectl    string
	KubectlHow string
	APIServer  string
	Plugin     string
	LoadBefore string
	LoadAfter  string
}

func describeMachine(ctx context.Context, bins binaries) machine {
	m := machine{CPUs: runtime.NumCPU(), APIServer: "v1.37.1 (hack/testcluster), etcd 3.6, on 127.0.0.1"}
	m.CPUModel = firstField("/proc/cpuinfo", "model name")
	if kb := firstField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		if _, err := fmt.Sscanf(kb, "%d", &n); err == nil {
			m.Memory = fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(data))
	}
	if out, err := exec.CommandContext(ctx, goCmd(), "version").Output(); err == nil {
		m.Go = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	} else {
		m.Go = runtime.Version()
	}
	m.Plugin = "built from the working tree with -trimpath -ldflags \"-s -w\""
	if bins.pluginGiven {
		m.Plugin = bins.plugin + " (-plugin)"
	} else if out, err := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty").Output(); err == nil {
		m.Plugin = "git " + strings.TrimSpace(string(out)) + ", " + m.Plugin
	}
	if bins.kubectl != "" {
		m.Kubectl = kubectlVersion(ctx, bins.kubectl)
		m.KubectlHow = bins.kubectlNote
	}
	return m
}

// firstField is the value of the first "key : value" line of a /proc file.
func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

type report struct {
	c       config
	m       machine
	results []*result
	args    []string
	when    time.Time
}

func newReport(c config, m machine, results []*result, args []string) *report {
	return &report{c: c, m: m, results: results, args: args, when: time.Now().UTC()}
}

// ok are the successful runs of a tool.
func (r *report) ok(tool string) []*result {
	var out []*result
	for _, x := range r.results {
		if x.Tool == tool && x.Err == "" {
			out = append(out, x)
		}
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

type metric struct {
	name string
	get  func(*result) float64
	fmt  string
}

var (
	mSync    = metric{"initial sync (s)", func(x *result) float64 { return x.Sync.Seconds() }, "%.2f"}
	mSyncCPU = metric{"CPU to sync (s)", func(x *result) float64 { return x.SyncCPU.Seconds() }, "%.2f"}
	mUpdates = metric{"updates seen (s)", func(x *result) float64 { return x.Updates.Seconds() }, "%.2f"}
	mLag     = metric{"lag after last patch (ms)", func(x *result) float64 { return float64(x.Lag.Milliseconds()) }, "%.0f"}
	mUpdCPU  = metric{"CPU after sync (s)", func(x *result) float64 { return (x.CPU() - x.SyncCPU).Seconds() }, "%.2f"}
	mCPU     = metric{"CPU total (s)", func(x *result) float64 { return x.CPU().Seconds() }, "%.2f"}
	mUser    = metric{"user (s)", func(x *result) float64 { return x.User.Seconds() }, "%.2f"}
	mSys     = metric{"sys (s)", func(x *result) float64 { return x.Sys.Seconds() }, "%.2f"}
	mRSS     = metric{"peak RSS (MiB)", func(x *result) float64 { return float64(x.MaxRSS) / 1024 }, "%.0f"}
	mAnon    = metric{"peak anon (MiB)", func(x *result) float64 { return float64(x.MaxAnon) / 1024 }, "%.0f"}
	mFile    = metric{"peak file (MiB)", func(x *result) float64 { return float64(x.MaxFile) / 1024 }, "%.0f"}
	mOut     = metric{"stdout (MiB)", func(x *result) float64 { return float64(x.Bytes) / (1 << 20) }, "%.1f"}
	mLines   = metric{"stdout lines", func(x *result) float64 { return float64(x.Lines) }, "%.0f"}
	mAPI     = metric{"apiserver CPU (s)", func(x *result) float64 { return x.APICPU.Seconds() }, "%.2f"}
)

// values are a tool's figures of m over its successful rounds.
func (r *report) values(tool string, m metric) []float64 {
	var xs []float64
	for _, x := range r.ok(tool) {
		xs = append(xs, m.get(x))
	}
	return xs
}

func (r *report) med(tool string, m metric) (float64, bool) {
	xs := r.values(tool, m)
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

// pairedRatio is the median over rounds of a's value / b's value in the same round (a paired
// measurement, robust to the machine's load changing between rounds), with its range.
func (r *report) pairedRatio(a, b string, m metric) (med, lo, hi float64, ok bool) {
	var xs []float64
	for round := 1; round <= r.c.rounds; round++ {
		var va, vb *result
		for _, x := range r.results {
			if x.Round == round && x.Err == "" {
				switch x.Tool {
				case a:
					va = x
				case b:
					vb = x
				}
			}
		}
		if va == nil || vb == nil || m.get(vb) == 0 {
			continue
		}
		xs = append(xs, m.get(va)/m.get(vb))
	}
	if len(xs) == 0 {
		return 0, 0, 0, false
	}
	return median(xs), slices.Min(xs), slices.Max(xs), true
}

// bestRatio is a's best (lowest) value over its rounds / b's best: the ratio of best-of-rounds
// figures, as issue #37 states its targets.
func (r *report) bestRatio(a, b string, m metric) (float64, bool) {
	ba, oka := r.best(a, m)
	bb, okb := r.best(b, m)
	if !oka || !okb || bb == 0 {
		return 0, false
	}
	return ba / bb, true
}

// best is a tool's lowest value of m over its successful rounds.
func (r *report) best(tool string, m metric) (float64, bool) {
	xs := r.values(tool, m)
	if len(xs) == 0 {
		return 0, false
	}
	return slices.Min(xs), true
}

func (r *report) ratioCell(a, b string, m metric) string {
	med, lo, hi, ok := r.pairedRatio(a, b, m)
	if !ok {
		return "n/a"
	}
	if len(r.ok(a)) <= 1 || lo == hi {
		return fmt.Sprintf("%.2f×", med)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", med, lo, hi)
}

type target struct {
	what  string
	a, b  string
	m     metric
	limit float64
	// best: the target is read as the issue states it, from each tool's best round (its
	// lowest value over the rounds); the median of the per-round ratios is shown beside it.
	best bool
}

// targets are issue #16's (medians of the rounds' ratios) and the last four #37's (each tool's
// best round, as that issue states them). The memory targets and #37's are for the plugin with
// managers (always on) and --diff, so they are read from plugin+--diff when it ran, else from
// plugin.
var targets = []target{
	{"plugin initial sync ≤ 0.25× kubectl get -w", "plugin", "kubectl", mSync, 0.25, false},
	{"plugin initial sync ≤ 1.0× minimal informer", "plugin", "minimal", mSync, 1.0, false},
	{"plugin -o json initial sync ≤ 0.3× kubectl's JSON watch", "plugin-json", "kubectl-json", mSync, 0.3, false},
	{"plugin --diff peak RSS ≤ 0.5× kubectl get -w", "plugin+--diff", "kubectl", mRSS, 0.5, false},
	{"plugin --diff peak RSS ≤ 0.8× minimal informer", "plugin+--diff", "minimal", mRSS, 0.8, false},
	{"plugin --metadata-only initial sync ≤ 0.15× kubectl get -w", "plugin-meta", "kubectl", mSync, 0.15, false},
	{"plugin --diff initial sync ≤ 2.0× the wire (#37, best of rounds)", "plugin+--diff", "wire", mSync, 2.0, true},
	{"plugin --diff initial sync ≤ 0.35× minimal informer (#37, best of rounds)", "plugin+--diff", "minimal", mSync, 0.35, true},
	{"plugin -o json initial sync ≤ 0.4× kubectl's JSON watch (#37, best of rounds)", "plugin-json", "kubectl-json", mSync, 0.4, true},
	{"plugin --diff peak RSS ≤ 0.4× kubectl get -w (#37, best of rounds)", "plugin+--diff", "kubectl", mRSS, 0.4, true},
	{"plugin --otlp CPU after sync (live updates) ≤ 1.3× plugin (#51)", "plugin+--otlp", "plugin", mUpdCPU, 1.3, false},
}

func (r *report) markdown() string {
	if r.c.workload == workloadTop {
		return r.topMarkdown()
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("Generated by `go run ./hack/bench %s` on %s.\n\n", strings.Join(r.args, " "), r.when.Format("2006-01-02 15:04 MST"))

	r.writeMachine(w)

	w("### Workload\n\n")
	if r.c.workload == workloadPods {
		w("%d pods in one namespace, made by kube-controller-manager from one Deployment per kwok node of %d pods\n", r.c.objects, podsPerNode)
		w("(their ReplicaSets; the pods pinned to the node by the template's nodeName, no scheduler) and run by\n")
		w("kwok; %d of them patched (an annotation) once per run after the\n", r.c.updates)
	} else {
		w("%d ConfigMaps with %d bytes of data each in one namespace; %d of them patched once per run after the\n", r.c.objects, r.c.size, r.c.updates)
	}
	w("initial sync (%d at a time). %d rounds; each round runs every tool once, the order rotated by one\n", r.c.concurrency, r.c.rounds)
	w("tool per round. Stdout goes to a pipe the bench reads. Figures are medians over the rounds.\n\n")
	for _, name := range r.c.tools {
		w("- `%s`: `%s`\n", name, toolByName(name).label)
	}
	w("\n")
	w("- **initial sync**: from starting the process to the line of the last object of the initial list\n")
	w("- **updates seen**: from the first patch sent to the line of the last patched object; **lag**: from\n")
	w("  the last patch acknowledged by the server to that line\n")
	w("- **CPU**, **peak RSS**: the tool's rusage at exit (stopped with SIGINT right after the last update\n")
	w("  line); **CPU to sync**: its CPU when the initial sync was complete; **apiserver CPU**: what\n")
	w("  kube-apiserver spent during the run\n")
	if slices.Contains(r.c.tools, "wire") {
		w("- `wire` prints no line per object of the initial list: its sync is its one `Synced` line, with\n")
		w("  `items` equal to the objects; after it, one line per event, as the other tools\n")
	}
	w("\n")

	w("### Results (medians)\n\n")
	cols := []metric{mSync, mSyncCPU, mUpdates, mLag, mUpdCPU, mCPU, mUser, mSys, mRSS, mAnon, mFile, mOut, mLines, mAPI}
	w("| tool |")
	for _, m := range cols {
		w(" %s |", m.name)
	}
	w(" runs |\n|---|")
	for range cols {
		w("---:|")
	}
	w("---:|\n")
	for _, name := range r.c.tools {
		w("| %s |", name)
		for _, m := range cols {
			if v, ok := r.med(name, m); ok {
				w(" "+m.fmt+" |", v)
			} else {
				w(" – |")
			}
		}
		fails := 0
		for _, x := range r.results {
			if x.Tool == name && x.Err != "" {
				fails++
			}
		}
		if fails > 0 {
			w(" %d ok, %d failed |\n", len(r.ok(name)), fails)
		} else {
			w(" %d |\n", len(r.ok(name)))
		}
	}
	w("\n")

	w("### Ratios\n\n")
	w("Median of the per-round ratios (the range over the rounds in brackets).\n\n")
	rcols := []metric{mSync, mSyncCPU, mUpdCPU, mCPU, mRSS, mAnon}
	w("| |")
	for _, m := range rcols {
		w(" %s |", strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m.name, " (s)"), " (ms)"), " (MiB)"))
	}
	w("\n|---|")
	for range rcols {
		w("---:|")
	}
	w("\n")
	pairs := [][2]string{{"plugin", "minimal"}, {"plugin", "kubectl"}, {"plugin-json", "kubectl-json"}, {"plugin-json", "plugin"},
		{"plugin-meta", "minimal"}, {"plugin-meta", "kubectl"}, {"kubectl", "minimal"}}
	for _, name := range r.c.tools {
		if base, _, ok := strings.Cut(name, "+"); ok {
			pairs = append(pairs, [2]string{name, base})
		}
	}
	// Every tool against the wire limit (#37): how far each is from what the server sends.
	for _, name := range r.c.tools {
		if name != "wire" {
			pairs = append(pairs, [2]string{name, "wire"})
		}
	}
	for _, p := range r.c.compare {
		if !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	for _, p := range pairs {
		r.ratioRow(w, p, rcols)
	}
	w("\n")

	w("### Targets\n\n")
	w("```\n")
	for _, t := range targets {
		if t.a == "plugin+--diff" && !slices.Contains(r.c.tools, t.a) {
			t.a, t.what = "plugin", strings.Replace(t.what, "plugin --diff", "plugin (without --diff)", 1)
		}
		r.targetLine(w, t)
	}
	w("```\n\n")
	if slices.Contains(r.c.tools, "plugin-meta") {
		w("The same targets for `--metadata-only` (not the issue's targets; for comparison):\n\n```\n")
		for _, t := range targets {
			if t.a != "plugin" && t.a != "plugin+--diff" {
				continue
			}
			t.a = "plugin-meta"
			t.what = strings.Replace(strings.Replace(t.what, "plugin --diff", "plugin", 1), "plugin", "plugin --metadata-only", 1)
			r.targetLine(w, t)
		}
		w("```\n\n")
	}
	if n := r.droppedRuns(); n > 0 {
		w("In %d runs the plugin's human output dropped object lines because stdout fell behind (its\n", n)
		w("bounded, lossy outbox; see the note column below). A `Dropped N lines` line counts as those N lines.\n\n")
	}

	w("### Every run\n\n")
	w("| round | # | tool | sync (s) | CPU to sync (s) | updates (s) | lag (ms) | user (s) | sys (s) | peak RSS (MiB) | peak anon (MiB) | peak file (MiB) | apiserver CPU (s) | note |\n")
	w("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, x := range r.results {
		if x.Err != "" {
			w("| %d | %d | %s | | | | | | | | | failed: %s |\n", x.Round, x.Position, x.Tool, strings.ReplaceAll(x.Err, "|", "/"))
			continue
		}
		var notes []string
		if x.Dropped > 0 {
			notes = append(notes, fmt.Sprintf("%d lines dropped by the tool", x.Dropped))
		}
		if x.Stray > 0 {
			notes = append(notes, fmt.Sprintf("%d extra object lines after the sync", x.Stray))
		}
		if x.Waits > 0 {
			notes = append(notes, fmt.Sprintf("%d \"stdout is not keeping up\" notices", x.Waits))
		}
		if x.Informer != "" {
			notes = append(notes, x.Informer)
		}
		note := strings.Join(notes, "; ")
		w("| %d | %d | %s | %.2f | %.2f | %.2f | %d | %.2f | %.2f | %.0f | %.0f | %.0f | %.2f | %s |\n", x.Round, x.Position, x.Tool,
			x.Sync.Seconds(), x.SyncCPU.Seconds(), x.Updates.Seconds(), x.Lag.Milliseconds(), x.User.Seconds(), x.Sys.Seconds(),
			float64(x.MaxRSS)/1024, float64(x.MaxAnon)/1024, float64(x.MaxFile)/1024, x.APICPU.Seconds(), note)
	}
	return b.String()
}

// writeMachine writes the machine the bench ran on.
func (r *report) writeMachine(w func(string, ...any)) {
	w("### Machine\n\n")
	w("| | |\n|---|---|\n")
	w("| CPU | %d × %s |\n", r.m.CPUs, orDash(r.m.CPUModel))
	w("| memory | %s |\n", orDash(r.m.Memory))
	w("| kernel | %s |\n", orDash(r.m.Kernel))
	w("| Go | %s |\n", orDash(r.m.Go))
	w("| kubectl-informer | %s |\n", r.m.Plugin)
	if r.m.Kubectl != "" {
		w("| kubectl | %s; %s |\n", r.m.Kubectl, r.m.KubectlHow)
	}
	w("| server | kube-apiserver %s |\n", r.m.APIServer)
	w("| load average (1, 5, 15 min) | before: %s; after: %s |\n\n", r.m.LoadBefore, r.m.LoadAfter)
}

func (r *report) targetLine(w func(string, ...any), t target) {
	med, lo, hi, ok := r.pairedRatio(t.a, t.b, t.m)
	if t.best && ok {
		best, bok := r.bestRatio(t.a, t.b, t.m)
		verdict := "MISS"
		if bok && best <= t.limit {
			verdict = "pass"
		}
		w("%s  %s: %.2f× (median of the rounds' ratios %.2f×, rounds %.2f–%.2f)\n", verdict, t.what, best, med, lo, hi)
		return
	}
	switch {
	case !ok:
		w("n/a   %s: not measured\n", t.what)
	case med <= t.limit:
		w("pass  %s: %.2f× (rounds %.2f–%.2f)\n", t.what, med, lo, hi)
	default:
		w("MISS  %s: %.2f× (rounds %.2f–%.2f)\n", t.what, med, lo, hi)
	}
}

func (r *report) droppedRuns() int {
	n := 0
	for _, x := range r.results {
		if x.Dropped > 0 {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

const (
	beginMarker = "<!-- bench:begin (written by hack/bench -write; edit outside the markers) -->"
	endMarker   = "<!-- bench:end -->"
	// The pods workload (-workload pods) has its own block.
	podsBeginMarker = "<!-- bench-pods:begin (written by hack/bench -workload pods -write; edit outside the markers) -->"
	podsEndMarker   = "<!-- bench-pods:end -->"
	// The top workload (-workload top) too.
	topBeginMarker = "<!-- bench-top:begin (written by hack/bench -workload top -write; edit outside the markers) -->"
	topEndMarker   = "<!-- bench-top:end -->"
)

const defaultDoc = `# Bench results

` + "`make bench`" + ` (hack/bench) measures kubectl-informer against kubectl and a minimal client-go
informer on a local kube-apiserver. The section between the markers below is rewritten by every
` + "`make bench`" + `; the text around it is not. How to read it: performance.md.

`

// writeReport replaces the part of path between the markers with body (creating the file, or
// appending the markers, when they are missing).
func writeReport(path, workload, body string) error {
	begin, end := beginMarker, endMarker
	switch workload {
	case workloadPods:
		begin, end = podsBeginMarker, podsEndMarker
	case workloadTop:
		begin, end = topBeginMarker, topEndMarker
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc := string(old)
	if doc == "" {
		doc = defaultDoc
	}
	block := begin + "\n\n" + body + "\n" + end
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i >= 0 && j > i {
		doc = doc[:i] + block + doc[j+len(end):]
	} else {
		doc = strings.TrimRight(doc, "\n") + "\n\n" + block + "\n"
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}

// ratioRow writes one "| a / b | ratio | ..." row of a Ratios table, when both tools ran.
func (r *report) ratioRow(w func(string, ...any), p [2]string, cols []metric) {
	if !slices.Contains(r.c.tools, p[0]) || !slices.Contains(r.c.tools, p[1]) {
		return
	}
	w("| %s / %s |", p[0], p[1])
	for _, m := range cols {
		w(" %s |", r.ratioCell(p[0], p[1], m))
	}
	w("\n")
}
