package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// reconcileTotal sums controller_runtime_reconcile_total of controller over its results, read
// from a plain-HTTP metrics page.
func reconcileTotal(t *testing.T, url, controller string) (int, map[string]int) {
	t.Helper()
	b := getPage(t, url)
	re := regexp.MustCompile(`(?m)^controller_runtime_reconcile_total\{controller="` + regexp.QuoteMeta(controller) + `",result="([^"]+)"\} (\S+)$`)
	total, by := 0, map[string]int{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		f, _ := strconv.ParseFloat(m[2], 64)
		by[m[1]] = int(f)
		total += int(f)
	}
	return total, by
}

// getPage GETs a plain-HTTP page of a test's own controller on loopback.
func getPage(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // the test's own controller on loopback
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The widget-operator run locally with its log in a file (`make run > mgr.log` as its authors
// would), at --zap-log-level=5, its self-loop and its fight provoked, then its Widgets deleted:
// every reconcile its controller_runtime_reconcile_total counts is a ControllerReconcile line of
// `watch --controller-logs`, of the right object, with its result, and each names the watched
// events that triggered it or the reason it had none.
func TestControllerLogsWidgetOperator(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.WidgetCRD()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logFile, recFile := filepath.Join(dir, "mgr.log"), filepath.Join(dir, "run.ndjson")
	// The plugin first: it waits for the log to appear and reads it from its first line.
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "--owned", "--owned-resources", "deployments", "-o", "json",
		"--controller-logs", logFile, "--record", recFile, "--predicate", "generation")
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true, LogFile: logFile,
		Args: []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop", Size: 1})
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fight", Bug: "fight", Size: 1})
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "plain", Size: 1})
	// The loop and the fight run: await some of their reconciles, as lines.
	named := map[any]bool{}
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		if m["type"] == "ControllerReconcile" {
			named[m["name"]] = true
		}
		return named["loop"] && named["fight"] && named["plain"]
	})
	seenLoop := 0
	p.AwaitJSON(t, await, func(m map[string]any) bool {
		if m["type"] == "ControllerReconcile" && m["name"] == "loop" {
			seenLoop++
		}
		return seenLoop >= 10
	})
	// Quiet it down: the Widgets deleted, the operator's counter stops moving.
	for _, name := range []string{"loop", "fight", "plain"} {
		if err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	total, by := 0, map[string]int{}
	deadline := time.Now().Add(await)
	for stable := 0; stable < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("controller_runtime_reconcile_total of widget never stopped moving (last %d)", total)
		}
		time.Sleep(time.Second)
		n, b := reconcileTotal(t, op.MetricsURL, "widget")
		if n == total {
			stable++
		} else {
			stable = 0
		}
		total, by = n, b
	}
	if total < 20 {
		t.Fatalf("only %d reconciles counted (%v): the loop did not run", total, by)
	}
	// Every one of them becomes a line (the plugin holds each a little for late events).
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
	lines := widgetLines()
	for deadline := time.Now().Add(await); len(lines) < total; lines = widgetLines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d ControllerReconcile lines within %s, want %d (controller_runtime_reconcile_total %v)", len(lines), await, total, by)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(lines) != total {
		t.Fatalf("%d ControllerReconcile lines, want %d (controller_runtime_reconcile_total %v): never more than the log shows", len(lines), total, by)
	}
	results, reasons := map[string]int{}, map[string]int{}
	withTrigger := 0
	for _, m := range lines {
		results[fmt.Sprint(m["result"])]++
		if m["namespace"] != ns || m["kind"] != "Widget" || m["objectKind"] != "Widget" || m["reconcileID"] == "" {
			t.Fatalf("line %v: not of a Widget of %s", m, ns)
		}
		n, _ := m["triggerCount"].(float64)
		switch {
		case n > 0:
			withTrigger++
		default:
			reasons[fmt.Sprint(m["reason"])]++
		}
		switch {
		case n > 0:
		case m["reason"] == nil || m["reasonMessage"] == nil:
			t.Errorf("a reconcile with neither a trigger nor a reason: %v", m)
		}
	}
	if results["ok"] != by["success"] || results["error"] != by["error"] || results["requeueAfter"] != by["requeue_after"] || results["requeue"] != by["requeue"] {
		t.Errorf("results %v, the operator counted %v", results, by)
	}
	t.Logf("%d reconciles counted %v; %d lines, %d with a trigger, results %v, reasons %v", total, by, len(lines), withTrigger, results, reasons)

	// The recording keeps them: replay shows the same lines, and the summary counts them.
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	if want := fmt.Sprintf("controller widget (from its log): %d reconciles", total); !strings.Contains(p.Stderr(), want) {
		t.Errorf("exit summary lacks %q:\n%s", want, p.Stderr())
	}
	// The loop's reconciles triggered by its status writes alone: GenerationChangedPredicate
	// would have saved them, and the summary counts as many as the lines say.
	saved := 0
	for _, m := range lines {
		if n, _ := m["triggerCount"].(float64); n > 0 && m["filteredTriggers"] == n {
			saved++
		}
	}
	t.Logf("--predicate generation would have saved %d of %d", saved, len(lines))
	if want := fmt.Sprintf("--predicate generation would have saved %d of them", saved); saved == 0 || !strings.Contains(p.Stderr(), want) {
		t.Errorf("%d reconciles saved by the predicate; exit summary lacks %q:\n%s", saved, want, p.Stderr())
	}
	r := runPlugin(t, c, "replay", recFile, "-o", "json", "--types", "ControllerReconcile")
	replayed := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["type"] == "ControllerReconcile" && m["controller"] == "widget" {
			replayed++
		}
	}
	if r.code != 0 || replayed != len(lines) {
		t.Errorf("replay: exit %d, %d ControllerReconcile lines, want %d\n%s", r.code, replayed, len(lines), r.stderr)
	}
	h := runPlugin(t, c, append([]string{"replay", recFile, "--types", "ControllerReconcile"}, humanArgs...)...)
	t.Logf("replayed, human:\n%s", firstLines(h.stdout, 12))
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], "\n")
}

