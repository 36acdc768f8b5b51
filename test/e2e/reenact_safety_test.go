package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/testenv"
)

// writeRecording writes lines as a recording (NDJSON) and returns its path.
func writeRecording(t *testing.T, lines []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		j, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "recording.ndjson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// recTime is the n-th second of a recording.
func recTime(n int) string { return fmt.Sprintf("2026-11-27T10:00:%02d.000000000Z", n) }

// hostileRecording is HOSTILE-CASES-2.md's F1 (gen_reenact.py): an initial list holding the
// cluster's real cluster-admin ClusterRoleBinding and kube-system, then a new binding evil to
// cluster-admin for User mallory, a patch of the real binding adding mallory2, a label on
// kube-system, and deletes of namespace victim and ClusterRole precious.
func hostileRecording(t *testing.T, evil, victim, precious string) string {
	t.Helper()
	type res struct{ group, resource, kind string }
	crb := res{"rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding"}
	cr := res{"rbac.authorization.k8s.io", "clusterroles", "ClusterRole"}
	ns := res{"", "namespaces", "Namespace"}
	apiVersion := func(r res) string {
		if r.group == "" {
			return "v1"
		}
		return r.group + "/v1"
	}
	n := 0
	ev := func(typ string, r res, name, rv, old string, initial bool, body map[string]any) map[string]any {
		n++
		md := map[string]any{"name": name, "resourceVersion": rv, "uid": "u-" + name, "creationTimestamp": "2026-11-27T09:00:00Z"}
		if labels, ok := body["labels"]; ok {
			md["labels"] = labels
			delete(body, "labels")
		}
		obj := map[string]any{"apiVersion": apiVersion(r), "kind": r.kind, "metadata": md}
		for k, v := range body {
			obj[k] = v
		}
		delta := map[string]string{"Added": "Added", "Updated": "Updated", "Deleted": "Deleted"}[typ]
		if initial {
			delta = "Replaced"
		}
		line := map[string]any{"time": recTime(n), "type": typ, "group": r.group, "version": "v1", "resource": r.resource, "kind": r.kind,
			"name": name, "resourceVersion": rv, "initialList": initial, "delta": delta, "tombstone": false, "object": obj}
		if old != "" {
			line["oldResourceVersion"] = old
		}
		return line
	}
	roleRef := map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}
	subject := func(kind, name string) map[string]any {
		return map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}
	}
	var resources []any
	for _, r := range []res{crb, cr, ns} {
		resources = append(resources, map[string]any{"group": r.group, "version": "v1", "resource": r.resource, "kind": r.kind, "namespaced": false})
	}
	lines := []map[string]any{
		{"type": "Recording", "formatVersion": 1, "time": recTime(0), "pluginVersion": "dev", "serverVersion": "v1.37.1", "resources": resources, "secretsRedacted": true, "flags": map[string]any{}},
		ev("Added", crb, "cluster-admin", "100", "", true, map[string]any{"roleRef": roleRef, "subjects": []any{subject("Group", "system:masters")}}),
		ev("Added", ns, "kube-system", "101", "", true, map[string]any{"spec": map[string]any{"finalizers": []any{"kubernetes"}}}),
	}
	n++
	lines = append(lines,
		map[string]any{"time": recTime(n), "type": "Synced", "group": crb.group, "version": "v1", "resource": crb.resource, "kind": crb.kind, "resourceVersion": "102", "items": 1, "durationMs": 1},
		ev("Added", crb, evil, "110", "", false, map[string]any{"roleRef": roleRef, "subjects": []any{subject("User", "mallory")}}),
		ev("Updated", crb, "cluster-admin", "111", "100", false, map[string]any{"roleRef": roleRef, "subjects": []any{subject("Group", "system:masters"), subject("User", "mallory2")}}),
		ev("Updated", ns, "kube-system", "112", "101", false, map[string]any{"labels": map[string]any{"pwned": "by-reenact"}, "spec": map[string]any{"finalizers": []any{"kubernetes"}}}),
		ev("Deleted", ns, victim, "113", "", false, map[string]any{}),
		ev("Deleted", cr, precious, "114", "", false, map[string]any{"rules": []any{}}),
	)
	return writeRecording(t, lines)
}

