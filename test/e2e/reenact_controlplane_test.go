package e2e

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

var (
	kubeconfigLine = regexp.MustCompile(`(?m)^    export KUBECONFIG=(\S+)$`)
	stoppingLine   = regexp.MustCompile(`(?m)^reenact: stopping the control plane \(pids ([\d ]+)\)$`)
)

// reenact --control-plane starts its own etcd and kube-apiserver, prints their kubeconfig, and
// plays the recording there: the widget-operator under test, started with that kubeconfig,
// brings its status loop back. When reenact ends it has stopped every process it started and
// removed its directory.
func TestReenactControlPlane(t *testing.T) {
	t.Parallel() // its own namespace of a shared cluster (docs/testcluster.md, "Parallel tests")
	c := cluster
	ctx := context.Background()
	ns := newNamespace(t, c)
	logs := t.TempDir()
	rec, orig := recordStatusLoop(t, c, ns, filepath.Join(logs, "recorded.log"))
	target := ns + "-cp"
	opLog := filepath.Join(logs, "under-test.log")
	if err := os.WriteFile(opLog, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	p := c.RunPlugin(t, ctx, "reenact", rec, "--control-plane", "--create-crds", "--namespace-map", ns+"="+target,
		"--skip-manager", testenv.OperatorName, "-o", "json", "--hot-loop-window", "3s", "--follow",
		"--controller-logs", opLog, "--compare", rec)
	p.AwaitStderr(t, await, "the control plane's kubeconfig", kubeconfigLine.MatchString)
	kc := kubeconfigLine.FindStringSubmatch(p.Stderr())[1]
	// Should the test fail, the plugin is killed and cannot stop them: the test does.
	for _, m := range regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(p.Stderr(), -1) {
		pid, _ := strconv.Atoi(m[1])
		t.Cleanup(func() {
			if t.Failed() {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		})
	}
	server := serverOf(t, kc)
	// The CRD and the namespace exist once it says it plays.
	p.AwaitStderr(t, await, "the reenactment playing", func(e string) bool { return strings.Contains(e, "playing 1 initial objects") })

	op := startOperatorOn(t, kc, target, opLog)
	hot := p.AwaitJSON(t, await, func(m map[string]any) bool { return is("HotLoop", "loop")(m) && m["namespace"] == target })
	if hot["reason"] != orig["reason"] {
		t.Errorf("reenacted HotLoop reason %v, the recorded one's %v", hot["reason"], orig["reason"])
	}
	// The objects are in the control plane the kubeconfig names, labelled by the reenactment.
	dyn := clientFor(t, kc)
	list, err := dyn.Resource(testenv.WidgetGVR).Namespace(target).List(ctx, metav1.ListOptions{LabelSelector: reenactLabel})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("reenacted Widgets in %s: %v, %v; want calm and loop", target, list, err)
	}
	_ = op.Process.Signal(syscall.SIGTERM)

	// Both runs' reconciles of loop, from the operator's logs: --compare counts them.
	p.AwaitJSON(t, await, func(m map[string]any) bool { return is("ControllerReconcile", "loop")(m) && m["namespace"] == target })
	stderr := p.Stop(t)
	t.Logf("reenact --control-plane, stderr:\n%s", stderr)
	if !regexp.MustCompile(`(?m)^  reconciles per object \(controller's log\) +original reenacted\n(.*\n)*  ` + target + `/loop +[1-9]\d* +[1-9]\d*$`).MatchString(stderr) {
		t.Errorf("--compare does not count loop's reconciles in both runs:\n%s", stderr)
	}
	m := stoppingLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not say it stops the control plane:\n%s", stderr)
	}
	pids := strings.Fields(m[1])
	if len(pids) != 2 {
		t.Errorf("pids %v, want etcd's and kube-apiserver's", pids)
	}
	for _, s := range pids {
		pid, _ := strconv.Atoi(s)
		// Reaped by the plugin before it exited: no such process.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d after reenact ended: kill -0: %v, want ESRCH", pid, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(kc))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the control plane's directory after reenact ended: %v, want it removed", err)
	}
	assertNotListening(t, server)
}

// startOperatorOn runs the widget-operator's bug-on build in namespace ns of the cluster of
// kubeconfig, logging every reconcile to logFile, stopped by its pid when the test ends.
func startOperatorOn(t *testing.T, kubeconfig, ns, logFile string) *exec.Cmd {
	t.Helper()
	bin, err := testenv.BuildOperatorOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	op := exec.Command(bin, append([]string{"--kubeconfig=" + kubeconfig, "--namespace=" + ns, "--metrics-bind-address=0"}, reconcileLogArgs...)...)
	op.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // the operator holds its own descriptor
	op.Stdout, op.Stderr = f, f
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-op.Process.Pid, syscall.SIGKILL)
		_ = op.Wait()
		if b, err := os.ReadFile(logFile); t.Failed() && err == nil {
			t.Logf("widget-operator output (tail):\n%s", b[max(0, len(b)-8<<10):])
		}
	})
	return op
}

func clientFor(t *testing.T, kubeconfig string) dynamic.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("the printed kubeconfig: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// assertNotListening fails unless nothing listens any more at server (host:port).
func assertNotListening(t *testing.T, server string) {
	t.Helper()
	conn, err := net.Dial("tcp", server)
	if err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after reenact ended", server)
	}
}

// Bad input of --control-plane: one line, exit 1.
func TestReenactControlPlaneBadInput(t *testing.T) {
	c := cluster
	rec := filepath.Join("..", "..", "pkg", "replay", "testdata", "configmaps.ndjson")
	empty := t.TempDir()
	t.Run("no binaries", func(t *testing.T) {
		p := c.RunPluginWith(t, context.Background(), []string{"KUBEBUILDER_ASSETS=", "KUBECTL_INFORMER_CACHE=" + empty},
			"reenact", rec, "--control-plane")
		wantOneLine(t, p, "--control-plane: no etcd, kube-apiserver found (looked in $KUBEBUILDER_ASSETS, "+empty+"/testcluster/*); build them with 'make testcluster'")
	})
	t.Run("assets without them", func(t *testing.T) {
		runFails(t, c, "--control-plane: no etcd in "+empty, rec, "--control-plane", "--control-plane-assets", empty)
	})
	t.Run("with --context", func(t *testing.T) {
		runFails(t, c, "--control-plane and --context are mutually exclusive", rec, "--control-plane", "--context", "x")
	})
}

// serverOf is host:port of the kubeconfig's server.
func serverOf(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
