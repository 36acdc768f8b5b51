// Command ctrllog-capture produces the real controller logs internal/ctrllog's tests read
// (internal/ctrllog/testdata): it starts the test control plane (hack/testcluster) with
// kube-controller-manager at -v=4, runs hack/widget-operator at --zap-log-level=5 beside it,
// makes a Widget in each of its bug modes and rolls a Deployment, and copies the logs out.
//
//	KUBEBUILDER_ASSETS=$(hack/testcluster/build.sh) go run ./hack/ctrllog-capture -mode json -out internal/ctrllog/testdata
//
// -mode json: the operator's JSON encoder (--zap-devel=false) and kube-controller-manager's
// text format; -mode console: the operator's console encoder (--zap-devel, the operator's
// default), its status writes forbidden (Reconciler error lines), and kube-controller-manager's
// JSON format (--logging-format=json); -mode shipped: the operator logging as operators ship
// (--shipped-logging: zap's production encoder with "message", "time", upper-case levels, info
// level), its log alone, and beside it (widget-operator-shipped.metrics) its counters at the
// end: controller_runtime_reconcile_total and widget_operator_reconciles_logged_total.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

func main() {
	mode := flag.String("mode", "json", "json, console or shipped (see the package comment)")
	out := flag.String("out", "internal/ctrllog/testdata", "where the logs go")
	run := flag.Duration("run", 20*time.Second, "how long the scenario runs")
	kcm := flag.String("kcm", "", "a kube-controller-manager binary to run instead of hack/testcluster's (-mode console: one built with k8s.io/component-base/logs/json/register, as upstream's is)")
	flag.Parse()
	if err := capture(*mode, *out, *run, *kcm); err != nil {
		fmt.Fprintln(os.Stderr, "ctrllog-capture:", err)
		os.Exit(1)
	}
}

func capture(mode, out string, run time.Duration, kcm string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	logs, err := os.MkdirTemp("", "ctrllog-capture")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logs)
	opts := testenv.RealControlPlane(1)
	opts.LogDir = logs
	if kcm != "" {
		if opts.AssetsDir, err = assetsWith(logs, kcm); err != nil {
			return err
		}
	}
	opts.ControllerManagerArgs = []string{"-v=4"}
	opArgs := []string{"--zap-log-level=5", "--zap-devel=false"}
	missing := false
	if mode == "console" {
		opts.ControllerManagerArgs = append(opts.ControllerManagerArgs, "--logging-format=json")
		opArgs = []string{"--zap-log-level=5", "--zap-devel=true"}
		missing = true
	}
	shipped := mode == "shipped"
	if shipped {
		opArgs = []string{"--shipped-logging"}
	}
	c, err := testenv.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	defer testenv.RemoveBuiltPlugin()
	op, err := c.StartOperator(ctx, testenv.OperatorOptions{Namespace: "default", Args: opArgs, MissingRBAC: missing, InsecureMetrics: shipped})
	if err != nil {
		return err
	}
	for _, w := range []struct{ name, bug string }{{"plain", ""}, {"loop", "status-loop"}, {"fight", "fight"}} {
		if err := createWidget(ctx, c, w.name, w.bug); err != nil {
			return err
		}
	}
	time.Sleep(run / 2)
	// A change of spec: a rollout of the plain Widget's Deployment (kube-controller-manager's
	// deployment and replicaset controllers sync it).
	patch := []byte(`{"spec":{"color":"red","size":2}}`)
	if _, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace("default").Patch(ctx, "plain", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	time.Sleep(run / 2)
	if shipped {
		if err := saveCounters(op.MetricsURL, filepath.Join(out, "widget-operator-shipped.metrics")); err != nil {
			return err
		}
	}
	_ = op.Stop()
	if err := c.Stop(); err != nil {
		return err
	}
	copies := map[string]string{testenv.OperatorName + ".log": "widget-operator-" + mode + ".log"}
	switch mode {
	case "shipped":
	case "console":
		copies[testenv.ControllerManager+".log"] = "kube-controller-manager-json.log"
	default:
		copies[testenv.ControllerManager+".log"] = "kube-controller-manager-text.log"
	}
	for from, to := range copies {
		b, err := os.ReadFile(filepath.Join(logs, from))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, to), b, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes\n", filepath.Join(out, to), len(b))
	}
	return nil
}

// saveCounters writes the operator's reconcile counters (the lines of its plain-HTTP /metrics
// that name them) to path.
func saveCounters(url, path string) error {
	resp, err := http.Get(url) //nolint:gosec,noctx // the capture's own operator on loopback
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var keep []byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("controller_runtime_reconcile_total{")) || bytes.HasPrefix(l, []byte("widget_operator_reconciles_logged_total{")) {
			keep = append(append(keep, l...), '\n')
		}
	}
	return os.WriteFile(path, keep, 0o644)
}

// assetsWith is a copy of $KUBEBUILDER_ASSETS (symbolic links) in dir/assets with kcm as its
// kube-controller-manager.
func assetsWith(dir, kcm string) (string, error) {
	src := os.Getenv("KUBEBUILDER_ASSETS")
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", fmt.Errorf("KUBEBUILDER_ASSETS: %w", err)
	}
	dst := filepath.Join(dir, "assets")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	for _, e := range entries {
		from := filepath.Join(src, e.Name())
		if e.Name() == testenv.ControllerManager {
			if from, err = filepath.Abs(kcm); err != nil {
				return "", err
			}
		}
		if err := os.Symlink(from, filepath.Join(dst, e.Name())); err != nil {
			return "", err
		}
	}
	return dst, nil
}

func createWidget(ctx context.Context, c *testenv.Cluster, name, bug string) error {
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"size": int64(1)},
	}}
	if bug != "" {
		w.SetAnnotations(map[string]string{testenv.OperatorBugAnnotation: bug})
	}
	_, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace("default").Create(ctx, w, metav1.CreateOptions{})
	return err
}