// clusterState is what the hostile recording aimed at, as the server has it.
type clusterState struct {
	adminSubjects    []rbacv1.Subject
	adminLabels      map[string]string
	kubeSystemLabels map[string]string
	victimPhase      corev1.NamespacePhase
	keepData         map[string]string
	precious         bool
}

func readClusterState(t *testing.T, c *testenv.Cluster, victim, precious string) clusterState {
	t.Helper()
	ctx := context.Background()
	var s clusterState
	admin, err := c.Clientset.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.adminSubjects, s.adminLabels = admin.Subjects, admin.Labels
	ks, err := c.Clientset.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.kubeSystemLabels = ks.Labels
	if v, err := c.Clientset.CoreV1().Namespaces().Get(ctx, victim, metav1.GetOptions{}); err == nil {
		s.victimPhase = v.Status.Phase
	}
	if cm, err := c.Clientset.CoreV1().ConfigMaps(victim).Get(ctx, "keep", metav1.GetOptions{}); err == nil {
		s.keepData = cm.Data
	}
	_, err = c.Clientset.RbacV1().ClusterRoles().Get(ctx, precious, metav1.GetOptions{})
	s.precious = err == nil
	return s
}

// wantLinesBefore fails unless every line of want is a line of stderr, each before the first
// line holding before.
func wantLinesBefore(t *testing.T, stderr string, want []string, before string) {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	end := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, before) })
	if end < 0 {
		t.Errorf("stderr lacks %q:\n%s", before, stderr)
		end = len(lines)
	}
	for _, w := range want {
		if i := slices.Index(lines, w); i < 0 || i > end {
			t.Errorf("stderr lacks the line %q before %q:\n%s", w, before, stderr)
		}
	}
}

