package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// userKubeconfig writes a kubeconfig for a user with no groups (so no permissions but discovery).
func userKubeconfig(t *testing.T, c *testenv.Cluster, name string) string {
	t.Helper()
	u, err := c.Env.ControlPlane.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := u.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// grantReadConfigMaps lets user list and watch (only) config maps in ns.
func grantReadConfigMaps(t *testing.T, c *testenv.Cluster, ns, user string) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Clientset.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-cm"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-cm"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-cm"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// A forbidden initial list ends the run with the server's words, the verb, resource and
// namespace, and the kubectl auth can-i command that checks it.
func TestForbiddenInitialList(t *testing.T) {
	ns := newNamespace(t, cluster)
	kc := userKubeconfig(t, cluster, "nobody")
	r := runPlugin(t, cluster, "watch", "cm", "-n", ns, "--kubeconfig", kc)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"in namespace \"" + ns + "\": configmaps is forbidden",
		`User "nobody" cannot`,
		"kubectl auth can-i list configmaps -n " + ns,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("stderr is more than one line:\n%s", r.stderr)
	}
}

// A read-only user (get, list, watch) is all the plugin needs: it never writes to the cluster.
func TestReadOnlyUserIsEnough(t *testing.T) {
	ns := newNamespace(t, cluster)
	kc := userKubeconfig(t, cluster, "reader")
	grantReadConfigMaps(t, cluster, ns, "reader")
	createConfigMaps(t, cluster.Clientset, ns, "a")
	// Awaited, not expected within a --timeout: a loaded machine is slow.
	p := cluster.RunPluginAs(t, context.Background(), kc, "watch", "cm", "-n", ns, "-o", "json", "--workers", "2", "--fail-rate", "0.5")
	p.AwaitSeen(t, await, "the configmap a", is("Added", "a"))
	p.AwaitSeen(t, await, "the Synced line", is("Synced", ""))
	p.Stop(t)
}

// Permission revoked mid-run: Error lines while the informer retries with backoff, then a
// Recovered line when it is granted again, and the watch goes on.
func TestPermissionRevokedMidRun(t *testing.T) {
	t.Parallel() // a control plane of its own (docs/testcluster.md, "Parallel tests")
	ctx := context.Background()
	c := testenv.StartT(t, testenv.Options{})
	c.PluginDir = cluster.PluginDir
	ns := newNamespace(t, c)
	kc := userKubeconfig(t, c, "limited")
	grantReadConfigMaps(t, c, ns, "limited")
	createConfigMaps(t, c.Clientset, ns, "a")
	p := c.RunPluginAs(t, ctx, kc, "watch", "cm", "-n", ns, "-o", "json")
	p.AwaitJSON(t, await, is("Synced", ""))

	if err := c.Clientset.RbacV1().RoleBindings(ns).Delete(ctx, "read-cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// An open watch outlives a revoked permission; a restarted server makes the informer ask again.
	if err := c.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	e := p.AwaitJSON(t, await, func(m map[string]any) bool { return m["type"] == "Error" && m["reason"] == "Forbidden" })
	if !strings.Contains(e["message"].(string), `"limited"`) {
		t.Errorf("Error line does not quote the server: %v", e)
	}
	_, err := c.Clientset.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-cm"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-cm"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "limited"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.AwaitJSON(t, 3*await, is("Recovered", ""))
	// The attempt that worked came after a failed one: how long after, as observed.
	if b, _ := r["backoffMs"].(float64); b <= 0 {
		t.Errorf("Recovered line without the backoff before it: %v", r)
	}
	createConfigMaps(t, c.Clientset, ns, "after")
	p.AwaitJSON(t, await, is("Added", "after"))
	select {
	case <-p.Done():
		t.Fatal("the plugin exited after a mid-run permission error")
	default:
	}
}
