package testenv_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuiltPlugin()
	os.Exit(code)
}

func TestCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := testenv.StartT(t, testenv.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{testenv.WidgetCRD()}})
	for _, exe := range []string{"kube-apiserver", "etcd"} {
		if c.ServerPID(exe) == 0 {
			t.Errorf("ServerPID(%q) found no process", exe)
		}
	}

	if _, err := c.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Kubectl(ctx, "get", "cm", "-n", "default")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "hello") {
		t.Fatalf("kubectl get cm does not list hello:\n%s", out)
	}

	if _, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace("default").Create(ctx, testenv.Widget{Name: "w1", Size: 3, Color: "red"}.Object(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err = c.Kubectl(ctx, "get", "wdg", "-n", "default")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "w1") || !strings.Contains(string(out), "red") {
		t.Fatalf("kubectl get wdg:\n%s", out)
	}

	t.Run("RunPlugin", func(t *testing.T) { testRunPlugin(t, ctx, c) })
}

// testRunPlugin checks the plugin plumbing (kubectl plugin lookup, --kubeconfig, line
// streaming, AwaitJSON, signals, exit codes) with a stand-in kubectl-informer script.
func testRunPlugin(t *testing.T, ctx context.Context, c *testenv.Cluster) {
	dir := t.TempDir()
	script := `#!/bin/sh
printf '{"args":"%s","kubeconfig":"%s"}\n' "$*" "$KUBECONFIG"
echo "not json"
trap 'echo "{\"event\":\"bye\"}"; exit 3' INT
i=0
while :; do i=$((i+1)); echo "{\"n\":$i}"; sleep 0.1; done
`
	if err := os.WriteFile(filepath.Join(dir, testenv.PluginName), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	saved := c.PluginDir
	c.PluginDir = dir
	defer func() { c.PluginDir = saved }()

	p := c.RunPlugin(t, ctx, "watch", "deployments", "-n", "demo")
	first := p.AwaitJSON(t, 30*time.Second, nil)
	want := "watch deployments -n demo --kubeconfig=" + c.KubeconfigPath
	if first["args"] != want || first["kubeconfig"] != c.KubeconfigPath {
		t.Fatalf("plugin got %v, want args %q", first, want)
	}
	p.AwaitJSON(t, 30*time.Second, func(m map[string]any) bool { return m["n"] == float64(3) })
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.AwaitJSON(t, 30*time.Second, func(m map[string]any) bool { return m["event"] == "bye" })
	if code, err := p.Wait(); code != 3 || err != nil {
		t.Fatalf("exit %d, %v; want 3", code, err)
	}
	all := p.All()
	if len(all) < 5 || string(all[1]) != "not json" {
		t.Fatalf("lines: %q", all)
	}
	var n int
	for range p.Lines() {
		n++
	}
	if n != len(all) {
		t.Fatalf("Lines streamed %d lines, All has %d", n, len(all))
	}
}

func TestSecondAPIServerAndRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := testenv.StartT(t, testenv.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{testenv.WidgetCRD()}})

	second, err := c.StartSecondAPIServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second.URL() == c.APIServerURL() {
		t.Fatalf("second API server on the same URL %s", second.URL())
	}
	// Write through the second API server.
	if _, err := second.Clientset.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "via-second"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Dynamic.Resource(testenv.WidgetGVR).Namespace("default").Create(ctx, testenv.Widget{Name: "w2", Size: 1, Color: "blue"}.Object(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := c.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", hostPort(t, c.APIServerURL()), time.Second); err == nil {
		t.Fatal("first API server still accepts connections after StopAPIServer")
	}
	// The second keeps serving while the first is down.
	if _, err := second.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "via-second", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}

	// Read through the first, with the clients and kubeconfig made before the restart.
	if _, err := c.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "via-second", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := c.Kubectl(ctx, "get", "cm", "via-second", "-n", "default", "-o", "name")
	if err != nil || strings.TrimSpace(string(out)) != "configmap/via-second" {
		t.Fatalf("kubectl get cm via-second: %q, %v", out, err)
	}
	w, err := c.Dynamic.Resource(testenv.WidgetGVR).Namespace("default").Get(ctx, "w2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(w.Object, "spec", "color"); color != "blue" {
		t.Fatalf("w2 color %q", color)
	}
	out, err = c.Kubectl(ctx, "get", "wdg", "w2", "-n", "default", "-o", "name")
	if err != nil || strings.TrimSpace(string(out)) != "widget.example.com/w2" {
		t.Fatalf("kubectl get wdg w2: %q, %v", out, err)
	}

	// Stop stops everything, by process: no port answers any more.
	addrs := []string{hostPort(t, c.APIServerURL()), hostPort(t, second.URL()), hostPort(t, c.EtcdURL())}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if conn, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Stop", a)
		}
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for _, d := range []string{c.Dir, c.Env.WebhookInstallOptions.LocalServingCertDir} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("directory %s not removed: %v", d, err)
		}
	}
}

func hostPort(t *testing.T, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestWatchdog starts a cluster in a child test process that exits without Stop, and checks
// that the watchdog kills etcd and kube-apiserver and removes the directories.
func TestWatchdog(t *testing.T) {
	if os.Getenv("TESTENV_CRASH_HELPER") == "1" {
		c, err := testenv.Start(context.Background(), testenv.Options{})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(2)
		}
		fmt.Println(c.Dir, c.Env.WebhookInstallOptions.LocalServingCertDir, hostPort(t, c.APIServerURL()), hostPort(t, c.EtcdURL()))
		os.Exit(1) // no Stop
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWatchdog$")
	cmd.Env = append(os.Environ(), "TESTENV_CRASH_HELPER=1")
	out, _ := cmd.Output()
	f := strings.Fields(string(out))
	if len(f) != 4 || f[0] == "ERROR" {
		t.Fatalf("helper: %q", out)
	}
	dirs, addrs := f[:2], f[2:]
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, a := range addrs {
			if conn, err := net.DialTimeout("tcp", a, time.Second); err == nil {
				conn.Close()
				return false, nil
			}
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("after the helper died, %v still listen or %v still exist: %v", addrs, dirs, err)
	}
}

// The operator's output, written in pieces, is the kubelet's CRI log format line by line.
func TestCRILogWriter(t *testing.T) {
	var b strings.Builder
	w := testenv.NewCRILogWriter(&b)
	for _, s := range []string{`{"msg":"a"}` + "\n" + `{"msg":`, `"b"}`, "\n", "unfinished"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (the unfinished one held):\n%s", len(lines), b.String())
	}
	for i, want := range []string{`{"msg":"a"}`, `{"msg":"b"}`} {
		ts, rest, _ := strings.Cut(lines[i], " ")
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || rest != "stdout F "+want {
			t.Errorf("line %q: want TIME stdout F %s", lines[i], want)
		}
	}
}
