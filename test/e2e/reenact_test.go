package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// reenactLabel is the label a reenactment puts on what it creates (internal/reenact.Label).
const reenactLabel = "kubectl-informer.dev/reenactment"

// kubeContext is the name of the context of c's kubeconfig, for reenact's --context.
func kubeContext(t *testing.T, c *testenv.Cluster) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext == "" {
		t.Fatal("the test kubeconfig has no current context")
	}
	return cfg.CurrentContext
}

// recordStatusLoop records the widget-operator's self-triggering status loop in ns (the
// operator running there with its bug): a quiet Widget "calm" that is there before the
// recording starts, with the operator's status, and Widget "loop" created during it with the
// bug's annotation, until the recording holds the HotLoop. It returns the recording and its
// HotLoop line. With opLog, the operator logs every reconcile there and the recording holds
// them (ControllerReconcile lines, --controller-logs).
func recordStatusLoop(t *testing.T, c *testenv.Cluster, ns, opLog string) (string, map[string]any) {
	t.Helper()
	ctx := context.Background()
	opts := testenv.OperatorOptions{Namespace: ns}
	var logArgs []string
	if opLog != "" {
		opts.LogFile, opts.Args = opLog, reconcileLogArgs
		logArgs = []string{"--controller-logs", opLog}
	}
	op, err := c.StartOperator(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "calm"})
	awaitWidget(t, c, ns, "calm", "its status by widget-operator", func(w *unstructured.Unstructured) bool {
		ph, _, _ := unstructured.NestedString(w.Object, "status", "phase")
		return ph != ""
	})
	rec := filepath.Join(t.TempDir(), "incident.ndjson")
	p := c.RunPlugin(t, ctx, append([]string{"watch", "widgets", "-n", ns, "-o", "json", "--record", rec, "--hot-loop-window", "3s"}, logArgs...)...)
	p.AwaitJSON(t, await, is("Synced", ""))
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "loop", Bug: "status-loop"})
	hot := p.AwaitJSON(t, await, is("HotLoop", "loop"))
	if opLog != "" {
		// The recording is to hold the loop's reconciles from the log, not only its updates.
		p.AwaitSeen(t, await, "a ControllerReconcile of loop", is("ControllerReconcile", "loop"))
	}
	p.Stop(t)
	return rec, hot
}

// reconcileLogArgs make a controller-runtime manager log every reconcile as JSON lines.
var reconcileLogArgs = []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}

// awaitWidget waits until Widget ns/name satisfies cond.
func awaitWidget(t *testing.T, c *testenv.Cluster, ns, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var last *unstructured.Unstructured
	testenv.Eventually(t, await, fmt.Sprintf("Widget %s/%s with %s", ns, name, what), func() (bool, error) {
		w, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not there yet
		}
		last = w
		return cond(w), nil
	})
	return last
}

func managersOf(o *unstructured.Unstructured) []string {
	var out []string
	for _, e := range o.GetManagedFields() {
		out = append(out, e.Manager+"/"+e.Subresource)
	}
	return out
}

