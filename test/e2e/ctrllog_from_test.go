package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// isControllerReconcile matches the widget controller's ControllerReconcile lines of a Widget
// read from a log whose source starts with sourcePrefix.
func isControllerReconcile(name, sourcePrefix string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		src, _ := m["source"].(string)
		return m["type"] == "ControllerReconcile" && m["controller"] == "widget" && m["name"] == name && strings.HasPrefix(src, sourcePrefix)
	}
}

// The widget-operator runs on this machine, its log kept as a kubelet keeps a container's
// (CRI format), and kwok serves that file as the log of the pods of a Deployment on a kwok node,
// its "manager" pods as in a cluster: `watch widgets --controller-logs-from NS/deploy/NAME`
// reads them through the API server's pod log endpoint, and the Widgets' reconciles are
// ControllerReconcile lines naming the pod's log and the events that triggered them. A rollout's
// new pod is read too.
func TestControllerLogsFromDeployment(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	criLog := filepath.Join(t.TempDir(), "manager.log")
	const deploy = "widget-controller-manager"
	pod, _ := operatorPod(t, c, ns, testenv.OperatorOptions{Namespace: ns, InsecureMetrics: true, CRILogFile: criLog,
		Args: []string{"--zap-log-level=5", "--zap-devel=false", "--zap-time-encoding=rfc3339nano"}}, 8443, deploy)
	if err := c.ServeNamespaceLogs(ctx, ns, criLog); err != nil {
		t.Fatal(err)
	}
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "-o", "json", "--controller-logs-from", ns+"/deploy/"+deploy)
	p.AwaitJSON(t, await, is("Synced", ""))
	// kubectl create deployment names the container after the image: manager.
	source := ns + "/pod/" + pod + "/manager"
	for _, name := range []string{"a", "b"} {
		c.CreateWidget(t, testenv.Widget{Namespace: ns, Name: name, Size: 1})
		got := p.AwaitJSON(t, await, func(m map[string]any) bool {
			n, _ := m["triggerCount"].(float64)
			return isControllerReconcile(name, source)(m) && n > 0
		})
		if got["result"] != "ok" || got["reconcileID"] == "" || got["format"] != "zap-json" || got["namespace"] != ns {
			t.Errorf("the reconcile of %s: %v", name, got)
		}
	}
	if n := p.Count(func(m map[string]any) bool { return m["type"] == "Error" }); n != 0 {
		t.Errorf("%d Error lines: %s", n, p.Stderr())
	}

	// A rollout: its new pod's log is read as well (kwok serves it the same file).
	patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"example.com/rollout":"2"}}}}}`)
	if _, err := c.Kubectl(ctx, "patch", "deployment", deploy, "-n", ns, "--type=merge", "-p", string(patch)); err != nil {
		t.Fatal(err)
	}
	got := p.AwaitJSON(t, await, func(m map[string]any) bool {
		src, _ := m["source"].(string)
		return m["type"] == "ControllerReconcile" && strings.HasPrefix(src, ns+"/pod/"+deploy+"-") && src != source
	})
	t.Logf("the rollout's new pod read: %v", got["source"])
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), "controller widget (from its log): ") {
		t.Errorf("exit summary lacks the widget controller's reconciles:\n%s", p.Stderr())
	}
}

// Without get on pods/log, --controller-logs-from says so in one Error line naming the
// permission and how to grant it, and the watch goes on; a workload that does not exist ends
// the run with the server's one line.
func TestControllerLogsFromForbidden(t *testing.T) {
	c := realControlPlane(t)
	ns := newNamespace(t, c)
	ctx := context.Background()
	if err := c.InstallCRD(ctx, testenv.WidgetCRD()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl(ctx, "create", "deployment", "mgr", "-n", ns, "--image=example.com/manager:1"); err != nil {
		t.Fatal(err)
	}
	awaitRunningPods(t, c, ns, 1)
	user := "no-pod-logs-" + ns
	if err := c.ApplyRBAC(ctx, user, []rbacv1.PolicyRule{
		{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rbac := c.Clientset.RbacV1()
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	p := c.RunPlugin(t, ctx, "watch", "widgets", "-n", ns, "--as", user, "-o", "json", "--controller-logs-from", "deploy/mgr", "-v=6")
	isLogError := func(m map[string]any) bool { return m["type"] == "Error" && m["verb"] == "logs" }
	got := p.AwaitJSON(t, await, isLogError)
	msg, _ := got["message"].(string)
	for _, want := range []string{"--controller-logs-from deploy/mgr: ", `User "` + user + `" cannot get resource "pods/log"`, "needs get on pods/log", "--user=" + user} {
		if !strings.Contains(msg, want) {
			t.Errorf("Error line %q lacks %q", msg, want)
		}
	}
	if got["reason"] != "Forbidden" {
		t.Errorf("reason %v, want Forbidden", got["reason"])
	}
	// The stream is retried (1s, 2s, ...): three refused log requests later (counted in client-go's
	// -v=6 request log, not guessed from a sleep), still one line.
	p.AwaitStderr(t, await, "three pod log requests answered 403", func(stderr string) bool {
		n := 0
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "/pods/") && strings.Contains(l, "/log?") && strings.Contains(l, `status="403 Forbidden"`) {
				n++
			}
		}
		return n >= 3
	})
	if n := p.Count(isLogError); n != 1 {
		t.Errorf("%d Error lines of the pod log, want one per streak", n)
	}
	if err := p.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(); code != 0 {
		t.Fatalf("watch exited %d (%v): %s", code, err, p.Stderr())
	}

	r := runPlugin(t, c, "watch", "widgets", "-n", ns, "--controller-logs-from", "deploy/nope", "--timeout", "10s")
	if stderr := strings.TrimSpace(r.stderr); r.code == 0 || strings.Count(stderr, "\n") != 0 || !strings.Contains(stderr, `--controller-logs-from deploy/nope: deployments.apps "nope" not found`) {
		t.Errorf("an unknown workload: exit %d, stderr %q; want one line with the server's words", r.code, r.stderr)
	}
}
