package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// counterOf reads one controller's series of a counter from a plain-HTTP metrics page, summed
// over its other labels.
func counterOf(t *testing.T, url, metric, controller string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `\{controller="` + regexp.QuoteMeta(controller) + `"[^}]*\} (\S+)$`)
	total := 0
	for _, m := range re.FindAllStringSubmatch(string(getPage(t, url)), -1) {
		f, _ := strconv.ParseFloat(m[1], 64)
		total += int(f)
	}
	return total
}

// The widget-operator configured as operators ship (--shipped-logging: zap's production
// encoder with "message", "time" and upper-case levels, at info level, no V(5) lines), its
// reconciles logging what they change: every reconcile that logged a line (its own
// widget_operator_reconciles_logged_total) is a ControllerReconcile line, at least 90% of them
// and never more, each saying its bounds are its lines; and the exit summary states how many of
// the reconciles its controller_runtime_reconcile_total counts the log showed, and why.
func TestControllerLogsShippedOperator(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	logFile := filepath.Join(t.TempDir(), "mgr.log")
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true, LogFile: logFile, Args: []string{"--shipped-logging"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "--owned", "--owned-resources", "deployments", "-o", "json",
		"--controller-logs", logFile, "--metrics-url", op.MetricsURL, "--metrics-interval", "500ms")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop", Size: 1})
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fight", Bug: "fight", Size: 1})
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "plain", Size: 1})
	seenLoop := 0
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		if m["type"] == "ControllerReconcile" && m["name"] == "loop" {
			seenLoop++
		}
		return seenLoop >= 10
	})
	for _, name := range []string{"loop", "fight", "plain"} {
		if err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The operator's counters at rest: every reconcile, and those that logged a line.
	total, logged := 0, 0
	deadline := time.Now().Add(await)
	for stable := 0; stable < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the operator's counters never stopped moving (last %d, %d logged)", total, logged)
		}
		time.Sleep(time.Second)
		n := counterOf(t, op.MetricsURL, "controller_runtime_reconcile_total", "widget")
		l := counterOf(t, op.MetricsURL, "widget_operator_reconciles_logged_total", "widget")
		if n == total && l == logged {
			stable++
		} else {
			stable = 0
		}
		total, logged = n, l
	}
	if logged < 20 || logged >= total {
		t.Fatalf("%d reconciles counted, %d of them logged a line: want a loop that logs, and reconciles that log nothing", total, logged)
	}
	widgetLines := func() []map[string]any {
		var out []map[string]any
		for _, l := range p.All() {
			var m map[string]any
			if json.Unmarshal(l, &m) == nil && m["type"] == "ControllerReconcile" && m["controller"] == "widget" {
				out = append(out, m)
			}
		}
		return out
	}
	want := (logged*9 + 9) / 10
	lines := widgetLines()
	for deadline := time.Now().Add(await); len(lines) < want; lines = widgetLines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d ControllerReconcile lines within %s, want at least %d of the %d reconciles that logged a line", len(lines), await, want, logged)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	lines = widgetLines()
	if len(lines) > logged {
		t.Errorf("%d ControllerReconcile lines, more than the %d reconciles that logged a line", len(lines), logged)
	}
	// Each of the controller's ControllerQueue lines says how many of its reconciles the log
	// had shown by then.
	shows := 0
	for _, l := range p.All() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "ControllerQueue" && m["controller"] == "widget" && m["reconciles"] != nil {
			if _, ok := m["logShows"].(float64); !ok {
				t.Errorf("a ControllerQueue line without logShows: %s", l)
			}
			shows++
		}
	}
	if shows == 0 {
		t.Errorf("no ControllerQueue line of the widget controller")
	}
	results := map[string]int{}
	for _, m := range lines {
		results[m["result"].(string)]++
		if m["bounds"] != "lines" || m["format"] != "json" || m["namespace"] != ns || m["objectKind"] != "Widget" || m["reconcileID"] == "" || m["durationSeconds"] != nil {
			t.Fatalf("line %v: want a Widget's reconcile of %s rebuilt from its JSON lines (bounds lines, no duration)", m, ns)
		}
	}
	t.Logf("%d reconciles counted, %d logged a line; %d ControllerReconcile lines (%.1f%%), results %v", total, logged, len(lines), 100*float64(len(lines))/float64(logged), results)
	cov := regexp.MustCompile(`its log shows (\d+) of ([\d,]+) reconciles its metrics count since it started \(\d+%\): it logs at info`).FindStringSubmatch(p.Stderr())
	if cov == nil || cov[1] != strconv.Itoa(len(lines)) || cov[2] != thousandsOf(total) {
		t.Errorf("exit summary: want %q with %d of %d:\n%s", "its log shows N of M reconciles its metrics count ...: it logs at info", len(lines), total, p.Stderr())
	}
}

// thousandsOf writes n as the summary does: 1,955.
func thousandsOf(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