// The scenario: the widget-operator's status loop, recorded, then reenacted with
// --skip-manager widget-operator while the operator runs against the reenactment: with its bug,
// the HotLoop comes back, named the same way; with the fixed build, no HotLoop, and --compare
// says the loop is gone and how many writes were saved.
func TestReenactStatusLoop(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	kctx := kubeContext(t, c)
	ns := newNamespace(t, c)
	rec, orig := recordStatusLoop(t, c, ns, "")

	t.Run("bug on", func(t *testing.T) {
		nsA := ns + "-a"
		op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: nsA})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = op.Stop() })
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--namespace-map", ns+"="+nsA, "--name", "bug-on",
			"--skip-manager", testenv.OperatorName, "-o", "json", "--hot-loop-window", "3s", "--follow", "--print-rv-map")
		hot := p.AwaitJSON(t, await, func(m map[string]any) bool { return is("HotLoop", "loop")(m) && m["namespace"] == nsA })
		for _, f := range []string{"loop", "reason", "fields", "managers"} {
			if fmt.Sprint(hot[f]) != fmt.Sprint(orig[f]) {
				t.Errorf("reenacted HotLoop %s = %v, the recorded one's %v", f, hot[f], orig[f])
			}
		}
		// The reenacted Widgets name the recorded writers, the operator under test its own.
		loop := awaitWidget(t, c, nsA, "loop", "the operator's status", func(w *unstructured.Unstructured) bool {
			return slices.Contains(managersOf(w), testenv.OperatorName+"/status")
		})
		if loop.GetLabels()[reenactLabel] != "bug-on" {
			t.Errorf("reenacted Widget labels %v, want %s=bug-on", loop.GetLabels(), reenactLabel)
		}
		creator := recordedCreator(t, rec, "loop")
		if !slices.Contains(managersOf(loop), creator+"/") {
			t.Errorf("reenacted Widget's managers %v do not name the recorded creator %s", managersOf(loop), creator)
		}
		p.AwaitStderr(t, await, "reenact: played 1 initial objects, 1 creates", func(e string) bool { return strings.Contains(e, "reenact: played 1 initial objects, 1 creates") })
		p.Stop(t)
		t.Logf("reenact with the bug on, stderr:\n%s", p.Stderr())
		// The recorded resourceVersions of the two creates, each with the target's own.
		for _, name := range []string{"calm", "loop"} {
			re := regexp.MustCompile(`reenact: resourceVersion (\d+) -> (\d+) \(widgets ` + nsA + `/` + name + `\)`)
			m := re.FindStringSubmatch(p.Stderr())
			if m == nil || m[1] != recordedRV(t, rec, name) {
				t.Errorf("--print-rv-map of %s: %v, want its recorded resourceVersion %s", name, m, recordedRV(t, rec, name))
			}
		}
		// calm's status and every status write of the loop were the operator's: none played.
		if !regexp.MustCompile(`skipped \d+ by widget-operator \(--skip-manager\)`).MatchString(p.Stderr()) {
			t.Errorf("stderr does not say what was skipped:\n%s", p.Stderr())
		}
	})

	t.Run("fixed", func(t *testing.T) {
		nsB := ns + "-b"
		op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: nsB, Fixed: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = op.Stop() })
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--namespace-map", ns+"="+nsB,
			"--skip-manager", testenv.OperatorName, "-o", "json", "--hot-loop-window", "3s", "--follow", "--compare", rec)
		// The fixed operator did reconcile the loop Widget (its status is the operator's)...
		// (an Added line when that was before the watch listed it, an Updated line after).
		p.AwaitSeen(t, await, "the loop Widget's status by the fixed operator", func(m map[string]any) bool {
			return (m["type"] == "Updated" || m["type"] == "Added") && m["name"] == "loop" && slices.Contains(managersOf(objectOf(m)), testenv.OperatorName+"/status")
		})
		p.AwaitStderr(t, await, "reenact: played 1 initial objects, 1 creates", func(e string) bool { return strings.Contains(e, "reenact: played 1 initial objects, 1 creates") })
		// ...and for two hot-loop windows after it, did not write it again and again.
		time.Sleep(6 * time.Second)
		p.Stop(t)
		for _, l := range p.All() {
			if strings.Contains(string(l), `"type":"HotLoop"`) {
				t.Errorf("a HotLoop with the fixed operator: %s", l)
			}
		}
		stderr := p.Stderr()
		t.Logf("reenact with the fixed operator, stderr:\n%s", stderr)
		if !strings.Contains(stderr, "hot loop gone: widgets.example.com "+nsB+"/loop (self by widget-operator: status.lastReconciled) is in the original, not in the reenactment") {
			t.Errorf("--compare does not say the loop is gone:\n%s", stderr)
		}
		m := regexp.MustCompile(`writes saved: widget-operator made (\d+) updates in the original, (\d+) in the reenactment \((\d+) fewer\)`).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("--compare does not say the writes saved:\n%s", stderr)
		}
		o, _ := strconv.Atoi(m[1])
		r, _ := strconv.Atoi(m[2])
		t.Logf("widget-operator: %d updates recorded, %d reenacted with the fix", o, r)
		if o < 5 || r >= o {
			t.Errorf("the original's %d operator updates, the reenactment's %d: want the loop's many and far fewer", o, r)
		}
	})
}

