package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// Issue #34, item 4: a Widget created with no fields of its own has no managedFields, and the
// operator's status writes add none (REAL-CLUSTER.md), so managedFields name nobody. With the
// operator's log, the plugin names it on each update that landed during one of its reconciles of
// that Widget (the reconcile's id is a ControllerReconcile line's), the hot loop names it as the
// writer of a self loop, and the recording keeps it for replay.
func TestControllerLogsNameTheWriter(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.WidgetCRD()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logFile, recFile := filepath.Join(dir, "mgr.log"), filepath.Join(dir, "run.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--controller-logs", logFile, "--record", recFile,
		"--hot-loop-window", "5s")
	p.AwaitJSON(t, await, is("Synced", ""))
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, LogFile: logFile,
		Args: []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })

	bare := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "bare", "namespace": ns}}}
	created, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Create(ctx, bare, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mf := created.GetManagedFields(); len(mf) != 0 {
		t.Fatalf("the server recorded managedFields for a Widget with no fields of its own (%v): the case this test is about does not arise", mf)
	}
	if _, err := c.Kubectl(ctx, "annotate", "widget/bare", "-n", ns, testenv.OperatorBugAnnotation+"=status-loop"); err != nil {
		t.Fatal(err)
	}
	byReconcile := func(m map[string]any) bool {
		r, _ := m["reconcile"].(map[string]any)
		return m["type"] == "Updated" && m["name"] == "bare" && m["attribution"] == "reconcile" && r["controller"] == "widget"
	}
	upd := p.AwaitSeen(t, await, "an update of bare named through widget's reconciles", byReconcile)
	if ms := fmt.Sprint(upd["managers"]); !strings.Contains(ms, "widget") {
		t.Errorf("managers %s, want the controller", ms)
	}
	loop := p.AwaitSeen(t, await, "a HotLoop of bare", is("HotLoop", "bare"))
	if loop["loop"] != "self" || !strings.Contains(fmt.Sprint(loop["managers"]), "widget") || !strings.Contains(fmt.Sprint(loop["suggestion"]), "widget") {
		t.Errorf("the hot loop: loop %v, managers %v, suggestion %v; want a self loop of widget (named through its reconciles)", loop["loop"], loop["managers"], loop["suggestion"])
	}
	// The bug off, the loop ends; then an outside write wakes the idle operator: the reconcile it
	// triggers did not write it, and nobody is named.
	if _, err := c.Kubectl(ctx, "annotate", "widget/bare", "-n", ns, testenv.OperatorBugAnnotation+"-"); err != nil {
		t.Fatal(err)
	}
	p.AwaitSeen(t, await, "the end of bare's hot loop", is("HotLoopEnded", "bare"))
	out, err := c.Kubectl(ctx, "annotate", "widget/bare", "-n", ns, "e2e.example.com/touched=1", "-o", "jsonpath={.metadata.resourceVersion}")
	if err != nil {
		t.Fatal(err)
	}
	touchRV := strings.TrimSpace(string(out))
	p.AwaitSeen(t, await, "the reconcile kubectl's write woke", func(m map[string]any) bool {
		return m["type"] == "ControllerReconcile" && m["name"] == "bare" && strings.Contains(fmt.Sprint(m["triggers"]), "resourceVersion:"+touchRV+" ")
	})
	touch := p.AwaitSeen(t, await, "kubectl's update", func(m map[string]any) bool {
		return m["type"] == "Updated" && m["name"] == "bare" && m["resourceVersion"] == touchRV
	})
	if touch["attribution"] != "unknown" {
		t.Errorf("kubectl's annotate of the idle Widget: attribution %v %v, want unknown (the reconcile it woke did not write it)", touch["attribution"], touch["reconcile"])
	}
	p.Stop(t)

	// Each update named through a reconcile: the status.lastReconciled it wrote (the operator's
	// clock, inside its reconcile) falls within that reconcile, as its ControllerReconcile line
	// (the log's start and duration) says.
	lines := testenv.ReadNDJSON(t, recFile)
	windows := map[any][2]time.Time{}
	for _, m := range lines {
		if m["type"] == "ControllerReconcile" && m["name"] == "bare" {
			start, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(m["time"]))
			d, _ := m["durationSeconds"].(float64)
			windows[m["reconcileID"]] = [2]time.Time{start, start.Add(time.Duration(d * float64(time.Second)))}
		}
	}
	named, stamped, loopNamed, withID := 0, 0, 0, 0
	prevStamp := ""
	for _, m := range lines {
		if !byReconcile(m) {
			if stamp, _, _ := unstructured.NestedString(objectOf(m).Object, "status", "lastReconciled"); m["type"] == "Updated" && m["name"] == "bare" && stamp != prevStamp {
				prevStamp, stamped = stamp, stamped+1
			}
			continue
		}
		named++
		stamp, _, _ := unstructured.NestedString(objectOf(m).Object, "status", "lastReconciled")
		if stamp == "" || stamp == prevStamp {
			continue // not a status write of the loop
		}
		prevStamp, stamped, loopNamed = stamp, stamped+1, loopNamed+1
		id, known := m["reconcile"].(map[string]any)["reconcileID"]
		if !known {
			continue // which of widget's reconciles is not said
		}
		withID++
		at, _ := time.Parse(time.RFC3339Nano, stamp)
		if w, ok := windows[id]; !ok || at.Before(w[0]) || at.After(w[1]) {
			t.Errorf("update rv %v (lastReconciled %s) named through reconcile %v, which ran %v", m["resourceVersion"], stamp, id, w)
		}
	}
	t.Logf("%d of the loop's %d status writes named widget's (%d with the reconcile's id)", loopNamed, stamped, withID)
	if loopNamed*2 < stamped {
		t.Errorf("only %d of the loop's %d status writes named through a reconcile", loopNamed, stamped)
	}
	// Replay reads the attribution back from the recording (the objects cannot give it again).
	r := runPlugin(t, c, "replay", recFile, "-o", "json", "--types", "Updated")
	replayed := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, `"attribution":"reconcile"`) && strings.Contains(l, `"name":"bare"`) {
			replayed++
		}
	}
	t.Logf("%d updates of bare named through widget's reconciles; %d replayed so", named, replayed)
	if r.code != 0 || replayed != named {
		t.Errorf("replay: exit %d, %d updates named through a reconcile, want the recording's %d\n%s", r.code, replayed, named, r.stderr)
	}
	h := runPlugin(t, c, append([]string{"replay", recFile, "--types", "Updated"}, humanArgs...)...)
	var shown []string
	for _, l := range strings.Split(h.stdout, "\n") {
		if strings.Contains(l, "from its log)") && len(shown) < 3 {
			shown = append(shown, l)
		}
	}
	t.Logf("replayed, human:\n%s", strings.Join(shown, "\n"))
	if !strings.Contains(h.stdout, "by widget (") || !strings.Contains(h.stdout, "from its log)") {
		t.Errorf("human replay lacks the attribution:\n%s", firstLines(h.stdout, 12))
	}
}
