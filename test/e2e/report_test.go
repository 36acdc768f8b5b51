package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-informer/kubectl-informer/internal/report"
	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// chromium finds the browser make chromium installs (hack/need.sh). Missing, the test fails: `make e2e`
// installs it, and a report nobody opened in a browser is not tested.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: run make chromium (make e2e does) to install it")
	return ""
}

// artifactDir is where a test keeps what a person may want to look at afterwards:
// $E2E_ARTIFACTS/<test>, or the system temp dir's kubectl-informer-e2e/<test>.
func artifactDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("E2E_ARTIFACTS")
	if base == "" {
		base = filepath.Join(os.TempDir(), "kubectl-informer-e2e")
	}
	dir := filepath.Join(base, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The picture, end to end: a recording made on a real API server with the
// widget-operator in a status loop (a HotLoop and its end), its queue scraped (and one dead
// URL: a scrape failure), its own log followed (--controller-logs: its real reconciles), and an
// API server crash (watch closes, an expired resourceVersion, a relist with a tombstone) becomes
// a report; headless Chromium opens it from a file, and the page's timeline, markers, queues,
// the operator's lane of reconciles and the looping object's history show the recording's
// counts, hovering a marker or a lane's bar says what it is, dragging zooms, and no request
// leaves the page.
func TestReportInBrowser(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	browser := chromium(t)
	ctx := context.Background()
	c := testenv.StartT(t, testenv.Options{})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	dir := artifactDir(t)
	rec, mgrLog := filepath.Join(dir, "recording.ndjson"), filepath.Join(dir, "mgr.log")
	if err := os.Remove(mgrLog); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	// Its log in a file, every reconcile in it: the page's lane of its real reconciles.
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true, LogFile: mgrLog,
		Args: []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	createConfigMaps(t, c.Clientset, ns, "gone", "changed", "same")
	dead := "http://127.0.0.1:" + closedPort(t) + "/metrics"
	p := c.RunPlugin(t, ctx, "watch", "widgets,configmaps", "-n", ns, "-o", "json", "--record", rec,
		"--metrics-url", op.MetricsURL, "--metrics-url", dead, "--metrics-interval", "200ms", "--hot-loop-window", "2s",
		"--controller-logs", mgrLog)
	for range 2 {
		p.AwaitJSON(t, await, is("Synced", ""))
	}

	// The operator's status loop: found, then switched off and ended.
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop"})
	p.AwaitJSON(t, await, is("HotLoop", "loop"))
	if _, err := c.Kubectl(ctx, "annotate", "widget/loop", "-n", ns, testenv.OperatorBugAnnotation+"-"); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, is("HotLoopEnded", "loop"))

	// The API server crashes; meanwhile a second one deletes and changes configmaps: the
	// informers relist when it is back.
	c.Relist(t, ctx, testenv.RelistChanges{Namespace: ns, Delete: "gone", Update: "changed"})
	p.AwaitJSON(t, 3*await, func(m map[string]any) bool { return m["type"] == "Relist" && m["resource"] == "configmaps" })
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		return m["type"] == "Deleted" && m["name"] == "gone" && m["tombstone"] == true
	})
	// A scrape of the operator after the relist: the scraped queue spans the whole run. A
	// ControllerQueue line comes only when the figures change (the operator may have caught up
	// with the restart before the plugin relisted), so give the operator one more reconcile.
	if _, err := c.Kubectl(ctx, "annotate", "widget/loop", "-n", ns, "e2e/after-relist=1"); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "ControllerQueue" && m["name"] == "widget" })
	// The dead URL's failure, a marker the page must show: awaited, not assumed by now.
	p.AwaitSeen(t, await, "the dead metrics URL's scrape error", isScrapeError)
	p.Stop(t)

	page := filepath.Join(dir, "report.html")
	r := runPlugin(t, c, "report", rec, "-o", page)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("report: exit %d, stderr %q", r.code, r.stderr)
	}
	// From standard input (watch -o json | report -), the same page.
	piped := exec.Command("kubectl", "informer", "report", "-")
	piped.Env = c.Environ()
	piped.Stdin = bytes.NewReader(mustRead(t, rec))
	fromStdin, err := piped.Output()
	if err != nil {
		t.Fatalf("report -: %v", err)
	}
	fromFile := mustRead(t, page)
	// The page names its source; a replay command it suggests names FILE for standard input.
	samePage := bytes.ReplaceAll(fromFile, []byte("replay "+rec+" "), []byte("replay FILE "))
	if samePage = bytes.ReplaceAll(samePage, []byte(rec), []byte("standard input")); !bytes.Equal(fromStdin, samePage) {
		t.Errorf("report - (stdin) differs from report FILE (%d and %d bytes)", len(fromStdin), len(fromFile))
	}

	want := countRecording(t, rec)
	for _, m := range []string{"Relist", "HotLoop", "HotLoopEnded", "ScrapeError", "WatchClosed", "Synced"} {
		if want.Markers[m] == 0 {
			t.Fatalf("the recording has no %s line: %v", m, want.Markers)
		}
	}
	if len(want.Queues) == 0 {
		t.Fatal("the recording has no scraped queue")
	}
	if want.Lanes["widget"]["ok"] == 0 {
		t.Fatalf("the recording has no ok ControllerReconcile line of the widget controller: %v", want.Lanes)
	}
	t.Logf("recording %s: %v; markers %v; scraped %v; reconciles from the log %v", rec, want.Series, want.Markers, want.Queues, want.Lanes)

	// The browser: every request and every console error or exception is noted.
	actx, cancel := chromedp.NewExecAllocator(ctx, append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000))...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	bctx, cancel = context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var requests, problems []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *cdplog.EventEntryAdded:
			problems = append(problems, fmt.Sprintf("log %s %s: %s", e.Entry.Level, e.Entry.Source, e.Entry.Text))
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			problems = append(problems, fmt.Sprintf("console.%s", e.Type))
		}
	})
	fileURL := "file://" + page
	var got recordingCounts
	var title string
	if err := chromedp.Run(bctx,
		network.Enable(), cdplog.Enable(), runtime.Enable(),
		chromedp.Navigate(fileURL),
		chromedp.WaitVisible(`body[data-ready="true"]`, chromedp.ByQuery),
		chromedp.Title(&title),
		chromedp.Evaluate(pageCounts, &got),
	); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if !strings.Contains(title, "recording.ndjson") {
		t.Errorf("title %q", title)
	}
	if d := cmp.Diff(want.Series, got.Series); d != "" {
		t.Errorf("timeline bars (-recording +page):\n%s", d)
	}
	if d := cmp.Diff(want.Markers, got.Markers); d != "" {
		t.Errorf("markers (-recording +page):\n%s", d)
	}
	if got.Restarts != want.Restarts {
		t.Errorf("%d watch restarts marked, want %d", got.Restarts, want.Restarts)
	}
	if d := cmp.Diff(want.Queues, got.Queues); d != "" {
		t.Errorf("scraped queues (-recording +page):\n%s", d)
	}
	if d := cmp.Diff(want.Sim, got.Sim); d != "" {
		t.Errorf("simulated queues (-recording +page):\n%s", d)
	}
	if d := cmp.Diff(want.Lanes, got.Lanes); d != "" {
		t.Errorf("controllers' reconcile lanes (-recording +page):\n%s", d)
	}

	// The summary is the one the watch printed at exit; the header's flags are the run's.
	var summary, nsFlag string
	if err := chromedp.Run(bctx,
		chromedp.Text(`#summary pre`, &summary, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { for (const tr of document.querySelectorAll("#flags tr")) { if (tr.querySelector("th").textContent === "--namespace") return tr.querySelector("td").textContent } return "" })()`, &nsFlag),
	); err != nil {
		t.Fatalf("summary: %v", err)
	}
	for _, prefix := range []string{"events:", "informer:", "metrics:", "hot loops:"} {
		if live, page := summaryLine(p.Stderr(), prefix), summaryLine(summary, prefix); live == "" || live != page {
			t.Errorf("summary line %q: the watch printed %q, the page shows %q", prefix, live, page)
		}
	}
	if nsFlag != ns {
		t.Errorf("the page's --namespace flag is %q, want %q", nsFlag, ns)
	}

	// The looping widget's history, chosen as a person would: its row's history button.
	loopKey := "widgets.example.com " + ns + "/loop"
	var id string
	if err := chromedp.Run(bctx, chromedp.Evaluate(fmt.Sprintf(`(() => { for (const tr of document.querySelectorAll("#top tr[data-object]")) { if (tr.querySelector(".obj").textContent === %q) return tr.dataset.object } return "" })()`, ns+"/loop"), &id)); err != nil || id == "" {
		t.Fatalf("no row for %s/loop in the objects table (%v)", ns, err)
	}
	var hist struct {
		Key, Visible string
		Total        int
		Rows         []string
	}
	if err := chromedp.Run(bctx,
		chromedp.Click(`button.show[data-object="`+id+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#`+id, chromedp.ByID),
		chromedp.Evaluate(`(() => { const h = [...document.querySelectorAll(".history")].filter(h => !h.hidden); return {
			Visible: h.map(x => x.id).join(","), Key: h[0].dataset.resource + " " + h[0].dataset.key, Total: Number(h[0].dataset.total),
			Rows: [...h[0].querySelectorAll("tr.entry")].map(tr => tr.dataset.type + ":" + tr.dataset.rv) } })()`, &hist),
	); err != nil {
		t.Fatalf("history: %v", err)
	}
	wantRows := want.History[loopKey]
	if hist.Visible != id || hist.Key != loopKey || hist.Total != len(wantRows) {
		t.Errorf("shown history %q of %q with %d entries, want only %s of %q with %d", hist.Visible, hist.Key, hist.Total, id, loopKey, len(wantRows))
	}
	if len(wantRows) > report.HistoryHead+report.HistoryTail {
		wantRows = append(wantRows[:report.HistoryHead:report.HistoryHead], wantRows[len(wantRows)-report.HistoryTail:]...)
	}
	if d := cmp.Diff(wantRows, hist.Rows); d != "" {
		t.Errorf("history rows (-recording +page):\n%s", d)
	}

	// Hovering the relist marker says what it is.
	var at []float64
	var tip string
	if err := chromedp.Run(bctx,
		chromedp.Evaluate(`(() => { const m = document.querySelector('.row.timeline[data-resource="configmaps"] g.marker[data-type="Relist"] line.hit'); m.scrollIntoView({block: "center"}); const r = m.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2] })()`, &at),
	); err != nil {
		t.Fatalf("hover: %v", err)
	}
	if err := chromedp.Run(bctx,
		chromedp.MouseEvent("mouseMoved", at[0], at[1]),
		chromedp.WaitVisible(`#tip`, chromedp.ByID),
		chromedp.Text(`#tip`, &tip, chromedp.ByID),
	); err != nil {
		t.Fatalf("hover: %v", err)
	}
	if !strings.Contains(tip, "Relist: configmaps relist from resourceVersion") || !strings.Contains(tip, "1 deleted") {
		t.Errorf("hovering the relist marker says %q", tip)
	}
	// Hovering a bar of the operator's lane says how many of its reconciles, with what result.
	var laneTip string
	var bar struct {
		X, Y   float64
		Count  string
		Result string
	}
	if err := chromedp.Run(bctx,
		chromedp.Evaluate(`(() => { const b = document.querySelector('.row.lane[data-controller="widget"] rect.rc'); b.scrollIntoView({block: "center"}); const r = b.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2, Count: b.dataset.count, Result: b.dataset.result} })()`, &bar),
	); err != nil {
		t.Fatalf("hover a lane: %v", err)
	}
	if err := chromedp.Run(bctx,
		chromedp.MouseEvent("mouseMoved", bar.X, bar.Y),
		chromedp.WaitVisible(`#tip`, chromedp.ByID),
		chromedp.Text(`#tip`, &laneTip, chromedp.ByID),
	); err != nil {
		t.Fatalf("hover a lane: %v", err)
	}
	if !strings.Contains(laneTip, "widget: "+bar.Count+" reconcile") {
		t.Errorf("hovering a bar of %s %s reconciles of the widget lane says %q", bar.Count, bar.Result, laneTip)
	}

	// Dragging across the middle half of a chart zooms every chart to it.
	var box []float64
	var zoomed struct{ A, B, Span float64 }
	var viewBoxes []string
	if err := chromedp.Run(bctx,
		chromedp.Evaluate(`(() => { const c = document.querySelector(".row.timeline svg.chart"); c.scrollIntoView({block: "center"}); const r = c.getBoundingClientRect(); return [r.x, r.y, r.width, r.height] })()`, &box),
	); err != nil {
		t.Fatalf("zoom: %v", err)
	}
	if err := chromedp.Run(bctx,
		chromedp.MouseEvent("mousePressed", box[0]+box[2]/4, box[1]+box[3]/2, chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseMoved", box[0]+box[2]/2, box[1]+box[3]/2, chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseReleased", box[0]+3*box[2]/4, box[1]+box[3]/2, chromedp.ButtonLeft),
		chromedp.Evaluate(`(() => { const v = kubectlInformerReport.view(); return {A: v.a, B: v.b, Span: JSON.parse(document.getElementById("report-data").textContent).span} })()`, &zoomed),
		chromedp.Evaluate(`[...new Set([...document.querySelectorAll("svg.chart")].map(c => c.getAttribute("viewBox")))]`, &viewBoxes),
	); err != nil {
		t.Fatalf("zoom: %v", err)
	}
	if w := zoomed.B - zoomed.A; math.Abs(w-zoomed.Span/2) > zoomed.Span/50 || math.Abs(zoomed.A-zoomed.Span/4) > zoomed.Span/50 {
		t.Errorf("zoomed to %.2f..%.2f of %.2fs, want the middle half", zoomed.A, zoomed.B, zoomed.Span)
	}
	if len(viewBoxes) != 1 || !strings.HasPrefix(viewBoxes[0], fmt.Sprint(zoomed.A)+" ") {
		t.Errorf("charts' viewBoxes %q, want all at the zoomed range", viewBoxes)
	}

	// Back to the whole recording for the picture.
	var shot []byte
	if err := chromedp.Run(bctx,
		chromedp.DoubleClick(`.row.timeline svg.chart`, chromedp.ByQuery),
		chromedp.ScrollIntoView(`h1`, chromedp.ByQuery),
		chromedp.FullScreenshot(&shot, 100),
	); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	png := filepath.Join(dir, "report.png")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report %s, screenshot %s", page, png)

	mu.Lock()
	seen, logged := slices.Clone(requests), slices.Clone(problems)
	mu.Unlock()
	for _, u := range seen {
		if u != fileURL {
			t.Errorf("the page made a request: %s", u)
		}
	}
	if !slices.Contains(seen, fileURL) {
		t.Errorf("no request for the page itself was seen (%v): is the network listener working?", seen)
	}
	for _, p := range logged {
		t.Errorf("the page logged: %s", p)
	}

	// The listener does see a page's requests: a page that loads an image from a local server
	// is seen doing so (the server gets it too).
	hit := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case hit <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	probe := filepath.Join(dir, "probe.html")
	if err := os.WriteFile(probe, []byte(`<!DOCTYPE html><img src="`+srv.URL+`/probe.png">`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(bctx, chromedp.Navigate("file://"+probe)); err != nil {
		t.Fatalf("probe: %v", err)
	}
	select {
	case <-hit:
	case <-bctx.Done():
		t.Fatal("the probe page's request never reached its server")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(requests, srv.URL+"/probe.png") {
		t.Errorf("the listener did not see the probe page's request (saw %v): the report's check proves nothing", requests)
	}
}