// recordedRV is the resourceVersion of the recorded Widget name's first Added line.
func recordedRV(t *testing.T, rec, name string) string {
	t.Helper()
	for _, m := range testenv.ReadNDJSON(t, rec) {
		if m["type"] == "Added" && m["name"] == name {
			rv, _ := m["resourceVersion"].(string)
			return rv
		}
	}
	t.Fatalf("the recording has no Added line of %s", name)
	return ""
}

// recordedCreator is the field manager of the recorded Widget name's first managedFields entry.
func recordedCreator(t *testing.T, rec, name string) string {
	t.Helper()
	for _, m := range testenv.ReadNDJSON(t, rec) {
		if m["type"] == "Added" && m["name"] == name {
			if mf := objectOf(m).GetManagedFields(); len(mf) > 0 {
				return mf[0].Manager
			}
		}
	}
	t.Fatalf("the recording has no Added line of %s with managedFields", name)
	return ""
}

// The operator's fight with kube-controller-manager over its ReplicaSet's replicas, recorded,
// then reenacted without either fighter's writes while both run against the reenactment (the
// operator with its bug, the deployment controller as always): the fight comes back, on the
// ReplicaSet of the same name, between the same managers.
func TestReenactFight(t *testing.T) {
	c := realControlPlane(t)
	ctx := context.Background()
	kctx := kubeContext(t, c)
	ns := newNamespace(t, c)
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "fight.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets,replicasets", "-n", ns, "-o", "json", "--record", rec)
	p.AwaitJSON(t, await, is("Synced", ""))
	c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: "fought", Bug: "fight", Size: 1})
	orig := p.AwaitSeen(t, 2*await, "the recorded fight", func(m map[string]any) bool {
		return m["type"] == "HotLoop" && m["resource"] == "replicasets"
	})
	p.Stop(t)
	_ = op.Stop()

	nsF := ns + "-f"
	op2, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: nsF})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op2.Stop() })
	r := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--namespace-map", ns+"="+nsF,
		"--skip-manager", testenv.OperatorName, "--skip-manager", "kube-controller-manager", "-o", "json", "--follow")
	hot := r.AwaitSeen(t, 2*await, "the reenacted fight", func(m map[string]any) bool {
		return m["type"] == "HotLoop" && m["resource"] == "replicasets" && m["namespace"] == nsF
	})
	for _, f := range []string{"name", "loop", "reason"} {
		if fmt.Sprint(hot[f]) != fmt.Sprint(orig[f]) {
			t.Errorf("reenacted fight %s = %v, the recorded one's %v", f, hot[f], orig[f])
		}
	}
	// The field fought over; which status fields flip with it depends on the fight's pace
	// (seen: status.replicas and status.observedGeneration in one run and not the next).
	for _, h := range []map[string]any{orig, hot} {
		if !strings.Contains(fmt.Sprint(h["fields"]), "spec.replicas") {
			t.Errorf("fight fields %v, want spec.replicas", h["fields"])
		}
	}
	if ms := fmt.Sprint(hot["managers"]); !strings.Contains(ms, "kube-controller-manager") || !strings.Contains(ms, testenv.OperatorName) {
		t.Errorf("reenacted fight managers %s, want kube-controller-manager and %s", ms, testenv.OperatorName)
	}
	r.Stop(t)
	t.Logf("reenact of the fight, stderr:\n%s", r.Stderr())
}
