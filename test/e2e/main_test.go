// Package e2e runs the built plugin as `kubectl informer ...` against a real kube-apiserver and
// etcd (test/testenv) and asserts on what it prints.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// cluster is shared by the tests that do not need one of their own; each test works in its own
// namespace.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	// go test -list (hack/e2e-names.sh) only names the tests: no plugin build, no cluster.
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	pluginDir, err := testenv.BuildPluginOnce(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build plugin:", err)
		return 1
	}
	defer testenv.RemoveBuiltPlugin()
	c, err := testenv.Start(ctx, testenv.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{testenv.WidgetCRD()}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start cluster:", err)
		return 1
	}
	c.PluginDir = pluginDir
	cluster = c
	code := m.Run()
	if err := stopRealControlPlane(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop the real control plane:", err)
		if code == 0 {
			code = 1
		}
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop cluster:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

var nsCounter atomic.Int64

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T, c *testenv.Cluster) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%d-%d", time.Now().UnixNano()%100000, nsCounter.Add(1))
	_, err := c.Clientset.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// result is a finished plugin run.
type result struct {
	stdout, stderr string
	code           int
}

// runPlugin runs `kubectl informer args...` to completion with the cluster's environment
// (KUBECONFIG set) and no extra flags, so tests can pass broken ones.
func runPlugin(t *testing.T, c *testenv.Cluster, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"informer"}, args...)...)
	cmd.Env = c.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl informer %v: %v", args, err)
	}
	if strings.Contains(errb.String(), testenv.RaceReport) {
		t.Errorf("kubectl informer %v: the race detector found a data race:\n%s", args, errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

func jsonLine(b []byte, v any) error { return json.Unmarshal(b, v) }