// kube-controller-manager at -v=4 (klog text) with its log in a file, as a client-go
// controller's reference: during a rollout, its deployment controller's syncs of the Deployment
// are ControllerReconcile lines, and one of them names the spec update that began the rollout
// as its trigger; other namespaces' syncs in the same log are not shown.
func TestControllerLogsKubeControllerManager(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	logs := t.TempDir()
	opts := testenv.RealControlPlane(1)
	opts.LogDir = logs
	opts.ControllerManagerArgs = []string{"-v=4"}
	c := testenv.StartT(t, opts)
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	ctx := context.Background()
	p := c.RunPlugin(t, ctx, "watch", "deployments", "-n", ns, "-o", "json",
		"--controller-logs", filepath.Join(logs, testenv.ControllerManager+".log"))
	p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Synced" })
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1"}}}}},
	}
	if _, err := c.Clientset.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	isSync := func(m map[string]any) bool {
		return m["type"] == "ControllerReconcile" && m["controller"] == "deployment" && m["name"] == "web"
	}
	p.AwaitJSON(t, await, isSync)
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"example.com/web:2"}]}}}}`)
	updated, err := c.Clientset.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "e2e-rollout"})
	if err != nil {
		t.Fatal(err)
	}
	rv := updated.ResourceVersion
	got := p.AwaitJSON(t, await, func(m map[string]any) bool {
		if !isSync(m) {
			return false
		}
		ts, _ := m["triggers"].([]any)
		for _, tr := range ts {
			if tr, _ := tr.(map[string]any); tr["resourceVersion"] == rv {
				return true
			}
		}
		return false
	})
	if got["format"] != "klog-text" || got["kind"] != "Deployment" || got["namespace"] != ns || got["durationSeconds"] == nil {
		t.Errorf("the rollout's sync: %v", got)
	}
	for _, l := range p.All() {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil && m["type"] == "ControllerReconcile" && m["namespace"] != ns && m["namespace"] != "" {
			t.Fatalf("a reconcile of another namespace: %s", l)
		}
	}
}