// F1 of the second hostile run: a recording that grants cluster-admin, patches the real
// cluster-admin binding, labels kube-system and deletes a namespace and a ClusterRole it never
// made. reenact writes none of it: --dry-run says so and writes nothing; the run refuses each
// write in one line before anything is written and exits 1; with every flag that widens the
// rule it creates its own binding only, still never touching what it did not create or
// kube-system, and --cleanup deletes that binding alone.
func TestReenactRefusesEscalation(t *testing.T) {
	c := cluster
	ctx := context.Background()
	kctx := kubeContext(t, c)
	victim := newNamespace(t, c)
	if _, err := c.Clientset.CoreV1().ConfigMaps(victim).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	precious, evil := "precious-"+victim, "evil-admin-"+victim
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: precious}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if _, err := c.Clientset.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Clientset.RbacV1().ClusterRoles().Delete(context.Background(), precious, metav1.DeleteOptions{})
	})
	t.Cleanup(func() {
		_ = c.Clientset.RbacV1().ClusterRoleBindings().Delete(context.Background(), evil, metav1.DeleteOptions{})
	})
	before := readClusterState(t, c, victim, precious)
	if before.victimPhase != corev1.NamespaceActive || !before.precious || before.keepData["a"] != "b" {
		t.Fatalf("the setup: %+v", before)
	}
	rec := hostileRecording(t, evil, victim, precious)
	unchanged := func(when string) {
		t.Helper()
		if d := cmp.Diff(before, readClusterState(t, c, victim, precious), cmp.AllowUnexported(clusterState{})); d != "" {
			t.Errorf("%s: the cluster changed (-before +after):\n%s", when, d)
		}
	}
	evilBinding := func() (*rbacv1.ClusterRoleBinding, error) {
		return c.Clientset.RbacV1().ClusterRoleBindings().Get(ctx, evil, metav1.GetOptions{})
	}
	const crbs = "clusterrolebindings.rbac.authorization.k8s.io"
	refusedOnce := []string{
		"reenact: refused create " + crbs + " cluster-admin as kubectl-informer-reenact: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it",
		"reenact: refused create namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
		"reenact: refused create " + crbs + " " + evil + " as kubectl-informer-reenact: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it",
		"reenact: refused update " + crbs + " cluster-admin as kubectl-informer-reenact: cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterrolebindings and --allow-privileged-kinds allows it",
		"reenact: refused update namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
		"reenact: refused delete namespaces " + victim + ": cluster-scoped: --allow-cluster-scoped=namespaces allows it",
		"reenact: refused delete clusterroles.rbac.authorization.k8s.io " + precious + ": cluster-scoped and a privileged kind (RBAC, admission, CRD or APIService): --allow-cluster-scoped=clusterroles and --allow-privileged-kinds allows it",
	}

	t.Run("dry run", func(t *testing.T) {
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--speed", "0", "--dry-run", "--name", "dry")
		if code, err := p.Wait(); err != nil || code != 0 {
			t.Fatalf("exit %d, %v; want 0", code, err)
		}
		var refuse []string
		for _, l := range p.Strings() {
			if strings.HasPrefix(l, "refuse ") {
				refuse = append(refuse, "reenact: refused "+strings.TrimPrefix(l, "refuse "))
			}
		}
		if d := cmp.Diff(refusedOnce, refuse); d != "" {
			t.Errorf("the plan's refusals (-want +got):\n%s", d)
		}
		if !slices.Contains(p.Strings(), "reenact (dry run): 0 writes, 0 left out (--skip-manager), 7 refused, 0 not written (the target has it already, or not at all); nothing was written") {
			t.Errorf("stdout: %q", p.Strings())
		}
		unchanged("after --dry-run")
		if _, err := evilBinding(); !apierrors.IsNotFound(err) {
			t.Errorf("ClusterRoleBinding %s: %v, want none", evil, err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--speed", "0", "--settle", "0s", "--name", "refused")
		if code, err := p.Wait(); err != nil || code != 1 {
			t.Fatalf("exit %d, %v; want 1", code, err)
		}
		stderr := p.Stderr()
		wantLinesBefore(t, stderr, refusedOnce, "reenact: reenactment refused into no namespace")
		if n := strings.Count(stderr, "reenact: refused "); n != len(refusedOnce)+1 { // and the count
			t.Errorf("%d refusal lines, want each once and the count:\n%s", n, stderr)
		}
		for _, want := range []string{
			"reenact: played 0 initial objects, 0 creates, 0 updates, 0 deletes\n",
			"reenact: refused 7 recorded writes (each stated above)\n",
			"error: reenact refused 7 recorded writes (each stated above, with the flag that allows it where one does)\n",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		unchanged("after the run")
		if _, err := evilBinding(); !apierrors.IsNotFound(err) {
			t.Errorf("ClusterRoleBinding %s: %v, want none", evil, err)
		}
	})

	t.Run("every flag", func(t *testing.T) {
		p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--speed", "0", "--settle", "0s", "--name", "widened",
			"--allow-cluster-scoped", "clusterrolebindings,clusterroles,namespaces", "--allow-privileged-kinds")
		if code, err := p.Wait(); err != nil || code != 1 {
			t.Fatalf("exit %d, %v; want 1", code, err)
		}
		stderr := p.Stderr()
		notOwned := ": not created by this reenactment (the object on the server does not carry " + reenactLabel + "=widened)"
		wantLinesBefore(t, stderr, []string{
			"reenact: allowed by --allow-cluster-scoped: create " + crbs + " cluster-admin as kubectl-informer-reenact",
			"reenact: allowed by --allow-cluster-scoped: create " + crbs + " " + evil + " as kubectl-informer-reenact",
			"reenact: refused create namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
			"reenact: refused update namespaces kube-system as kubectl-informer-reenact: namespace kube-system is never written",
		}, "reenact: reenactment widened into no namespace")
		for _, want := range []string{
			"reenact: refused update " + crbs + " cluster-admin as kubectl-informer-reenact" + notOwned,
			"reenact: refused delete namespaces " + victim + notOwned,
			"reenact: refused delete clusterroles.rbac.authorization.k8s.io " + precious + notOwned,
			"reenact: played 0 initial objects, 1 creates, 0 updates, 0 deletes",
			"reenact: refused 5 recorded writes (each stated above)",
			"error: reenact refused 5 recorded writes",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		unchanged("after the run with every flag")
		b, err := evilBinding()
		if err != nil || b.Labels[reenactLabel] != "widened" {
			t.Fatalf("ClusterRoleBinding %s: %v, %v; want it made, labelled", evil, b, err)
		}

		// --cleanup deletes what carries the label: the binding it made, nothing else.
		cl := c.RunPlugin(t, ctx, "reenact", rec, "--context", kctx, "--cleanup", "--name", "widened")
		if code, err := cl.Wait(); err != nil || code != 0 {
			t.Fatalf("--cleanup: exit %d, %v; stderr:\n%s", code, err, cl.Stderr())
		}
		if !strings.Contains(cl.Stderr(), "reenact: deleted 1 objects and namespaces") {
			t.Errorf("--cleanup said: %s", cl.Stderr())
		}
		awaitGone(t, func() error { _, err := evilBinding(); return err }, "ClusterRoleBinding "+evil)
		unchanged("after --cleanup")
	})
}

// F3 of the second hostile run: a write the API server refuses (here a field manager with
// control characters) ends the run with exit 1 and the server's error, escaped, instead of
// waiting forever on the watch. The plugin's --timeout is far beyond the test's wait, so only
// the refused write can end it in time.
func TestReenactRefusedWriteEnds(t *testing.T) {
	c := cluster
	ctx := context.Background()
	const esc = "\x1b]52;c;cHduZWQ=\a\x1b]0;PWNTITLE\a"
	cm := func(name, rv, manager string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"v": "1"},
			"metadata": map[string]any{"name": name, "namespace": "demo", "resourceVersion": rv, "uid": "u-" + name,
				"managedFields": []any{map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}},
					"manager": manager, "operation": "Update", "time": "2026-11-27T10:00:01Z"}}}}
	}
	line := func(n int, typ, name, rv string, initial bool, delta string, obj map[string]any) map[string]any {
		return map[string]any{"group": "", "version": "v1", "resource": "configmaps", "kind": "ConfigMap", "time": recTime(n), "type": typ,
			"namespace": "demo", "name": name, "resourceVersion": rv, "initialList": initial, "delta": delta, "tombstone": false, "object": obj}
	}
	rec := writeRecording(t, []map[string]any{
		{"type": "Recording", "formatVersion": 1, "time": recTime(0), "pluginVersion": "dev", "serverVersion": "v1.37.1", "secretsRedacted": true, "flags": map[string]any{},
			"resources": []any{map[string]any{"group": "", "version": "v1", "resource": "configmaps", "kind": "ConfigMap", "namespaced": true}}},
		line(1, "Added", "a", "10", true, "Replaced", cm("a", "10", "ok-mgr")),
		{"group": "", "version": "v1", "resource": "configmaps", "kind": "ConfigMap", "time": recTime(2), "type": "Synced", "resourceVersion": "11", "items": 1, "durationMs": 1},
		line(3, "Added", "b", "12", false, "Added", cm("b", "12", esc+"mgr")),
	})
	target := newNamespace(t, c) + "-f3"
	p := c.RunPlugin(t, ctx, "reenact", rec, "--context", kubeContext(t, c), "--namespace-map", "demo="+target,
		"--speed", "0", "--settle", "10m", "--timeout", "20m", "--name", "f3")
	select {
	case <-p.Done():
	case <-time.After(await):
		t.Fatalf("reenact still runs %s after the server refused a write (stderr so far:\n%s)", await, p.Stderr())
	}
	if code, err := p.Wait(); err != nil || code != 1 {
		t.Fatalf("exit %d, %v; want 1", code, err)
	}
	stderr := p.Stderr()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "error: creating configmaps "+target+"/b: ") || !strings.Contains(last, "fieldManager") {
		t.Errorf("last stderr line %q, want the server's refusal of the create of b", last)
	}
	if strings.ContainsAny(stderr, "\x1b\a") {
		t.Errorf("raw control characters on stderr: %q", stderr)
	}
	if !strings.Contains(stderr, "reenact: played 1 initial objects, 0 creates, 0 updates, 0 deletes") {
		t.Errorf("stderr: %s", stderr)
	}
	if _, err := c.Clientset.CoreV1().ConfigMaps(target).Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Errorf("the initial ConfigMap a: %v", err)
	}
}
