package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// Issue #50, item 5: deletes record no manager, so a Deleted line named nobody. With the
// controller's log, a delete made during a reconcile of the object's owner names that reconcile:
// the real widget-operator deletes a retired Widget's Deployment. A delete from outside
// (kubectl), which only wakes the idle operator, stays unnamed; the recording keeps the name for
// replay.
func TestControllerLogsNameTheDeleter(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.WidgetCRD()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logFile, recFile := filepath.Join(dir, "mgr.log"), filepath.Join(dir, "run.ndjson")
	p := c.RunPlugin(t, ctx, "watch", "deployments", "-n", ns, "-o", "json", "--controller-logs", logFile, "--record", recFile)
	p.AwaitJSON(t, await, is("Synced", ""))
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: ns, LogFile: logFile,
		Args: []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Stop() })
	for _, name := range []string{"calm", "shop"} {
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"size": int64(0)}}}
		if _, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p.AwaitSeen(t, await, "the Deployment of "+name, is("Added", name))
	}
	p.AwaitSeen(t, await, "a reconcile of calm", func(m map[string]any) bool {
		return m["type"] == "ControllerReconcile" && m["name"] == "calm"
	})

	// The operator deletes shop's Deployment in its reconcile of the Widget shop.
	if _, err := c.Kubectl(ctx, "annotate", "widget/shop", "-n", ns, testenv.OperatorRetiredAnnotation+"=true"); err != nil {
		t.Fatal(err)
	}
	del := p.AwaitSeen(t, await, "the Deleted line of shop's Deployment", is("Deleted", "shop"))
	r, _ := del["reconcile"].(map[string]any)
	if del["attribution"] != "delete" || r["controller"] != "widget" || r["kind"] != "widget" || r["name"] != "shop" || r["namespace"] != ns ||
		!strings.Contains(fmt.Sprint(del["managers"]), "widget") {
		t.Errorf("the operator's delete: attribution %v, reconcile %v, managers %v; want deleted by widget's reconcile of widget %s/shop",
			del["attribution"], del["reconcile"], del["managers"], ns)
	}
	// Its id, when the log tells which of widget's reconciles of shop it was (not when another ran
	// within the skew), is one of the ControllerReconcile lines of shop.
	if id, _ := r["reconcileID"].(string); id != "" {
		p.AwaitSeen(t, await, "the reconcile that deleted it", func(m map[string]any) bool {
			return m["type"] == "ControllerReconcile" && m["name"] == "shop" && m["reconcileID"] == id
		})
	}

	// kubectl deletes calm's Deployment: the reconcile it wakes recreates it, and did not delete it.
	if _, err := c.Kubectl(ctx, "delete", "deployment/calm", "-n", ns); err != nil {
		t.Fatal(err)
	}
	outside := p.AwaitSeen(t, await, "the Deleted line of calm's Deployment", is("Deleted", "calm"))
	p.AwaitSeen(t, await, "calm's Deployment made again", func(m map[string]any) bool {
		return m["type"] == "Added" && m["name"] == "calm" && m["resourceVersion"] != outside["resourceVersion"]
	})
	if outside["attribution"] != nil || outside["reconcile"] != nil {
		t.Errorf("kubectl's delete named %v %v: the reconcile it woke did not delete it", outside["attribution"], outside["reconcile"])
	}
	p.Stop(t)

	// Replay reads the name back from the recording, and says it in human output.
	h := runPlugin(t, c, append([]string{"replay", recFile, "--types", "Deleted"}, humanArgs...)...)
	want := fmt.Sprintf(" of widget %s/shop, from its log)", ns)
	if h.code != 0 || !strings.Contains(h.stdout, "deleted by widget (") || !strings.Contains(h.stdout, want) {
		t.Errorf("replay: exit %d, want %q in:\n%s%s", h.code, want, firstLines(h.stdout, 12), h.stderr)
	}
}
